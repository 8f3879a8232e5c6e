// What the fleet fault suites share: real `acia worker` processes on one PostgreSQL, demo scenarios
// submitted to a bare git remote, and the database read back (runs, ledger rows with their epochs).
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import pg from 'pg';
import { acia, CLI, git, tempDir } from './helpers.js';
import { cliEnv, sampleRepo, SCENARIOS } from './cli-helpers.js';
import { sandboxAvailable } from '../helpers/sandbox-available.js';

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

export class FleetHarness {
  readonly workers = new Map<string, ChildProcess>();
  log = '';
  readonly db: pg.Pool;

  constructor(readonly url: string) {
    this.db = new pg.Pool({ connectionString: url });
    this.db.on('error', () => undefined);
  }

  /** A worker process; `url` lets a test put it behind a proxy. */
  startWorker(name: string, o: { url?: string; concurrency?: number; taskConcurrency?: number } = {}): ChildProcess {
    const args = [CLI, 'worker', '--db', o.url ?? this.url, '--concurrency', String(o.concurrency ?? 2), '--name', name, '--cache', tempDir(`cache-${name}`)];
    if (o.taskConcurrency !== undefined) args.push('--task-concurrency', String(o.taskConcurrency));
    const w = spawn(process.execPath, args, { env: cliEnv(), stdio: ['ignore', 'ignore', 'pipe'] });
    w.stderr?.on('data', (d: Buffer) => (this.log += d.toString()));
    this.workers.set(name, w);
    return w;
  }

  /** A bare remote holding the demos' sample repository. */
  remote(prefix: string): string {
    const repo = sampleRepo(prefix);
    const remote = join(tempDir(`${prefix}-remote`), 'app.git');
    git(repo, 'clone', '-q', '--bare', repo, remote);
    return remote;
  }

  /** Submits scenario `name` with its script changed by `edit` (latencies); returns the run id. */
  submit(name: string, remote: string, edit: (turns: { caller: string; latencyMs?: number }[]) => void): { runId: string; scenario: Scenario; script: string } {
    const dir = tempDir(`script-${name}`);
    const script = JSON.parse(readFileSync(join(SCENARIOS, name, 'script.json'), 'utf8')) as { turns: { caller: string; latencyMs?: number }[] };
    edit(script.turns);
    const file = join(dir, 'script.json');
    writeFileSync(file, JSON.stringify(script));
    const s = JSON.parse(readFileSync(join(SCENARIOS, name, 'scenario.json'), 'utf8')) as Scenario;
    const args = ['submit', s.goal, '--repo', remote, '--base', 'main', '--db', this.url, '--json', '--model', `scripted:${file}`];
    args.push('--test-command', s.settings.testCommand, '--parallel', String(s.settings.parallel), '--max-iterations', String(s.settings.maxIterations), '--sandbox', sandboxAvailable() ? 'auto' : 'off');
    const r = acia(args);
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

  async until(what: string, check: () => Promise<boolean> | boolean, timeoutMs: number): Promise<void> {
    const end = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}\n${this.log}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  async runRow(runId: string): Promise<{ status: string; worker: string | null } | undefined> {
    return (await this.db.query<{ status: string; worker: string | null }>('SELECT status, worker FROM acia_runs WHERE run_id = $1', [runId])).rows[0];
  }

  async finished(runId: string, timeoutMs: number): Promise<{ status: string; worker: string | null }> {
    await this.until(`run ${runId} to finish`, async () => !['queued', 'running', undefined].includes((await this.runRow(runId))?.status), timeoutMs);
    return (await this.runRow(runId))!;
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
    for (const w of this.workers.values()) w.kill('SIGKILL');
    await this.db.end();
  }
}
