// One repository's runs for `acia ui`. The repository may be a hostile clone: its `.acia/runs` and
// every run id under it are names someone else chose. Every path the ui server touches under `.acia/`
// is made here, from a run id checked against RunId, through the no-follow readers (a symlinked run
// directory, ledger or blob is refused, never followed) — so when the containment module lands, this
// file is the one to switch to it.
import { closeSync, constants, fstatSync, openSync, readSync, readdirSync, watch, type FSWatcher } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { LedgerEntry } from '../core/acm/contracts.js';
import { RunId, systemClock } from '../core/acm/ids.js';
import { AciaError, errorMessage } from '../core/errors.js';
import { checkRealDir, readRegularFile } from '../core/fs/no-follow.js';
import { readAnchor } from '../core/ledger/anchor.js';
import { LEDGER_FILE } from '../core/ledger/file-ledger.js';
import { parseLedgerLine } from '../core/ledger/line-reader.js';
import { runDirOf, runsDir } from '../core/ledger/manifest.js';
import { verifyRun } from '../core/ledger/verify.js';
import { Git } from '../team/git.js';
import { answerWithResume } from './local-answer.js';
import { isCommitName, type AnswerOutcome, type Cursor, type RunStore, type VerifyStatus } from './store.js';

const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
/** Read at most this much of a ledger per call; the hub calls again for the rest. */
const CHUNK = 8 * 1024 * 1024;
const MAX_DIFF = 2 * 1024 * 1024;

export function localStore(repo: string, env: NodeJS.ProcessEnv = process.env): RunStore {
  const git = new Git(systemClock);
  const runDir = (runId: string): string => {
    if (!RunId.safeParse(runId).success) throw new AciaError('RUN_NOT_FOUND', `${runId} is not a run id`);
    const dir = runDirOf(repo, runId);
    if (!checkRealDir(repo, dir)) throw new AciaError('RUN_NOT_FOUND', `no run ${runId} in ${repo}`);
    return dir;
  };

  const listRunIds = (): string[] => {
    const dir = runsDir(repo);
    if (!checkRealDir(repo, dir)) return [];
    return readdirSync(dir, { withFileTypes: true }).filter((d) => d.isDirectory() && RunId.safeParse(d.name).success).map((d) => d.name).sort();
  };

  return {
    label: repo,
    kind: 'repo',
    listRunIds: () => Promise.resolve(listRunIds()),

    read(runId, from, until) {
      return Promise.resolve(readLines(join(runDir(runId), LEDGER_FILE), from, until));
    },

    watch(changed) {
      // inotify on the runs directory (a run starts) and on each run directory (its ledger grows). A
      // directory watch can miss what happens before it is set up: a slow sweep of ledger sizes covers that.
      const watchers = new Map<string, FSWatcher>();
      const sizes = new Map<string, number>();
      const watchRun = (id: string): void => {
        if (watchers.has(id)) return;
        try {
          const w = watch(runDir(id), { persistent: false }, () => changed(id));
          w.on('error', () => undefined);
          watchers.set(id, w);
        } catch {
          // A run directory that is not a real directory is not shown; nothing to watch.
        }
      };
      let top: FSWatcher | null = null;
      const watchTop = (): void => {
        if (top !== null || !checkRealDir(repo, runsDir(repo))) return;
        try {
          top = watch(runsDir(repo), { persistent: false }, () => changed(null));
          top.on('error', () => undefined);
        } catch {
          top = null;
        }
      };
      const sweep = (): void => {
        watchTop();
        for (const id of listRunIds()) {
          watchRun(id);
          const size = ledgerSize(repo, id);
          if (size !== sizes.get(id)) {
            if (sizes.has(id)) changed(id);
            sizes.set(id, size);
          }
        }
      };
      const safeSweep = (): void => {
        try {
          sweep();
        } catch {
          // An unreadable runs directory shows as no runs; the next sweep tries again.
        }
      };
      safeSweep();
      const timer = setInterval(safeSweep, 2000);
      timer.unref();
      return () => {
        clearInterval(timer);
        top?.close();
        for (const w of watchers.values()) w.close();
      };
    },

    blob(runId, ref, maxBytes) {
      if (!/^sha256:[0-9a-f]{64}$/.test(ref)) return Promise.resolve(null);
      const hex = ref.slice('sha256:'.length);
      const path = join(runDir(runId), 'blobs', hex);
      const bytes = readRegularFile(repo, path);
      if (bytes === null) return Promise.resolve(null);
      // Content addressed: bytes that do not hash to their name were altered after the run wrote them.
      if (createHash('sha256').update(bytes).digest('hex') !== hex) throw new AciaError('LEDGER_CORRUPT', `blob ${ref} of run ${runId} does not match its hash`);
      return Promise.resolve({ bytes: bytes.subarray(0, maxBytes), truncated: bytes.length > maxBytes });
    },

    async verify(runId): Promise<VerifyStatus> {
      const dir = runDir(runId);
      const r = await verifyRun(dir, { anchor: readAnchor(env, dir, runId) });
      return { ok: r.ok, entries: r.entries, problems: r.problems.slice(0, 20) };
    },

    async diff(_runId, base, commit) {
      if ((base !== '' && !isCommitName(base)) || !isCommitName(commit)) return null;
      // safeGit: no external diff, textconv or driver the repository configured runs here. No base: the
      // commit's own change.
      const r = await git.run(repo, ['diff', '--no-color', '--find-renames', base === '' ? `${commit}^..${commit}` : `${base}..${commit}`, '--'], { allowFail: true });
      if (r.exitCode !== 0) return null;
      return r.stdout.length > MAX_DIFF ? `${r.stdout.slice(0, MAX_DIFF)}\n` : r.stdout;
    },

    answer(runId, text, recorded): Promise<AnswerOutcome> {
      runDir(runId);
      return answerWithResume({ repo, runId, text, env, recorded });
    },

    close: () => Promise.resolve(),
  };
}

function ledgerSize(repo: string, runId: string): number {
  try {
    const fd = openSync(join(runDirOf(repo, runId), LEDGER_FILE), READ_FLAGS);
    try {
      return fstatSync(fd).size;
    } finally {
      closeSync(fd);
    }
  } catch {
    return -1;
  }
}

/** Complete lines from `from` on; a last line without its newline is still being written and waits. */
function readLines(path: string, from: Cursor, until?: number): { entries: LedgerEntry[]; cursor: Cursor } {
  let fd: number;
  try {
    fd = openSync(path, READ_FLAGS);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { entries: [], cursor: from };
    if (code === 'ELOOP') throw new AciaError('UNSAFE_REPO', `refusing ${path}: it is a symbolic link`);
    throw new AciaError('LEDGER_IO', `cannot read ${path}: ${errorMessage(e)}`, { cause: e });
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new AciaError('UNSAFE_REPO', `refusing ${path}: it is not a regular file`);
    if (st.size < from.offset) throw new AciaError('LEDGER_CORRUPT', `${path} is shorter than what was read of it`);
    const want = Math.min(st.size - from.offset, CHUNK);
    const buf = Buffer.alloc(want);
    let got = 0;
    while (got < want) {
      const n = readSync(fd, buf, got, want - got, from.offset + got);
      if (n === 0) break;
      got += n;
    }
    const entries: LedgerEntry[] = [];
    let at = 0;
    let seq = from.seq;
    for (let nl = buf.indexOf(0x0a, at); nl !== -1 && nl < got; nl = buf.indexOf(0x0a, at)) {
      if (until !== undefined && seq >= until) break;
      const e = parseLedgerLine(buf.subarray(at, nl).toString('utf8'), `${path}@${from.offset + at}`);
      if (e.seq !== seq) throw new AciaError('LEDGER_CORRUPT', `${path}: seq ${e.seq} where ${seq} was expected`);
      entries.push(e);
      seq++;
      at = nl + 1;
    }
    if (at === 0 && want === CHUNK && entries.length === 0) throw new AciaError('LEDGER_CORRUPT', `${path}: a line longer than ${CHUNK} bytes`);
    return { entries, cursor: { seq, offset: from.offset + at } };
  } finally {
    closeSync(fd);
  }
}
