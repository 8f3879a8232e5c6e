// Prometheus metrics of one worker (`acia worker --metrics-port`), on prom-client (the Node client the
// Prometheus project lists; its text format and histogram buckets are what Prometheus parses, and its
// default metrics give each worker's RSS, CPU and event-loop lag for free). Two kinds of figures:
// what this worker did (runs and task jobs it ran, model calls, tokens and dollars it spent, task job
// latencies, lease takeovers, database errors and outages it rode out), counted as it happens; and the
// fleet as the database holds it (runs by status, task jobs by state), read at each scrape, so every
// worker reports the same fleet-wide gauges (aggregate them with max(), not sum()).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type pg from 'pg';
import type { Usage } from '../core/llm/types.js';
import { noteTransientDbError, transientDbErrors } from '../core/ledger/pg-retry.js';
import { TASK_QUEUE } from './fleet-db.js';

/** Task jobs take from well under a second (a zero-latency script) to many minutes (a real agent). */
const TASK_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800];

export class WorkerMetrics {
  readonly registry = new Registry();
  private readonly runsTotal: Counter<'outcome'>;
  private readonly tasksTotal: Counter<'outcome'>;
  private readonly taskSeconds: Histogram<'outcome'>;
  private readonly taskWaitSeconds: Histogram;
  private readonly modelCalls: Counter<'model'>;
  private readonly modelTokens: Counter<'model' | 'kind'>;
  private readonly modelUsd: Counter<'model'>;
  private readonly takeovers: Counter<'scope'>;
  private readonly outages: Counter;
  private readonly outageSeconds: Counter;

  constructor(o: { worker: string; inHand: () => { runs: number; tasks: number }; db?: pg.Pool }) {
    this.registry.setDefaultLabels({ worker: o.worker });
    collectDefaultMetrics({ register: this.registry });
    const registers = [this.registry];
    this.runsTotal = new Counter({ name: 'acia_worker_runs_total', help: 'Runs this worker ended, by outcome (a terminal reason, or dropped, refused, closed)', labelNames: ['outcome'], registers });
    this.tasksTotal = new Counter({ name: 'acia_worker_task_jobs_total', help: 'Task jobs this worker finished, by outcome', labelNames: ['outcome'], registers });
    this.taskSeconds = new Histogram({ name: 'acia_task_job_seconds', help: 'A task job on this worker, from dequeue to its output', labelNames: ['outcome'], buckets: TASK_BUCKETS, registers });
    this.taskWaitSeconds = new Histogram({ name: 'acia_task_job_wait_seconds', help: 'How long a task job waited in the queue before this worker took it', buckets: TASK_BUCKETS, registers });
    this.modelCalls = new Counter({ name: 'acia_model_calls_total', help: 'Model calls made by this worker', labelNames: ['model'], registers });
    this.modelTokens = new Counter({ name: 'acia_model_tokens_total', help: 'Tokens of this worker’s model calls, by kind (input, output, cache_read, cache_write)', labelNames: ['model', 'kind'], registers });
    this.modelUsd = new Counter({ name: 'acia_model_cost_usd_total', help: 'What this worker’s model calls cost, in US dollars (priced models only)', labelNames: ['model'], registers });
    this.takeovers = new Counter({ name: 'acia_lease_takeovers_total', help: 'Leases this worker took over from another worker (run: a run whose worker died; task: a task handed out again)', labelNames: ['scope'], registers });
    this.outages = new Counter({ name: 'acia_db_outages_total', help: 'Database outages this worker rode out', registers });
    this.outageSeconds = new Counter({ name: 'acia_db_outage_seconds_total', help: 'How long those outages lasted, in seconds', registers });
    new Counter({
      name: 'acia_db_errors_total',
      help: 'Transient database errors this worker waited out (connection refused or reset, server restarting)',
      registers,
      collect() {
        this.reset();
        this.inc(transientDbErrors());
      },
    });
    new Gauge({
      name: 'acia_worker_in_hand',
      help: 'Runs and task jobs this worker holds now',
      labelNames: ['kind'],
      registers,
      collect() {
        const now = o.inHand();
        this.set({ kind: 'run' }, now.runs);
        this.set({ kind: 'task' }, now.tasks);
      },
    });
    const db = o.db;
    if (db) {
      new Gauge({
        name: 'acia_fleet_runs',
        help: 'Fleet runs by status, as the database holds them at the scrape',
        labelNames: ['status'],
        registers,
        async collect() {
          this.reset();
          const r = await db.query<{ status: string; n: string }>('SELECT status, count(*) AS n FROM acia_runs GROUP BY status').catch(() => (noteTransientDbError(), null));
          for (const row of r?.rows ?? []) this.set({ status: row.status }, Number(row.n));
        },
      });
      new Gauge({
        name: 'acia_fleet_task_jobs',
        help: 'Fleet task jobs by pg-boss state, as the database holds them at the scrape',
        labelNames: ['state'],
        registers,
        async collect() {
          this.reset();
          const r = await db.query<{ state: string; n: string }>('SELECT state::text AS state, count(*) AS n FROM pgboss.job WHERE name = $1 GROUP BY 1', [TASK_QUEUE]).catch(() => (noteTransientDbError(), null));
          for (const row of r?.rows ?? []) this.set({ state: row.state }, Number(row.n));
        },
      });
    }
  }

  runEnded(outcome: string): void {
    this.runsTotal.inc({ outcome });
  }

  taskEnded(outcome: string, seconds: number, waitedSeconds: number | null): void {
    this.tasksTotal.inc({ outcome });
    this.taskSeconds.observe({ outcome }, seconds);
    if (waitedSeconds !== null) this.taskWaitSeconds.observe(Math.max(0, waitedSeconds));
  }

  modelCall(model: string, usage: Usage, usd: number | null): void {
    this.modelCalls.inc({ model });
    this.modelTokens.inc({ model, kind: 'input' }, usage.inputTokens);
    this.modelTokens.inc({ model, kind: 'output' }, usage.outputTokens);
    this.modelTokens.inc({ model, kind: 'cache_read' }, usage.cacheReadTokens);
    this.modelTokens.inc({ model, kind: 'cache_write' }, usage.cacheWriteTokens);
    if (usd !== null) this.modelUsd.inc({ model }, usd);
  }

  takeover(scope: 'run' | 'task'): void {
    this.takeovers.inc({ scope });
  }

  outage(ms: number): void {
    this.outages.inc();
    this.outageSeconds.inc(ms / 1000);
  }
}

/**
 * Serves GET /metrics on `host:port` (port 0: any free one); resolves with the address once listening.
 * 127.0.0.1 by default: the figures name runs' models and costs, which are not for everyone on the network.
 */
export async function serveMetrics(metrics: WorkerMetrics, o: { host: string; port: number }): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: GET /metrics\n');
      return;
    }
    metrics.registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(text),
      (e: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`metrics failed: ${e instanceof Error ? e.message : String(e)}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => resolve());
  });
  const a = server.address() as AddressInfo;
  const host = a.family === 'IPv6' ? `[${a.address}]` : a.address;
  return { url: `http://${host}:${a.port}/metrics`, close: () => new Promise((r) => server.close(() => r())) };
}
