import { readFileSync, readdirSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../../src/core/acm/canonical-json.js';
import type { StoredLedgerEntry } from '../../../src/core/ledger/entry-shape.js';
import { entryHash } from '../../../src/core/ledger/hash.js';
import { readManifest, writeManifest } from '../../../src/core/ledger/manifest.js';
import { verifyAll, verifyRun } from '../../../src/core/ledger/verify.js';
import { tempDir, writeSampleRun } from '../../helpers/sample-run.js';

async function sample(outcome: 'succeeded' | 'running' = 'succeeded') {
  const repo = tempDir();
  const { runDir, runId } = await writeSampleRun(repo, { outcome });
  const path = join(runDir, 'ledger.jsonl');
  const lines = readFileSync(path, 'utf8').trimEnd().split('\n');
  const write = (ls: string[]) => writeFileSync(path, ls.map((l) => `${l}\n`).join(''));
  return { repo, runDir, runId, lines, write };
}

const rehash = (e: Omit<StoredLedgerEntry, 'hash'> & { hash?: string }): string => {
  const { hash: _old, ...rest } = e;
  return canonicalJson({ ...rest, hash: entryHash(rest) });
};

describe('verifyRun', () => {
  it('accepts an intact finished run', async () => {
    const { runDir, lines } = await sample();
    const report = await verifyRun(runDir);
    expect(report).toMatchObject({ ok: true, entries: lines.length, problems: [] });
    expect(report.head?.seq).toBe(lines.length - 1);
  });

  it('catches an edited value at its seq', async () => {
    const { runDir, lines, write } = await sample();
    lines[5] = lines[5]!.replace('Plan-A runs QA', 'Plan-B runs QA');
    write(lines);
    const report = await verifyRun(runDir);
    expect(report.ok).toBe(false);
    expect(report.problems[0]).toMatchObject({ seq: 5, code: 'HASH_MISMATCH' });
  });

  it('catches a deleted entry', async () => {
    const { runDir, lines, write } = await sample();
    lines.splice(4, 1);
    write(lines);
    const report = await verifyRun(runDir);
    expect(report.problems[0]).toMatchObject({ seq: 5 });
    expect(report.problems.map((p) => p.code)).toEqual(expect.arrayContaining(['SEQ_GAP', 'CHAIN_BROKEN']));
  });

  it('catches swapped entries', async () => {
    const { runDir, lines, write } = await sample();
    [lines[3], lines[4]] = [lines[4]!, lines[3]!];
    write(lines);
    const report = await verifyRun(runDir);
    expect(report.ok).toBe(false);
    expect(report.problems[0]!.seq).toBe(3);
  });

  it('catches an entry re-hashed after an edit: the chain breaks at the next entry', async () => {
    const { runDir, lines, write } = await sample();
    const e = JSON.parse(lines[5]!) as StoredLedgerEntry;
    lines[5] = rehash({ ...e, data: { ...(e.data as object), rationale: 'forged' } });
    write(lines);
    const report = await verifyRun(runDir);
    expect(report.problems[0]).toMatchObject({ seq: 6, code: 'CHAIN_BROKEN' });
  });

  it('catches the last entry re-hashed after an edit through the manifest anchor', async () => {
    const { runDir, lines, write } = await sample();
    const e = JSON.parse(lines.at(-1)!) as StoredLedgerEntry;
    lines[lines.length - 1] = rehash({ ...e, data: { ...(e.data as object), message: 'forged' } });
    write(lines);
    const report = await verifyRun(runDir);
    expect(report.problems).toEqual([expect.objectContaining({ seq: e.seq, code: 'ANCHOR_MISMATCH' })]);
  });

  it('catches a truncated tail of a finished run', async () => {
    const { runDir, lines, write } = await sample();
    write(lines.slice(0, -2));
    const report = await verifyRun(runDir);
    expect(report.problems[0]).toMatchObject({ seq: lines.length - 2, code: 'TRUNCATED' });
  });

  it('catches a finished run whose manifest has no head', async () => {
    const { runDir } = await sample();
    const m = (await readManifest(runDir))!;
    await writeManifest(runDir, { ...m, head: null });
    expect((await verifyRun(runDir)).problems[0]).toMatchObject({ code: 'MISSING_ANCHOR' });
  });

  it('catches an altered blob and a missing one', async () => {
    const { runDir } = await sample();
    const blobs = readdirSync(join(runDir, 'blobs')).sort();
    writeFileSync(join(runDir, 'blobs', blobs[0]!), 'tampered');
    rmSync(join(runDir, 'blobs', blobs[1]!));
    const codes = (await verifyRun(runDir)).problems.map((p) => p.code).sort();
    expect(codes).toEqual(['BLOB_ALTERED', 'BLOB_MISSING']);
  });

  it('catches time going backwards and a foreign run id', async () => {
    const { runDir, lines, write } = await sample('running');
    const e = JSON.parse(lines[3]!) as StoredLedgerEntry;
    lines[3] = rehash({ ...e, ts: '2020-01-01T00:00:00.000Z' });
    write(lines);
    const codes = (await verifyRun(runDir)).problems.map((p) => p.code);
    expect(codes).toContain('TS_NOT_MONOTONIC');
  });

  it('reports a torn tail and unparsable lines rather than throwing', async () => {
    const { runDir, lines, write } = await sample('running');
    lines[2] = '{not json';
    write(lines);
    writeFileSync(join(runDir, 'ledger.jsonl'), `${readFileSync(join(runDir, 'ledger.jsonl'), 'utf8')}{"torn`);
    const codes = (await verifyRun(runDir)).problems.map((p) => p.code);
    expect(codes[0]).toBe('PARSE');
    expect(codes).toContain('TORN_TAIL');
  });
});

describe('verifyAll', () => {
  it('checks every run and fails when one is bad', async () => {
    const repo = tempDir();
    await writeSampleRun(repo, { runId: 'run-a' });
    const { runDir } = await writeSampleRun(repo, { runId: 'run-b' });
    writeFileSync(join(runDir, 'ledger.jsonl'), readFileSync(join(runDir, 'ledger.jsonl'), 'utf8').replace('add a --json', 'add a --yaml'));
    const report = await verifyAll(repo);
    expect(report.ok).toBe(false);
    expect(report.runs.map((r) => [r.runId, r.ok])).toEqual([['run-a', true], ['run-b', false]]);
  });

  it('is a usage error when the repo has no runs', async () => {
    const repo = tempDir();
    mkdirSync(join(repo, 'src'));
    await expect(verifyAll(repo)).rejects.toMatchObject({ code: 'RUN_NOT_FOUND' });
  });
});
