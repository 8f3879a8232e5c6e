// The parser every reader goes through (core/ledger/entry.ts): payloads typed by their entry type and
// version, refused with the entry named when they do not read, and never confused with what the hash
// covers (the stored JSON).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../../src/core/acm/canonical-json.js';
import { decodeEventData, parseLedgerValue, type EventSchemas } from '../../../src/core/ledger/entry.js';
import { checkEntryShape } from '../../../src/core/ledger/entry-shape.js';
import { openRunLedger } from '../../../src/core/ledger/file-ledger.js';
import { entryHash } from '../../../src/core/ledger/hash.js';
import { parseLedgerLine } from '../../../src/core/ledger/line-reader.js';
import { verifyRun } from '../../../src/core/ledger/verify.js';
import { fixedClock, tempDir, writeSampleRun } from '../../helpers/sample-run.js';

const lines = (runDir: string): string[] => readFileSync(join(runDir, 'ledger.jsonl'), 'utf8').trim().split('\n');

/** A stored line for `body` (its hash recomputed, so only the payload is wrong). */
function sealed(body: Record<string, unknown>): string {
  const { hash: _h, ...rest } = body;
  const hash = entryHash(rest as never);
  return canonicalJson({ ...rest, hash });
}

describe('parseLedgerValue', () => {
  it('gives each payload the type its entry names, so readers narrow on `type` without casts', async () => {
    const { runDir } = await writeSampleRun(tempDir());
    const entries = lines(runDir).map((l, i) => parseLedgerLine(l, `line ${i + 1}`));
    const started = entries.find((e) => e.type === 'RUN_STARTED');
    expect(started?.type === 'RUN_STARTED' ? started.data.settings.parallel : null).toBe(2);
    const verdict = entries.find((e) => e.type === 'VERIFICATION');
    expect(verdict?.type === 'VERIFICATION' ? [verdict.data.command, verdict.data.passedCount] : null).toEqual(['npm test', 3]);
  });

  it('refuses a payload its type does not describe, naming where and the field', async () => {
    const { runDir } = await writeSampleRun(tempDir());
    const e = JSON.parse(lines(runDir)[0]!) as Record<string, unknown> & { data: Record<string, unknown> };
    const bad = JSON.parse(sealed({ ...e, data: { ...e.data, baseCommit: 42 } })) as unknown;
    expect(() => parseLedgerValue(bad, 'ledger.jsonl:1')).toThrow(/^ledger\.jsonl:1: seq 0: RUN_STARTED data: baseCommit: /);
  });

  it('refuses an entry type this version does not know, saying a newer acia may have written it', () => {
    const e = { seq: 0, ts: '2026-01-02T03:04:05.000Z', runId: 'r1', actor: 'team', type: 'RUN_CANCELLED', data: {}, prevHash: '0'.repeat(64), hash: 'a'.repeat(64) };
    expect(() => parseLedgerValue(e, 'x:1')).toThrow(/RUN_CANCELLED is not an entry type this acia knows \(a ledger written by a newer version\?\)/);
  });

  it('refuses a payload version newer than this build reads, with a hint to upgrade', () => {
    const e = { seq: 0, ts: '2026-01-02T03:04:05.000Z', runId: 'r1', actor: 'team', type: 'GOAL_AMENDED', v: 2, data: { by: 'h', delta: 'd' }, prevHash: '0'.repeat(64), hash: 'a'.repeat(64) };
    expect(checkEntryShape(e).ok).toBe(true);
    let error: unknown;
    try {
      parseLedgerValue(e, 'x:1');
    } catch (caught) {
      error = caught;
    }
    expect(error).toMatchObject({ code: 'LEDGER_CORRUPT', message: expect.stringContaining('GOAL_AMENDED data version 2 is newer than this acia reads (1)') as string, hint: expect.stringContaining('newer acia') as string });
  });

  it('reads an older payload version through its upgrades, step by step, as the current shape', () => {
    // A type at version 3: v1 had `who`, v2 renamed it `by`, v3 added a required `delta`.
    const schemas: EventSchemas = {
      current: { GOAL_AMENDED: z.object({ by: z.string(), delta: z.string() }) },
      version: { GOAL_AMENDED: 3 },
      older: {
        GOAL_AMENDED: {
          1: { schema: z.object({ who: z.string() }), upgrade: (d) => ({ by: (d as { who: string }).who }) },
          2: { schema: z.object({ by: z.string() }), upgrade: (d) => ({ ...(d as object), delta: '(not recorded)' }) },
        },
      },
    };
    expect(decodeEventData('GOAL_AMENDED', 1, { who: 'ana' }, schemas)).toEqual({ ok: true, data: { by: 'ana', delta: '(not recorded)' } });
    expect(decodeEventData('GOAL_AMENDED', 2, { by: 'bo' }, schemas)).toEqual({ ok: true, data: { by: 'bo', delta: '(not recorded)' } });
    expect(decodeEventData('GOAL_AMENDED', 3, { by: 'cy', delta: 'x' }, schemas)).toEqual({ ok: true, data: { by: 'cy', delta: 'x' } });
    expect(decodeEventData('GOAL_AMENDED', 1, { by: 'wrong version' }, schemas)).toMatchObject({ ok: false, message: expect.stringMatching(/^GOAL_AMENDED data \(version 1\): who: /) as string });
    expect(decodeEventData('GOAL_AMENDED', 4, {}, schemas)).toMatchObject({ ok: false, newer: true });
  });
});

describe('the hash covers the stored JSON, not the parsed form', () => {
  it('a payload with members this version does not know still verifies, opens and reads (they are dropped on read only)', async () => {
    const { runDir } = await writeSampleRun(tempDir(), { anchor: false, outcome: 'running' });
    const all = lines(runDir);
    // Re-chain the ledger with an extra member in one payload, as a newer writer would add.
    let prev = '0'.repeat(64);
    const out = all.map((l, i) => {
      const e = JSON.parse(l) as Record<string, unknown> & { data: Record<string, unknown> };
      const body = { ...e, prevHash: prev, data: i === 3 ? { ...e.data, addedLater: { by: 'a newer acia' } } : e.data };
      const line = sealed(body);
      prev = (JSON.parse(line) as { hash: string }).hash;
      return line;
    });
    writeFileSync(join(runDir, 'ledger.jsonl'), `${out.join('\n')}\n`);
    expect((await verifyRun(runDir)).problems.filter((p) => p.code !== 'MANIFEST')).toEqual([]);
    const ledger = await openRunLedger(runDir, '20260102-030405-abc123', { clock: fixedClock(Date.UTC(2027, 0, 1)), create: false });
    expect(ledger.entries()).toHaveLength(out.length);
    expect(ledger.entries()[3]!.data).not.toHaveProperty('addedLater');
    await ledger.append({ actor: 'team', type: 'GOAL_AMENDED', data: { by: 'human', delta: 'also csv' } });
    await ledger.close();
    expect(readFileSync(join(runDir, 'ledger.jsonl'), 'utf8')).toContain('"addedLater":{"by":"a newer acia"}');
    expect((await verifyRun(runDir)).problems.filter((p) => p.code !== 'MANIFEST')).toEqual([]);
  });

  it('a chained line whose payload does not read is corruption on open, never truncated as a torn tail', async () => {
    const { runDir } = await writeSampleRun(tempDir(), { anchor: false, outcome: 'running' });
    const all = lines(runDir);
    const last = JSON.parse(all.at(-1)!) as Record<string, unknown> & { data: Record<string, unknown> };
    all[all.length - 1] = sealed({ ...last, data: { ...last.data, passed: 'yes' } });
    writeFileSync(join(runDir, 'ledger.jsonl'), `${all.join('\n')}\n`);
    await expect(openRunLedger(runDir, '20260102-030405-abc123', { clock: fixedClock(), create: false })).rejects.toMatchObject({ code: 'LEDGER_CORRUPT', message: expect.stringContaining('VERIFICATION data: passed:') as string });
    expect(lines(runDir)).toHaveLength(all.length);
  });

  it('an appended entry is what a reader of its line gets', async () => {
    const runDir = join(tempDir(), 'run');
    const ledger = await openRunLedger(runDir, 'r1', { clock: fixedClock(), create: true });
    const entry = await ledger.append({ actor: 'dev:t1', type: 'TASK_ADDED', data: { task: { id: 't9', capability: 'dev.fix', input: { failure: 'x' }, verification: [] }, reason: 'fix', iteration: 1 } });
    await ledger.close();
    const [line] = lines(runDir);
    // Stored as written (no edges given); read with the schema's default, by the writer's own fold too.
    expect(line).not.toContain('"edges"');
    expect(parseLedgerLine(line!, 'ledger.jsonl:1')).toEqual(entry);
    expect(entry.type === 'TASK_ADDED' ? entry.data.edges : null).toEqual([]);
  });
});
