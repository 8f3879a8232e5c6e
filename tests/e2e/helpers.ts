// Shared helpers for end-to-end tests: run the built CLI, read a run's ledger, check a branch.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LedgerEntry } from '../../src/core/ledger/entry.js';
import { parseLedgerLine } from '../../src/core/ledger/line-reader.js';

export const CLI = join(import.meta.dirname, '..', '..', 'dist', 'bin', 'acia.js');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the built CLI without a TTY and with a scrubbed environment. */
export function acia(args: string[], opts: { cwd?: string; env?: Record<string, string>; input?: string; timeoutMs?: number } = {}): CliResult {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', XDG_STATE_HOME: process.env.XDG_STATE_HOME ?? '', LANG: 'C.UTF-8', NO_COLOR: '1', ...opts.env };
  const r = spawnSync(process.execPath, [CLI, ...args], {
    cwd: opts.cwd ?? process.cwd(),
    env,
    input: opts.input ?? '',
    encoding: 'utf8',
    timeout: opts.timeoutMs ?? 120_000,
  });
  return { code: r.status ?? (r.signal ? 128 : 1), stdout: r.stdout, stderr: r.stderr };
}

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `acia-${prefix}-`));
}

export function onlyRunId(repo: string): string {
  const runs = readdirSync(join(repo, '.acia', 'runs'));
  if (runs.length !== 1) throw new Error(`expected one run in ${repo}, found ${runs.length}`);
  return runs[0]!;
}

export function ledgerOf(repo: string, runId: string): LedgerEntry[] {
  return readFileSync(join(repo, '.acia', 'runs', runId, 'ledger.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l, i) => parseLedgerLine(l, `ledger of ${runId}:${i + 1}`));
}

/** True when `want` appears in `seq` in order (other items may sit between). */
export function inOrder(seq: readonly string[], want: readonly string[]): boolean {
  let i = 0;
  for (const s of seq) if (s === want[i]) i++;
  return i === want.length;
}

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();
}

/** Runs the sample repo's tests on a branch, in a throwaway worktree. */
export function testsPassOn(repo: string, branch: string): boolean {
  const wt = join(tempDir('check'), 'wt');
  git(repo, 'worktree', 'add', '-q', '--detach', wt, branch);
  const r = spawnSync(process.execPath, ['run-tests.js'], { cwd: wt, encoding: 'utf8' });
  git(repo, 'worktree', 'remove', '--force', wt);
  return r.status === 0;
}
