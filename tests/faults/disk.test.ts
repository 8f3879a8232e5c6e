// Disk faults: an .acia that cannot be written, a disk that fills up mid-run (the ledger's injected fs
// fails after N writes), and a blob altered or lost after the run. Clear one-line errors; nothing
// already written is lost.
import * as nodeFs from 'node:fs/promises';
import { chmodSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { LedgerEntry } from '../../src/core/ledger/entry.js';
import { isAciaError } from '../../src/core/errors.js';
import type { LedgerFs } from '../../src/core/ledger/ledger-fs.js';
import { acia, ledgerOf, tempDir } from '../e2e/helpers.js';
import { faultScript, listRuns, runCli, sampleRepo, sh, TEST_COMMAND, terminalOf, verifyCode } from './harness.js';
import { runWithFakeServer } from './library-run.js';

const isRoot = process.getuid?.() === 0;

/** The real fs, except that every data write after the first `n` fails with ENOSPC (only blob writes with `blobsOnly`). */
function diskFullAfter(n: number, blobsOnly = false): LedgerFs {
  let writes = 0;
  const full = () => Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
  const open = async (...args: Parameters<typeof nodeFs.open>) => {
    const handle = await nodeFs.open(...args);
    return new Proxy(handle, {
      get(target, prop) {
        const value = Reflect.get(target, prop) as unknown;
        if (typeof value !== 'function') return value;
        const fn = value as (...a: unknown[]) => unknown;
        // The ledger appends with write(); the blob store writes whole files with writeFile().
        if (prop !== 'writeFile' && (blobsOnly || prop !== 'write')) return fn.bind(target);
        return (...a: unknown[]) => {
          writes += 1;
          return writes > n ? Promise.reject(full()) : fn.apply(target, a);
        };
      },
    });
  };
  return { ...nodeFs, open };
}

function expectNoRunLeftovers(repo: string): void {
  expect(sh(repo, 'git', 'branch', '--list', 'acia/*', 'acia-tasks/*')).toBe('');
  expect(sh(repo, 'git', 'status', '--porcelain')).toBe('');
}

describe('an .acia that cannot be written', () => {
  it('.acia/runs being a file stops `acia run` before any work with one line naming the directory (exit 2)', () => {
    const repo = sampleRepo('disk-runs-file');
    mkdirSync(join(repo, '.acia'));
    writeFileSync(join(repo, '.acia', 'runs'), 'not a directory\n');
    const r = runCli(repo, faultScript());
    // Something other than a real directory where ACIA keeps its state is refused up front (UNSAFE_REPO).
    expect(r.code, r.stderr).toBe(2);
    const errors = r.stderr.split('\n').filter((l) => l.startsWith('acia: '));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^acia: refusing \S+\/\.acia\/runs: it is not a directory$/);
    expect(r.stderr).toContain('remove the entry');
    expectNoRunLeftovers(repo);
  });

  it('.acia being a file stops `acia run` with a usage error naming it (exit 2)', () => {
    const repo = sampleRepo('disk-acia-file');
    writeFileSync(join(repo, '.acia'), 'not a directory\n');
    const r = runCli(repo, faultScript());
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/^acia: refusing \S+\/\.acia: it is not a directory$/m);
    expect(sh(repo, 'git', 'branch', '--list', 'acia/*')).toBe('');
  });

  // chmod does not stop root, so this one only runs as an ordinary user.
  it.skipIf(isRoot)('a read-only .acia/runs stops `acia run` with one line naming it (exit 1)', () => {
    const repo = sampleRepo('disk-readonly');
    mkdirSync(join(repo, '.acia', 'runs'), { recursive: true });
    chmodSync(join(repo, '.acia', 'runs'), 0o555);
    try {
      const r = runCli(repo, faultScript());
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toMatch(/^acia: cannot create \S+\/\.acia\/runs\/\S+: EACCES/m);
      expectNoRunLeftovers(repo);
    } finally {
      chmodSync(join(repo, '.acia', 'runs'), 0o755);
    }
  });
});

describe('a disk that fills up mid-run', () => {
  async function fillUp(n: number) {
    const repo = sampleRepo('disk-full');
    const acknowledged: LedgerEntry[] = [];
    const error = await runWithFakeServer(repo, faultScript(), { ledgerFs: diskFullAfter(n), onEntry: (e) => acknowledged.push(e) }).then(
      () => null,
      (e: unknown) => e,
    );
    const runId = listRuns(repo)[0]!;
    return { repo, runId, error, acknowledged };
  }

  it.each([3, 12, 25])('after %i writes: one LEDGER_IO error naming ENOSPC, and every acknowledged entry is on disk and verifies', async (n) => {
    const { repo, runId, error, acknowledged } = await fillUp(n);
    expect(isAciaError(error) && error.code).toBe('LEDGER_IO');
    expect((error as Error).message).toMatch(/^cannot (append to|write blob) \S+: ENOSPC: no space left on device/);
    expect((error as Error).message).not.toContain('\n');
    const onDisk = ledgerOf(repo, runId);
    expect(acknowledged.length).toBeGreaterThan(0);
    expect(onDisk.map((e) => e.hash)).toEqual(acknowledged.map((e) => e.hash));
    const v = verifyCode(repo, runId);
    expect(v.code, v.stdout + v.stderr).toBe(0);
    expect(sh(repo, 'git', 'status', '--porcelain')).toBe('');
  });

  it('a blob write failing ends the run with reason error naming ENOSPC (exit 1); the ledger is complete and verifies', async () => {
    const repo = sampleRepo('disk-blob-full');
    const r = await runWithFakeServer(repo, faultScript(), { ledgerFs: diskFullAfter(3, true) });
    expect({ exitCode: r.exitCode, reason: r.result.reason }).toEqual({ exitCode: 1, reason: 'error' });
    expect(r.result.message).toMatch(/cannot write blob \S+: ENOSPC: no space left on device/);
    const { reason, entries } = terminalOf(repo, r.result.runId);
    expect(reason).toBe('error');
    expect(entries.length).toBeGreaterThan(2);
    const v = verifyCode(repo, r.result.runId);
    expect(v.code, v.stdout + v.stderr).toBe(0);
    expect(readdirSync(join(repo, '.acia', 'runs', r.result.runId, 'blobs')).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('once space is back (and the failed process gone), `acia resume` finishes the run with nothing completed twice', async () => {
    const { repo, runId, acknowledged } = await fillUp(12);
    // The CLI process would have exited, leaving a stale lock that resume takes over; in this test the
    // failed run lives in our own (alive) process, so its lock is removed by hand — see the next test.
    rmSync(join(repo, '.acia', 'runs', runId, 'lock'), { force: true });
    const script = join(tempDir('disk-script'), 'script.json');
    writeFileSync(script, JSON.stringify(faultScript()));
    const r = acia(['resume', runId, '--repo', repo, '--model', `scripted:${script}`, '--sandbox', 'off', '--test-command', TEST_COMMAND]);
    expect(r.code, r.stderr).toBe(0);
    const { reason, entries } = terminalOf(repo, runId);
    expect(reason).toBe('succeeded');
    // what was on disk before the failure is still the ledger's prefix
    expect(entries.slice(0, acknowledged.length).map((e) => e.hash)).toEqual(acknowledged.map((e) => e.hash));
    const completed = entries.filter((e) => e.type === 'TASK_COMPLETED').map((e) => (e.data as { taskId: string }).taskId);
    expect(completed.sort()).toEqual(['t1', 't2']);
    expect(verifyCode(repo, runId).code).toBe(0);
  });

  // Regression: finish() used to leak the ledger's lock and handle when RUN_COMPLETED could not be written.
  it('after a failed write the run lock is released, so the same process can resume the run', async () => {
    const { repo, runId } = await fillUp(12);
    expect(readdirSync(join(repo, '.acia', 'runs', runId))).not.toContain('lock');
  });
});

describe('a blob damaged after the run', () => {
  function finishedRun() {
    const repo = sampleRepo('disk-blob');
    const r = runCli(repo, faultScript());
    expect(r.code, r.stderr).toBe(0);
    const runId = r.runIds[0]!;
    // The first model request: stored whole as a blob file (later ones are deltas of it, and responses are inline).
    const call = ledgerOf(repo, runId).find((e) => e.type === 'LLM_CALL')!;
    const ref = (call.data as { requestHash: string }).requestHash;
    return { repo, runId, seq: call.seq, ref, path: join(repo, '.acia', 'runs', runId, 'blobs', ref.slice('sha256:'.length)) };
  }

  it('an altered blob makes `acia verify` exit 1 naming the blob and the entry that refers to it', () => {
    const { repo, runId, seq, ref, path } = finishedRun();
    writeFileSync(path, '{"system":"something ACIA never asked"}');
    const v = verifyCode(repo, runId);
    expect(v.code).toBe(1);
    expect(v.stdout + v.stderr).toContain(`seq ${seq}: blob ${ref} content does not hash to its name`);
  });

  it('a missing blob makes `acia verify` exit 1 naming it', () => {
    const { repo, runId, seq, ref, path } = finishedRun();
    rmSync(path);
    const v = verifyCode(repo, runId);
    expect(v.code).toBe(1);
    expect(v.stdout + v.stderr).toContain(`seq ${seq}: blob ${ref} is missing`);
  });
});
