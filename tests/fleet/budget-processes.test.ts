// Four separate worker processes spend one run's --max-cost-usd through the team's model hooks, the
// scripted model, the real pricing and the fleet's PostgreSQL gate: together they never pass it, and
// each stops with budget_exceeded at the call that would. Without the gate (each process checking
// only its own fold, as a lone worker does) the same four overspend: the gate is what holds the limit.
// Needs the built dist (`npm run build`), as the CLI e2e suites do.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { migrateBudgets, openRunBudget, readRunBudget } from '../../src/fleet/budget-gate.js';
import { migrateLedger } from '../../src/core/ledger/pg-ledger.js';
import { postgresBin, startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { tempDir } from '../e2e/helpers.js';

const WORKER = join(import.meta.dirname, 'fixtures', 'budget-worker.mjs');
const LIMIT = 0.25;
let server: TestPostgres;
let db: pg.Pool;
let script: string;

type Line = { worker: string; ready?: boolean; call?: number; failed?: string; stopped?: string; message?: string };

if (postgresBin() === null && process.env.ACIA_TEST_REQUIRE_POSTGRES === '1') throw new Error('ACIA_TEST_REQUIRE_POSTGRES=1 but no PostgreSQL server binaries under /usr/lib/postgresql');

/** Starts four worker processes, lets them go together, and collects what each printed. */
async function fourWorkers(runId: string, mode: '--gate' | '--no-gate'): Promise<Map<string, Line[]>> {
  const names = ['w1', 'w2', 'w3', 'w4'];
  const out = new Map<string, Line[]>(names.map((n) => [n, []]));
  let ready = 0;
  let go: () => void = () => undefined;
  const allReady = new Promise<void>((resolve) => (go = resolve));
  const exits = names.map((name) => {
    const child = spawn(process.execPath, [WORKER, server.url, runId, name, script, String(LIMIT), mode], { stdio: ['pipe', 'pipe', 'pipe'] });
    let err = '';
    let buf = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout.on('data', (d: Buffer) => {
      buf += d.toString();
      for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
        const line = JSON.parse(buf.slice(0, i)) as Line;
        buf = buf.slice(i + 1);
        out.get(name)!.push(line);
        if (line.ready && ++ready === names.length) go();
      }
    });
    void allReady.then(() => child.stdin.end('go\n'));
    return new Promise<void>((resolve, reject) => child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${name} exited ${code}: ${err}`)))));
  });
  await Promise.all(exits);
  return out;
}

const costs = (lines: Line[]) => lines.flatMap((l) => (l.call === undefined ? [] : [l.call]));
const sum = (xs: number[]) => xs.reduce((a, x) => a + x, 0);

describe.skipIf(postgresBin() === null)('4 worker processes on one run with --max-cost-usd', () => {
  beforeAll(async () => {
    server = await startPostgres();
    db = new pg.Pool({ connectionString: server.url });
    await migrateLedger(db);
    await migrateBudgets(db);
    // Each call is budgeted at ~$0.01 (1000 output tokens of claude-sonnet-5-5) and costs ~$0.007; the
    // third call of every worker fails (401: never retried) and must give its reservation back.
    const turns = Array.from({ length: 120 }, (_, i) => (i === 2 ? { caller: 'dev:*', fault: '401' } : { caller: 'dev:*', text: 'working on it', latencyMs: 15, usage: { inputTokens: 40, outputTokens: 700 } }));
    script = join(tempDir('budget-procs'), 'script.json');
    writeFileSync(script, JSON.stringify({ version: 1, model: 'claude-sonnet-5-5', turns }));
  }, 60_000);
  afterAll(async () => {
    await db?.end();
    server?.stop();
  });

  it('never exceed it together; the call that would pass it is refused with budget_exceeded', async () => {
    const runId = '20261124-000000-fleet4';
    // The worker that holds the run opened its budget with the run's settings; the four join it.
    await openRunBudget(db, runId, { maxCostUsd: LIMIT }, { worker: 'orchestrator' });
    const out = await fourWorkers(runId, '--gate');
    const all = [...out.values()].flatMap(costs);
    expect(sum(all)).toBeLessThanOrEqual(LIMIT);
    // They worked up to the limit: the last refusals came with at most three other calls' estimates held.
    expect(sum(all)).toBeGreaterThan(LIMIT - 4 * 0.0105);
    for (const [name, lines] of out) {
      expect(costs(lines).length, name).toBeGreaterThan(0);
      expect(lines.filter((l) => l.failed === 'LLM_AUTH'), name).toHaveLength(1);
      const stop = lines.at(-1)!;
      expect(stop.stopped, name).toBe('budget_exceeded');
      // Calls under way on the other workers count, and the message says how much of it they hold.
      expect(stop.message).toMatch(/^budget exhausted: cost \$0\.2\d+ would pass the limit of \$0\.25( \(\$0\.\d+ of it held by calls under way\))?$/);
    }
    // The database agrees with what the processes recorded, and nothing is left reserved (failed calls released).
    const b = (await readRunBudget(db, runId))!;
    expect(b.spent.usd).toBeCloseTo(sum(all), 9);
    expect(b.reserved.count).toBe(0);
  }, 60_000);

  it('without the gate, the same four (each checking only its own calls) overspend it', async () => {
    const out = await fourWorkers('20261124-000000-nogate', '--no-gate');
    const all = [...out.values()].flatMap(costs);
    expect(sum(all)).toBeGreaterThan(2 * LIMIT);
    for (const lines of out.values()) expect(sum(costs(lines))).toBeLessThanOrEqual(LIMIT);
  }, 60_000);
});
