// One long-lived `git cat-file --batch` for a run: reading a ref, a commit or a tree costs a round trip on
// a pipe instead of a git process (about 5 ms of spawn and start-up each). cat-file applies no filters and
// no drivers without --filters/--textconv, and runs with the same hardened config and scrubbed env as
// every other host git call.
import { spawn, type ChildProcess } from 'node:child_process';
import { Socket } from 'node:net';
import { AciaError } from '../errors.js';
import { SAFE_GIT_CONFIG, gitEnv } from './safe-git.js';
import { resolve } from 'node:path';
import { launcherCwd } from '../contain/host-process.js';

export interface GitObject {
  sha: string;
  type: string;
  content: Buffer;
}

interface Pending {
  resolve: (o: GitObject | null) => void;
  reject: (e: Error) => void;
}

/** Reads objects by name (a sha, `refs/heads/x`, `<sha>^{tree}`) in `repo`; started on first use. */
export class GitBatchReader {
  private child: ChildProcess | null = null;
  private buf: Buffer = Buffer.alloc(0);
  private readonly pending: Pending[] = [];

  constructor(private readonly repo: string) {}

  /** The object `name` names, or null when git says it is missing (or the name is ambiguous). */
  read(name: string): Promise<GitObject | null> {
    // A newline would start a second request: no git object name holds one.
    if (name.includes('\n') || name === '') return Promise.reject(new AciaError('INTERNAL', `bad object name ${JSON.stringify(name)}`));
    const child = this.start();
    return new Promise<GitObject | null>((resolve, reject) => {
      this.pending.push({ resolve, reject });
      this.hold(child, true);
      child.stdin?.write(`${name}\n`);
    });
  }

  /** Ends the process; later reads start a new one. */
  close(): void {
    const child = this.child;
    this.child = null;
    if (child === null) return;
    child.stdin?.end();
    this.fail(child, new AciaError('INTERNAL', 'git cat-file closed'));
  }

  private start(): ChildProcess {
    if (this.child !== null) return this.child;
    this.buf = Buffer.alloc(0);
    // `-C`, not the repository as cwd: the launcher starts in an empty directory (core/contain/host-process).
    const args = ['-C', resolve(this.repo), '--no-pager', ...SAFE_GIT_CONFIG.flatMap((c) => ['-c', c]), 'cat-file', '--batch'];
    const child = spawn('git', args, { cwd: launcherCwd(), env: gitEnv(), stdio: ['pipe', 'pipe', 'ignore'] });
    child.stdout?.on('data', (d: Buffer) => {
      if (this.child === child) this.onData(d);
    });
    child.on('error', (e) => this.fail(child, e));
    child.on('close', () => this.fail(child, new AciaError('INTERNAL', `git cat-file --batch ended in ${this.repo}`)));
    child.stdin?.on('error', (e) => this.fail(child, e));
    this.child = child;
    this.hold(child, false);
    return child;
  }

  /** Referenced only while a read waits: an idle reader never keeps the process alive at exit. */
  private hold(child: ChildProcess, on: boolean): void {
    // A pipe's stream is a net.Socket, which can be (un)referenced; the type only promises a Readable.
    const stdout = child.stdout instanceof Socket ? child.stdout : null;
    if (on) {
      child.ref();
      stdout?.ref();
    } else {
      child.unref();
      stdout?.unref();
    }
  }

  /** Fails the reads waiting on `child`; a process already replaced (closed, restarted) fails nothing. */
  private fail(child: ChildProcess, e: Error): void {
    if (this.child !== child && this.child !== null) return;
    this.child = null;
    this.buf = Buffer.alloc(0);
    for (const p of this.pending.splice(0)) p.reject(e);
  }

  private onData(d: Buffer): void {
    this.buf = this.buf.length === 0 ? d : Buffer.concat([this.buf, d]);
    this.drain();
    if (this.pending.length === 0 && this.child !== null) this.hold(this.child, false);
  }

  private drain(): void {
    for (;;) {
      const nl = this.buf.indexOf(10);
      if (nl < 0) return;
      const header = this.buf.subarray(0, nl).toString('latin1');
      const next = this.pending[0];
      if (next === undefined) {
        if (this.child) this.fail(this.child, new AciaError('INTERNAL', `git cat-file said ${header} unasked`));
        return;
      }
      if (header.endsWith(' missing') || header.endsWith(' ambiguous')) {
        this.buf = this.buf.subarray(nl + 1);
        this.pending.shift();
        next.resolve(null);
        continue;
      }
      const m = /^([0-9a-f]{40,64}) (\w+) (\d+)$/.exec(header);
      if (!m) {
        if (this.child) this.fail(this.child, new AciaError('INTERNAL', `git cat-file said ${header}`));
        return;
      }
      const size = Number(m[3]);
      // The content is followed by a newline of its own.
      if (this.buf.length < nl + 1 + size + 1) return;
      const content = Buffer.from(this.buf.subarray(nl + 1, nl + 1 + size));
      this.buf = this.buf.subarray(nl + 1 + size + 1);
      this.pending.shift();
      next.resolve({ sha: m[1]!, type: m[2]!, content });
    }
  }
}
