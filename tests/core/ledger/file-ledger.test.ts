import { readFileSync, readdirSync, writeFileSync, appendFileSync, statSync } from 'node:fs';
import * as nodeFs from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { canonicalJson, sha256Hex } from '../../../src/core/acm/canonical-json.js';
import { GENESIS_HASH } from '../../../src/core/acm/contracts.js';
import { openRunLedger } from '../../../src/core/ledger/file-ledger.js';
import { entryHash } from '../../../src/core/ledger/hash.js';
import type { LedgerFs } from '../../../src/core/ledger/ledger-fs.js';
import { fold, holdsEntries, ledgerEntriesOf, readLedgerEntries } from '../../../src/core/ledger/line-reader.js';
import { fixedClock, tempDir } from '../../helpers/sample-run.js';

const goalAmended = (delta: string) => ({ actor: 'human', type: 'GOAL_AMENDED' as const, data: { by: 'human', delta } });

/** The real fs, with each opened handle passed to `wrap` (with the path it was opened for) to trace or fail its calls. */
function wrapHandles(wrap: (handle: nodeFs.FileHandle, path: string) => void): LedgerFs {
  return {
    ...nodeFs,
    open: (async (...args: Parameters<typeof nodeFs.open>) => {
      const handle = await nodeFs.open(...args);
      wrap(handle, String(args[0]));
      return handle;
    }),
  };
}

describe('openRunLedger', () => {
  it('writes canonical, hash-chained JSONL lines that entryHash agrees with', async () => {
    const dir = join(tempDir(), 'r1');
    const ledger = await openRunLedger(dir, 'r1', { clock: fixedClock(), create: true });
    const a = await ledger.append(goalAmended('one'));
    const b = await ledger.append(goalAmended('two'));
    await ledger.close();
    expect(a.prevHash).toBe(GENESIS_HASH);
    expect(b.prevHash).toBe(a.hash);
    expect(entryHash(b)).toBe(b.hash);
    const lines = readFileSync(join(dir, 'ledger.jsonl'), 'utf8').split('\n');
    expect(lines[2]).toBe('');
    expect(lines[0]).toBe(canonicalJson(a));
    expect(lines[1]).toBe(canonicalJson(b));
  });

  it('assigns seq in call order across un-awaited appends batched into group commits', async () => {
    const dir = join(tempDir(), 'r2');
    const ledger = await openRunLedger(dir, 'r2', { clock: fixedClock(), create: true });
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) => ledger.append(goalAmended(`d${i}`))));
    await ledger.close();
    expect(results.map((e) => e.seq)).toEqual(Array.from({ length: 200 }, (_, i) => i));
    const reread = [];
    for await (const e of readLedgerEntries(join(dir, 'ledger.jsonl'))) reread.push(e);
    expect(reread.map((e) => (e.data as { delta: string }).delta)).toEqual(results.map((_, i) => `d${i}`));
  });

  it('resumes an existing ledger, continuing the chain', async () => {
    const dir = join(tempDir(), 'r3');
    const first = await openRunLedger(dir, 'r3', { clock: fixedClock(), create: true });
    const e0 = await first.append(goalAmended('x'));
    await first.close();
    const second = await openRunLedger(dir, 'r3', { clock: fixedClock(), create: false });
    const e1 = await second.append(goalAmended('y'));
    expect(second.entries()).toHaveLength(2);
    expect(e1.prevHash).toBe(e0.hash);
    expect(fold(second.entries(), (n, e) => n + e.seq, 0)).toBe(1);
    await second.close();
  });

  it('refuses a run that does not exist when create is false', async () => {
    await expect(openRunLedger(join(tempDir(), 'nope'), 'nope', { clock: fixedClock(), create: false })).rejects.toMatchObject({ code: 'RUN_NOT_FOUND' });
  });

  it('rejects an entry whose payload does not match its type, writing nothing', async () => {
    const dir = join(tempDir(), 'r4');
    const ledger = await openRunLedger(dir, 'r4', { clock: fixedClock(), create: true });
    await expect(ledger.append({ actor: 'team', type: 'GOAL_AMENDED', data: { by: 1 } })).rejects.toMatchObject({ code: 'INPUT_INVALID' });
    await expect(ledger.append({ actor: 'nobody', type: 'GOAL_AMENDED', data: { by: 'x', delta: 'y' } })).rejects.toMatchObject({ code: 'INPUT_INVALID' });
    await ledger.close();
    expect(statSync(join(dir, 'ledger.jsonl')).size).toBe(0);
  });

  it('truncates a torn last line on open and records LEDGER_RECOVERED', async () => {
    const dir = join(tempDir(), 'r5');
    const ledger = await openRunLedger(dir, 'r5', { clock: fixedClock(), create: true });
    await ledger.append(goalAmended('kept'));
    await ledger.close();
    const torn = '{"actor":"team","data":{"by":"x","del';
    appendFileSync(join(dir, 'ledger.jsonl'), torn);
    const reopened = await openRunLedger(dir, 'r5', { clock: fixedClock(), create: false });
    const entries = reopened.entries();
    await reopened.close();
    expect(entries.map((e) => e.type)).toEqual(['GOAL_AMENDED', 'LEDGER_RECOVERED']);
    expect(entries[1]!.data).toMatchObject({ truncatedBytes: torn.length });
    expect(readFileSync(join(dir, 'ledger.jsonl'), 'utf8')).not.toContain('"del\n');
  });

  it('refuses a ledger damaged before its last line, naming the line', async () => {
    const dir = join(tempDir(), 'r6');
    const ledger = await openRunLedger(dir, 'r6', { clock: fixedClock(), create: true });
    await ledger.append(goalAmended('a'));
    await ledger.append(goalAmended('b'));
    await ledger.close();
    const path = join(dir, 'ledger.jsonl');
    writeFileSync(path, readFileSync(path, 'utf8').replace('"a"', '"A"'));
    await expect(openRunLedger(dir, 'r6', { clock: fixedClock(), create: false })).rejects.toThrow(/ledger\.jsonl:1: .*hash/);
  });

  it('refuses a second writer in the same process and frees the lock on close', async () => {
    const dir = join(tempDir(), 'r7');
    const ledger = await openRunLedger(dir, 'r7', { clock: fixedClock(), create: true });
    await expect(openRunLedger(dir, 'r7', { clock: fixedClock(), create: true })).rejects.toMatchObject({ code: 'LEDGER_LOCKED', message: expect.stringContaining(`pid ${process.pid}`) as unknown });
    await ledger.close();
    const again = await openRunLedger(dir, 'r7', { clock: fixedClock(), create: false });
    await again.close();
  });

  it('takes over a stale lock left by a dead process', async () => {
    const dir = join(tempDir(), 'r8');
    const ledger = await openRunLedger(dir, 'r8', { clock: fixedClock(), create: true });
    await ledger.close();
    const { hostname } = await import('node:os');
    writeFileSync(join(dir, 'lock'), JSON.stringify({ pid: 2 ** 22 + 12345, host: hostname(), startedAt: 'then' }));
    const taken = await openRunLedger(dir, 'r8', { clock: fixedClock(), create: false });
    expect(JSON.parse(readFileSync(join(dir, 'lock'), 'utf8'))).toMatchObject({ pid: process.pid });
    await taken.close();
  });

  it('takes over a lock whose pid a later process was given (perhaps another user’s), and keeps one its live writer holds', async () => {
    const dir = join(tempDir(), 'r8b');
    const ledger = await openRunLedger(dir, 'r8b', { clock: fixedClock(), create: true });
    const held = JSON.parse(readFileSync(join(dir, 'lock'), 'utf8')) as { pid: number; procStart?: number };
    // This process's own start time is recorded where Linux says it: the writer is told apart by it.
    expect(held.procStart).toEqual(expect.any(Number));
    await expect(openRunLedger(dir, 'r8b', { clock: fixedClock(), create: false })).rejects.toMatchObject({ code: 'LEDGER_LOCKED' });
    await ledger.close();
    const { hostname } = await import('node:os');
    // A live pid (this very process) that started at another time than the lock's writer did: not its writer.
    writeFileSync(join(dir, 'lock'), JSON.stringify({ pid: process.pid, host: hostname(), startedAt: 'then', procStart: (held.procStart ?? 0) + 1 }));
    const taken = await openRunLedger(dir, 'r8b', { clock: fixedClock(), create: false });
    expect(JSON.parse(readFileSync(join(dir, 'lock'), 'utf8'))).toMatchObject({ pid: process.pid, procStart: held.procStart });
    await taken.close();
  });

  it('fails a write with LEDGER_IO naming the file, keeping what was already durable', async () => {
    const dir = join(tempDir(), 'r9');
    let failWrites = false;
    const failingFs = wrapHandles((handle) => {
      const write = handle.write.bind(handle) as (...a: unknown[]) => Promise<unknown>;
      (handle as unknown as { write: (...a: unknown[]) => Promise<unknown> }).write = (...a: unknown[]) =>
        failWrites ? Promise.reject(Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' })) : write(...a);
    });
    const ledger = await openRunLedger(dir, 'r9', { clock: fixedClock(), create: true, fs: failingFs });
    await ledger.append(goalAmended('safe'));
    failWrites = true;
    await expect(ledger.append(goalAmended('lost'))).rejects.toMatchObject({ code: 'LEDGER_IO', message: expect.stringContaining('ledger.jsonl') as unknown });
    await expect(ledger.append(goalAmended('after'))).rejects.toMatchObject({ code: 'LEDGER_IO' });
    await ledger.close();
    const reopened = await openRunLedger(dir, 'r9', { clock: fixedClock(), create: false });
    expect(reopened.entries().map((e) => (e.data as { delta?: string }).delta)).toEqual(['safe']);
    await reopened.close();
  });

  it('reports an unwritable run directory as LEDGER_IO with its path', async () => {
    const root = tempDir();
    writeFileSync(join(root, '.acia'), 'a file, not a directory');
    await expect(openRunLedger(join(root, '.acia', 'runs', 'r10'), 'r10', { clock: fixedClock(), create: true })).rejects.toMatchObject({
      code: 'LEDGER_IO',
      message: expect.stringContaining('.acia') as unknown,
    });
  });

  it('stores blobs once under the sha256 of their content', async () => {
    const dir = join(tempDir(), 'r11');
    const ledger = await openRunLedger(dir, 'r11', { clock: fixedClock(), create: true });
    const ref = await ledger.putBlob('hello');
    expect(await ledger.putBlob(Buffer.from('hello'))).toBe(ref);
    expect(ref).toBe(`sha256:${sha256Hex('hello')}`);
    expect((await ledger.getBlob(ref)).toString()).toBe('hello');
    expect((await nodeFs.readdir(join(dir, 'blobs')))).toEqual([sha256Hex('hello')]);
    await expect(ledger.getBlob(`sha256:${'0'.repeat(64)}`)).rejects.toMatchObject({ code: 'BLOB_MISSING' });
    await ledger.close();
  });
  it('makes blobs (files, then their directory) durable before any entry that could name them, once per group commit', async () => {
    const dir = join(tempDir(), 'r-order');
    const events: string[] = [];
    const tracingFs: LedgerFs = {
      ...wrapHandles((handle, path) => {
        const name = path.endsWith('blobs') ? 'blobs-dir' : path.endsWith('ledger.jsonl') ? 'ledger' : path.includes('/blobs/') ? 'blob-file' : 'other';
        const sync = handle.sync.bind(handle);
        const datasync = handle.datasync.bind(handle);
        handle.sync = () => (events.push(`sync ${name}`), sync());
        handle.datasync = () => (events.push(`datasync ${name}`), datasync());
      }),
      rename: (async (...args: Parameters<typeof nodeFs.rename>) => {
        events.push('rename blob');
        return nodeFs.rename(...args);
      }),
    };
    const ledger = await openRunLedger(dir, 'r-order', { clock: fixedClock(), create: true, fs: tracingFs });
    events.length = 0;
    const a = await ledger.putBlob('request');
    const b = await ledger.putBlob('response');
    await ledger.append({ actor: 'human', type: 'GOAL_AMENDED', data: { by: 'human', delta: `${a} ${b}` } });
    await ledger.append(goalAmended('no new blob'));
    await ledger.close();
    // A put waits for no fsync and writes a new blob under its name (no rename); the group commit syncs
    // both files (side by side, through the handles they were written with), then the directory.
    expect(events).toEqual(['sync blob-file', 'sync blob-file', 'sync blobs-dir', 'datasync ledger', 'datasync ledger']);
  });

  it('writes queued entries with the next group commit, in order, and an awaited append is a barrier for them', async () => {
    const dir = join(tempDir(), 'r-queued');
    const ledger = await openRunLedger(dir, 'r-queued', { clock: fixedClock(), create: true });
    const queued = ledger.appendQueued!(goalAmended('queued one'));
    expect(queued.seq).toBe(0);
    expect(ledger.entries().at(-1)).toBe(queued); // sealed and in order at once
    const ref = await ledger.putBlob('named by the queued entry');
    ledger.appendQueued!({ actor: 'human', type: 'GOAL_AMENDED', data: { by: 'human', delta: ref } });
    const barrier = await ledger.append(goalAmended('awaited'));
    // Read back by a fresh reader: all three are on disk, in order, and the blob with them.
    const onDisk = readFileSync(join(dir, 'ledger.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { seq: number; hash: string });
    expect(onDisk.map((e) => e.seq)).toEqual([0, 1, 2]);
    expect(onDisk[2]!.hash).toBe(barrier.hash);
    expect(readFileSync(join(dir, 'blobs', ref.slice('sha256:'.length)), 'utf8')).toBe('named by the queued entry');
    await ledger.close();
    expect(() => ledger.appendQueued!(goalAmended('after close'))).toThrow(/closed/);
  });

  it('a blob cut short (a power loss before its deferred fsync) is written again, not taken as stored', async () => {
    const dir = join(tempDir(), 'r-short');
    const first = await openRunLedger(dir, 'r-short', { clock: fixedClock(), create: true });
    const ref = await first.putBlob('whole content');
    await first.append(goalAmended('so the run is there to reopen'));
    await first.close();
    const file = join(dir, 'blobs', ref.slice('sha256:'.length));
    writeFileSync(file, 'whole'); // what a crash could leave under the final name
    // The next session (a resume) stores the same content again: it is rewritten, not taken as stored.
    const ledger = await openRunLedger(dir, 'r-short', { clock: fixedClock(), create: false });
    expect(await ledger.putBlob('whole content')).toBe(ref);
    expect(readFileSync(file, 'utf8')).toBe('whole content');
    await ledger.close();
  });

  it('a blob whose write fails leaves no file under its name, and the next put of it stores it whole', async () => {
    const dir = join(tempDir(), 'r-blob-fail');
    let failNext = true;
    const flakyFs = wrapHandles((handle) => {
      const writeFile = handle.writeFile.bind(handle);
      handle.writeFile = ((data: Uint8Array) => {
        if (!failNext) return writeFile(data);
        failNext = false;
        // Half written, then the disk is full.
        return writeFile(data.subarray(0, 3)).then(() => Promise.reject(Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' })));
      });
    });
    const ledger = await openRunLedger(dir, 'r-blob-fail', { clock: fixedClock(), create: true, fs: flakyFs });
    await expect(ledger.putBlob('the whole content')).rejects.toThrow(/^cannot write blob \S+: ENOSPC/);
    const file = join(dir, 'blobs', sha256Hex('the whole content'));
    expect(() => statSync(file)).toThrow(/ENOENT/);
    expect(await ledger.putBlob('the whole content')).toBe(`sha256:${sha256Hex('the whole content')}`);
    await ledger.append(goalAmended('names it'));
    expect(readFileSync(file, 'utf8')).toBe('the whole content');
    await ledger.close();
  });

  it('puts of the same content at the same time share one write, which the group commit fsyncs', async () => {
    const dir = join(tempDir(), 'r-same');
    const synced: string[] = [];
    const tracingFs = wrapHandles((handle, path) => {
      const sync = handle.sync.bind(handle);
      handle.sync = async () => {
        if (path.includes('/blobs/')) synced.push(String((await handle.stat()).ino));
        return sync();
      };
    });
    const ledger = await openRunLedger(dir, 'r-same', { clock: fixedClock(), create: true, fs: tracingFs });
    const big = 'x'.repeat(1 << 20);
    const [a, b] = await Promise.all([ledger.putBlob(big), ledger.putBlob(big)]);
    expect(b).toBe(a);
    await ledger.append({ actor: 'human', type: 'GOAL_AMENDED', data: { by: 'human', delta: a } });
    const file = join(dir, 'blobs', a.slice('sha256:'.length));
    expect(synced).toEqual([String(statSync(file).ino)]);
    expect(readdirSync(join(dir, 'blobs'))).toEqual([a.slice('sha256:'.length)]);
    await ledger.close();
  });

  it('a blob of the right size but other bytes (a power loss before its fsync) is written again on resume', async () => {
    const dir = join(tempDir(), 'r-zeroed');
    const first = await openRunLedger(dir, 'r-zeroed', { clock: fixedClock(), create: true });
    const ref = await first.putBlob('whole content');
    await first.append(goalAmended('so the run is there to reopen'));
    await first.close();
    const file = join(dir, 'blobs', ref.slice('sha256:'.length));
    writeFileSync(file, Buffer.alloc(Buffer.byteLength('whole content'))); // zeroes, same size
    const ledger = await openRunLedger(dir, 'r-zeroed', { clock: fixedClock(), create: false });
    expect(await ledger.putBlob('whole content')).toBe(ref);
    expect(readFileSync(file, 'utf8')).toBe('whole content');
    await ledger.close();
  });
});


describe('ledgerEntriesOf (a live ledger\'s entries, spared a second parse)', () => {
  it('takes the live list only when the file holds exactly it; any other file is read and parsed', async () => {
    const dir = join(tempDir(), 'r-live');
    const ledger = await openRunLedger(dir, 'r-live', { clock: fixedClock(), create: true });
    await ledger.append(goalAmended('one'));
    await ledger.append(goalAmended('two'));
    const live = ledger.entries();
    const path = join(dir, 'ledger.jsonl');
    const bytes = readFileSync(path);
    expect(holdsEntries(bytes, live)).toBe(true);
    expect(await ledgerEntriesOf(path, live)).toBe(live);
    // One entry more on either side, a torn tail, another head: the file is what is read.
    expect(holdsEntries(bytes, live.slice(0, 1))).toBe(false);
    expect(holdsEntries(bytes.subarray(0, bytes.length - 1), live)).toBe(false);
    expect(holdsEntries(bytes, [live[0]!, { ...live[1]!, hash: live[0]!.hash }])).toBe(false);
    expect(holdsEntries(Buffer.alloc(0), [])).toBe(true);
    await ledger.append(goalAmended('three'));
    await ledger.close();
    const reread = await ledgerEntriesOf(path, live.slice(0, 2));
    expect(reread).not.toBe(live);
    expect(reread.map((e) => e.seq)).toEqual([0, 1, 2]);
    // An entry altered under the same head: the live list (what was written) is what the caller gets;
    // the file's chain no longer holds, which verify reports (and a bundle copying it fails verify).
    const full = ledger.entries();
    writeFileSync(path, readFileSync(path, 'utf8').replace('"delta":"one"', '"delta":"uno"'));
    expect(await ledgerEntriesOf(path, full)).toBe(full);
    expect((await ledgerEntriesOf(path)).map((e) => (e.type === 'GOAL_AMENDED' ? e.data.delta : ''))).toEqual(['uno', 'two', 'three']);
  });
});
