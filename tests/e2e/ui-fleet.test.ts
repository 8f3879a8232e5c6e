// `acia ui --db`: the fleet store over a real PostgreSQL server (a cluster of its own), with entries
// written by the real PgLedger. A new row reaches the hub through the ledger's insert trigger (a NOTIFY
// that names no run), without the store reading the run again; the run is verified as `acia verify --db` does.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { asRunId, systemClock } from '../../src/core/acm/ids.js';
import { migrateLedger, openPgLedger } from '../../src/core/ledger/pg-ledger.js';
import type { RunLedger } from '../../src/core/ledger/types.js';
import { fleetStore, safeDbLabel } from '../../src/ui/fleet-store.js';
import { RunHub } from '../../src/ui/run-hub.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { fleetAvailable } from './fleet-harness.js';
import { tempDir } from './helpers.js';

const RUN = asRunId('20260105-010203-f1ee70');

describe.skipIf(!fleetAvailable())('acia ui over a fleet database', () => {
  let server: TestPostgres;
  let db: pg.Pool;
  let ledger: RunLedger;

  beforeAll(async () => {
    server = await startPostgres();
    db = new pg.Pool({ connectionString: server.url, max: 2 });
    await migrateLedger(db);
    ledger = await openPgLedger(db, RUN, { clock: systemClock, create: true, dir: tempDir('ui-fleet') });
    const goal = { id: 'G1', intent: 'fleet goal', constraints: {}, contextRequired: true };
    await ledger.append({ actor: 'team', type: 'RUN_STARTED', data: { goal, repo: 'git://x', baseCommit: 'a'.repeat(40), baseBranch: 'main', runBranch: `acia/${RUN}`, model: 'scripted:x', settings: { parallel: 1, maxIterations: 1, sandbox: 'off', budget: {} }, aciaVersion: '0.1.0' } });
  }, 60_000);

  afterAll(async () => {
    await db?.end();
    server?.stop();
  });

  it('lists and reads fleet runs, hears new entries through NOTIFY, and never shows the credentials', async () => {
    const url = server.url.replace('acia@', 'acia:secret@');
    expect(safeDbLabel(url)).not.toContain('secret');
    const store = await fleetStore(server.url, {});
    expect(store.label).not.toContain('acia@');
    const hub = new RunHub(store);
    await hub.start();
    try {
      expect(hub.rows().map((r) => [r.runId, r.goal, r.status])).toEqual([[RUN, 'fleet goal', 'running']]);
      const rows: { entries: number; status: string }[] = [];
      hub.onRow((r) => rows.push(r));
      // Only the trigger can say so: the store falls back to asking every 2 s only without it.
      expect((await db.query("SELECT 1 FROM pg_trigger WHERE tgname = 'acia_ledger_notify'")).rowCount).toBe(1);
      // Once the store listens, a new entry can reach the hub only through the NOTIFY its insert sends.
      await expect.poll(async () => (await db.query("SELECT 1 FROM pg_stat_activity WHERE query = 'LISTEN acia_ledger'")).rowCount, { timeout: 10_000, interval: 20 }).toBe(1);
      const listener = (await db.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE query = 'LISTEN acia_ledger'")).rows[0]!.pid;
      // Any role can listen on the channel: what it hears names no run.
      const eavesdropper = await db.connect();
      const heard: (string | undefined)[] = [];
      eavesdropper.on('notification', (n) => heard.push(n.payload));
      await eavesdropper.query('LISTEN acia_ledger');
      await ledger.append({ actor: 'team', type: 'RUN_COMPLETED', data: { reason: 'succeeded', message: 'done', runBranch: `acia/${RUN}`, headCommit: null, filesChanged: [], costUsd: 0, tokens: 0, durationMs: 1 } });
      await expect.poll(() => rows.find((r) => r.status === 'succeeded')?.entries, { timeout: 10_000, interval: 20 }).toBe(2);
      // The store's listening connection is still the one it opened and has run nothing since: the store
      // only falls back to asking every 2 s when that connection fails, so the NOTIFY brought the entry
      // (a proof that holds on a loaded machine, where a wall-clock bound under 2 s does not).
      expect((await db.query<{ query: string }>('SELECT query FROM pg_stat_activity WHERE pid = $1', [listener])).rows[0]?.query).toBe('LISTEN acia_ledger');
      await expect.poll(() => heard.length, { timeout: 10_000 }).toBe(1);
      expect(heard).toEqual(['']);
      eavesdropper.release(true);
      const { entries, cursor } = await store.read(RUN, { seq: 1, offset: 0 });
      expect(entries.map((e) => e.type)).toEqual(['RUN_COMPLETED']);
      expect(cursor.seq).toBe(2);
      // No acia_runs row anchors this run's head: verify says so, as `acia verify --db` would.
      const v = await store.verify(RUN);
      expect(v.entries).toBe(2);
      expect(v.problems.every((p) => p.code !== 'CHAIN_BROKEN' && p.code !== 'HASH_MISMATCH')).toBe(true);
      expect(await store.diff(RUN, '', 'b'.repeat(40))).toBeNull();
    } finally {
      await hub.stop();
    }
  }, 60_000);
});
