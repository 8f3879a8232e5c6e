// What the fleet suites share: one real PostgreSQL per suite, real `acia worker` processes on it, demo
// scenarios submitted to a bare git remote, and the database read back (runs, ledger rows with their epochs).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import pg from 'pg';
import { acia, CLI, git, tempDir } from './helpers.js';
import { cliEnv, editedScript, sampleRepo, SCENARIOS, type Turn } from './cli-helpers.js';
import { postgresBin, startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { sandboxAvailable } from '../helpers/sandbox-available.js';

export { editedScript, type Turn };

export interface Scenario {
  name: string;
  goal: string;
  settings: { testCommand: string; parallel: number; maxIterations: number; maxTokens?: number };
  expect: { reason: string };
}

export interface LedgerRow {
  seq: number;
  epoch: number | null;
  type: string;
  actor: string;
  data: { taskId?: string; worker?: string; reason?: string };
}

export interface RunRow {
  status: string;
  worker: string | null;
  message: string | null;
}


/** True when the fleet suites can run here; CI (ACIA_TEST_REQUIRE_POSTGRES=1) makes a missing server a failure. */
export function fleetAvailable(): boolean {
  if (postgresBin() !== null) return true;
  if (process.env.ACIA_TEST_REQUIRE_POSTGRES === '1') throw new Error('ACIA_TEST_REQUIRE_POSTGRES=1 but no PostgreSQL server binaries under /usr/lib/postgresql (apt-get install postgresql)');
  return false;
}

export const scenarioOf = (name: string): Scenario => JSON.parse(readFileSync(join(SCENARIOS, name, 'scenario.json'), 'utf8')) as Scenario;

/** Rewrites a script file's turns in place (a run or task started after this reads the new latencies). */
export function rewriteScript(file: string, edit: (turns: Turn[]) => void): void {
  const script = JSON.parse(readFileSync(file, 'utf8')) as { turns: Turn[] };
  edit(script.turns);
  writeFileSync(file, JSON.stringify(script));
}

/** The flags that run scenario `s` as its demo does (`acia run` or `acia submit`), with the model scripted by `script`. */
export function runFlags(s: Scenario, script: string): string[] {
  const flags = ['--model', `scripted:${script}`, '--test-command', s.settings.testCommand, '--parallel', String(s.settings.parallel), '--max-iterations', String(s.settings.maxIterations)];
  flags.push('--sandbox', sandboxAvailable() ? 'auto' : 'off');
  if (s.settings.maxTokens !== undefined) flags.push('--max-tokens', String(s.settings.maxTokens));
  return flags;
}

const UNFINISHED = ['queued', 'running'];

export class FleetHarness {
  readonly workers = new Map<string, ChildProcess>();
  /** Each worker's --cache directory, by name. */
  readonly caches = new Map<string, string>();
  /** Every worker's stderr, in arrival order. */
  log = '';
  /** Each worker's own stderr, by name. */
  readonly logs = new Map<string, string>();
  readonly db: pg.Pool;
  /** Where `remote()` puts the suite's bare remotes: the one directory the workers' policy serves. */
  readonly remotesDir = tempDir('fleet-remotes');
  /** The workers' XDG_CONFIG_HOME: their own config, with the policy a worker applies over submitted runs. */
  readonly workerConfigHome = tempDir('fleet-worker-xdg');

  constructor(
    readonly url: string,
    /** The suite's own server, when `FleetHarness.start` made it (stopped by `close`). */
    readonly server?: TestPostgres,
  ) {
    this.db = new pg.Pool({ connectionString: url });
    this.db.on('error', () => undefined);
    mkdirSync(join(this.workerConfigHome, 'acia'));
    // The suites' remotes, scripts under the temp dir, and --sandbox off only where no sandbox exists.
    const fleetWorker = { repos: [this.remotesDir], scriptedModelDirs: [tmpdir()], allowSandboxOff: !sandboxAvailable() };
    writeFileSync(join(this.workerConfigHome, 'acia', 'config.json'), JSON.stringify({ fleetWorker }));
  }

  /** A fresh PostgreSQL cluster for one suite, and the harness on it. */
  static async start(): Promise<FleetHarness> {
    const server = await startPostgres();
    return new FleetHarness(server.url, server);
  }

  /** A worker process; `url` lets a test put it behind a proxy, `extra` adds flags (--db-patience). */
  startWorker(name: string, o: { url?: string; concurrency?: number; taskConcurrency?: number; extra?: string[] } = {}): ChildProcess {
    const cache = tempDir(`cache-${name}`);
    this.caches.set(name, cache);
    const args = [CLI, 'worker', '--db', o.url ?? this.url, '--concurrency', String(o.concurrency ?? 2), '--name', name, '--cache', cache];
    if (o.taskConcurrency !== undefined) args.push('--task-concurrency', String(o.taskConcurrency));
    args.push(...(o.extra ?? []));
    const w = spawn(process.execPath, args, { env: cliEnv({ XDG_CONFIG_HOME: this.workerConfigHome }), stdio: ['ignore', 'ignore', 'pipe'] });
    this.logs.set(name, '');
    w.stderr?.on('data', (d: Buffer) => {
      this.log += d.toString();
      this.logs.set(name, this.logs.get(name)! + d.toString());
    });
    this.workers.set(name, w);
    return w;
  }

  /** The --cache directory of the worker started under `name` (its runs' replay bundles are in bundles/). */
  cacheOf(name: string): string {
    return this.caches.get(name)!;
  }

  /** SIGKILLs every worker started so far (the next test starts its own). */
  killWorkers(): void {
    for (const w of this.workers.values()) w.kill('SIGKILL');
    this.workers.clear();
  }

  /** A bare remote holding the demos' sample repository, where the workers' policy lets them clone and push. */
  remote(prefix: string): string {
    const repo = sampleRepo(prefix);
    const remote = join(mkdtempSync(join(this.remotesDir, `${prefix}-`)), 'app.git');
    git(repo, 'clone', '-q', '--bare', repo, remote);
    return remote;
  }

  /** Submits scenario `name` with its script changed by `edit` (latencies) and the scenario's settings; returns the run id. */
  submit(name: string, remote: string, edit: (turns: Turn[]) => void): { runId: string; scenario: Scenario; script: string } {
    const file = editedScript(name, edit);
    const s = scenarioOf(name);
    const r = acia(['submit', s.goal, '--repo', remote, '--base', 'main', '--db', this.url, '--json', ...runFlags(s, file)]);
    expect(r.code, r.stderr).toBe(0);
    return { runId: (JSON.parse(r.stdout) as { runId: string }).runId, scenario: s, script: file };
  }

  async rows(runId: string): Promise<LedgerRow[]> {
    const r = await this.db.query<{ seq: number; epoch: string | null; line: string }>('SELECT seq, epoch, line FROM acia_ledger WHERE run_id = $1 ORDER BY seq', [runId]);
    return r.rows.map((row) => {
      const e = JSON.parse(row.line) as { type: string; actor: string; data: LedgerRow['data'] };
      return { seq: row.seq, epoch: row.epoch === null ? null : Number(row.epoch), type: e.type, actor: e.actor, data: e.data };
    });
  }

  /** Whether a TASK_STARTED entry of `runId` is in the database (its Dev agent is at work). */
  async taskStarted(runId: string): Promise<boolean> {
    return (await this.db.query("SELECT 1 FROM acia_ledger WHERE run_id = $1 AND line LIKE '%\"TASK_STARTED\"%' LIMIT 1", [runId])).rowCount !== 0;
  }

  /** Polls `check` until it holds; a check that throws (the server is away for a test's outage) is asked again. */
  async until(what: string, check: () => Promise<boolean> | boolean, timeoutMs: number): Promise<void> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      let ok = false;
      let err: unknown;
      try {
        ok = await check();
      } catch (e) {
        err = e;
      }
      if (ok) return;
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}${err === undefined ? '' : ` (last: ${err instanceof Error ? err.message : JSON.stringify(err)})`}\n${this.log.slice(-4000)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  async runRow(runId: string): Promise<RunRow | undefined> {
    return (await this.db.query<RunRow>('SELECT status, worker, message FROM acia_runs WHERE run_id = $1', [runId])).rows[0];
  }

  async runRows(ids: string[]): Promise<Map<string, RunRow>> {
    const r = await this.db.query<RunRow & { run_id: string }>('SELECT run_id, status, worker, message FROM acia_runs WHERE run_id = ANY($1)', [ids]);
    return new Map(r.rows.map(({ run_id, ...row }) => [run_id, row]));
  }

  /** Waits until every run's row satisfies `done` (by default: no longer queued or running); returns the rows. */
  async settled(ids: string[], timeoutMs: number, done: (status: string, row: RunRow) => boolean = (s) => !UNFINISHED.includes(s)): Promise<Map<string, RunRow>> {
    let rows = new Map<string, RunRow>();
    await this.until(
      `runs ${ids.join(', ')} to end`,
      async () => {
        rows = await this.runRows(ids);
        return rows.size === ids.length && [...rows.values()].every((r) => done(r.status, r));
      },
      timeoutMs,
    );
    return rows;
  }

  async finished(runId: string, timeoutMs: number): Promise<RunRow> {
    return (await this.settled([runId], timeoutMs)).get(runId)!;
  }

  /** `acia export` then `acia verify` offline: the ledger written by several workers is one intact chain. */
  exportAndVerify(runId: string, prefix: string): string {
    const out = sampleRepo(prefix);
    const ex = acia(['export', runId, '--db', this.url, '--repo', out]);
    expect(ex.code, ex.stderr).toBe(0);
    const v = acia(['verify', runId, '--repo', out]);
    expect(v.code, v.stdout + v.stderr).toBe(0);
    return out;
  }

  async close(): Promise<void> {
    this.killWorkers();
    await this.db.end().catch(() => undefined);
    this.server?.stop();
  }
}

/**
 * The hooks every fleet suite opens with (call it inside the suite's describe): a fresh cluster and the
 * harness before the first test, handed to `set`; every worker and the server stopped after the last.
 * `killWorkersAfterEach` stops a test's workers before the next test starts (suites whose tests share
 * workers, or stop them themselves, leave it off).
 */
export function useFleet(set: (fleet: FleetHarness) => void, o: { killWorkersAfterEach?: boolean } = {}): void {
  let fleet: FleetHarness | undefined;
  beforeAll(async () => {
    fleet = await FleetHarness.start();
    set(fleet);
  }, 60_000);
  if (o.killWorkersAfterEach) afterEach(() => fleet?.killWorkers());
  afterAll(async () => {
    await fleet?.close();
  });
}
