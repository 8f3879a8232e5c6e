// The fleet commands' work: open the database, do one thing, print one line (or a table).
import { resolve } from 'node:path';
import { AciaError, errorMessage } from '../core/errors.js';
import { isTransientDbError, setDbOutageTolerance } from '../core/ledger/pg-retry.js';
import { forTerminal } from '../core/text/terminal.js';
import { freshPrivateDir, privateDir } from '../core/contain/private-dir.js';
import { loadConfig } from '../core/config/load.js';
import { databaseUrl, listFleetRuns, openFleet, openFleetClient, type DbFlag, type FleetClient } from '../fleet/fleet-db.js';
import { isRepoRule } from '../fleet/worker-policy.js';
import { readFleetStatus } from '../fleet/status.js';
import { renderFleetStatus } from './fleet-status-text.js';
import { exportRun } from '../fleet/export.js';
import { answerRun, submitRun } from '../fleet/submit.js';
import { startWorker } from '../fleet/worker.js';
import type { SubmitFlags, WorkerFlags } from './commands/fleet.js';

const positive = (v: string | undefined, name: string): number | undefined => {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new AciaError('USAGE', `${name} expects a positive number, got "${v}"`);
  return n;
};

/** Opens the fleet database as a client (the queue only for the tables' owner), runs `fn` on it, and closes it whatever happens. */
async function withFleet<T>(db: DbFlag, fn: (fleet: FleetClient) => Promise<T>): Promise<T> {
  const fleet = await openFleetClient(databaseUrl(db, process.env));
  try {
    return await fn(fleet);
  } finally {
    await fleet.close();
  }
}

export async function submitCommand(goal: string, f: SubmitFlags): Promise<number> {
  const settings: Record<string, unknown> = {
    ...(f.model === undefined ? {} : { model: f.model.startsWith('scripted:') ? `scripted:${resolve(f.model.slice(9))}` : f.model }),
    ...(f.parallel === undefined ? {} : { parallel: positive(f.parallel, '--parallel') }),
    ...(f.maxIterations === undefined ? {} : { maxIterations: Number(f.maxIterations) }),
    ...(f.maxCostUsd === undefined && f.maxTokens === undefined
      ? {}
      : { budget: { ...(f.maxCostUsd === undefined ? {} : { maxCostUsd: positive(f.maxCostUsd, '--max-cost-usd') }), ...(f.maxTokens === undefined ? {} : { maxTokens: positive(f.maxTokens, '--max-tokens') }) } }),
    ...(f.testCommand === undefined ? {} : { testCommand: f.testCommand }),
    ...(f.sandbox === undefined ? {} : { sandbox: f.sandbox }),
    ...(f.approvePlan === true ? { approvePlan: true } : {}),
  };
  return withFleet(f.db, async (fleet) => {
    const runId = await submitRun(fleet, { goal, repoUrl: f.repo, base: f.base ?? 'HEAD', settings, ...(f.label === undefined ? {} : { label: f.label }) });
    process.stdout.write(f.json ? `${JSON.stringify({ runId })}\n` : `queued ${runId} (watch it: acia runs --db ...)\n`);
    return 0;
  });
}

export async function workerCommand(f: WorkerFlags): Promise<number> {
  const concurrency = positive(f.concurrency, '--concurrency') ?? 1;
  const taskConcurrency = f.taskConcurrency === undefined ? concurrency : Number(f.taskConcurrency);
  if (!Number.isInteger(taskConcurrency) || taskConcurrency < 0) throw new AciaError('USAGE', `--task-concurrency expects a whole number (0 or more), got "${f.taskConcurrency}"`);
  setDbOutageTolerance((positive(f.dbPatience, '--db-patience') ?? 60) * 1000);
  // The worker's policy over submitted runs is its own config's, never a submitter's.
  const policy = loadConfig({ repo: null, env: process.env, flags: {} }).config.fleetWorker;
  const bad = policy.repos.find((r) => !isRepoRule(r));
  if (bad !== undefined) throw new AciaError('CONFIG_INVALID', `fleetWorker.repos: ${JSON.stringify(bad)} is not a repository URL prefix (https://host/path, ssh://user@host/path, git://host, file:///dir or an absolute path)`);
  const metricsPort = f.metricsPort === undefined ? undefined : Number(f.metricsPort);
  if (metricsPort !== undefined && (!Number.isInteger(metricsPort) || metricsPort < 0 || metricsPort > 65535)) throw new AciaError('USAGE', `--metrics-port expects a port number (0 for any free one), got "${f.metricsPort}"`);
  const forgetAfterHours = positive(f.forgetWorkersAfter, '--forget-workers-after');
  // Its mirrors' and clones' git config is trusted: another local user must not be able to plant one.
  const cacheDir = f.cache === undefined ? freshPrivateDir('acia-worker-') : privateDir(f.cache, '--cache');
  const fleet = await openFleet(databaseUrl(f.db, process.env));
  const log = (line: string) => process.stderr.write(`${line}\n`);
  if (policy.repos.length === 0) log('worker: fleetWorker.repos is empty in this worker’s config: every submitted run will be refused');
  // pg-boss records a job's end without awaiting it; while the database restarts that promise rejects
  // with nobody to catch it, which would kill the worker and its runs. Those (and only those: anything
  // else still crashes) are logged; the worker completes its jobs itself, with retries (fleet/worker).
  process.on('unhandledRejection', (e) => {
    if (!isTransientDbError(e)) throw e;
    log(`worker: the database is away (${errorMessage(e)}); carrying on`);
  });
  const worker = await startWorker(fleet, {
    concurrency,
    taskConcurrency,
    cacheDir,
    env: process.env,
    ...(f.name === undefined ? {} : { name: f.name }),
    log,
    policy,
    ...(metricsPort === undefined ? {} : { metricsAt: { host: f.metricsHost, port: metricsPort } }),
    ...(forgetAfterHours === undefined ? {} : { forgetAfterHours }),
  });
  await new Promise<void>((done) => {
    const stop = () => {
      log(`worker ${worker.name}: stopping after the runs in hand`);
      done();
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
  await worker.stop();
  await fleet.close();
  return 0;
}

export async function exportCommand(runId: string, f: { db?: DbFlag; repo: string }): Promise<number> {
  return withFleet(f.db, async (fleet) => {
    const r = await exportRun(fleet.db, runId, resolve(f.repo));
    process.stdout.write(`wrote ${r.dir}: ${r.entries} entries, ${r.blobs} blobs (check it: acia verify ${runId} --repo ${resolve(f.repo)})\n`);
    return 0;
  });
}

export async function listFleetRunsCommand(db: DbFlag, json: boolean): Promise<void> {
  await withFleet(db, async (fleet) => {
    const rows = await listFleetRuns(fleet.db);
    if (json) {
      process.stdout.write(`${JSON.stringify(rows)}\n`);
      return;
    }
    // A run that stopped short says why on the line below (a refused push, a requeue, an error).
    const why = (r: (typeof rows)[number]) => (r.message && !['succeeded', 'running'].includes(r.status) ? `\n    ${forTerminal(r.message.split('\n')[0]!.slice(0, 300))}` : '');
    const tasks = (r: (typeof rows)[number]) => (r.task_workers.length === 0 ? '' : `  (tasks on ${forTerminal(r.task_workers.join(', '))})`);
    const by = (r: (typeof rows)[number]) => `  (by ${forTerminal(r.submitter)}${r.submitter_label ? `, ${forTerminal(r.submitter_label.slice(0, 60))}` : ''})`;
    const lines = rows.map((r) => `${r.run_id}  ${r.status.padEnd(19)} ${forTerminal(r.worker ?? '-').padEnd(22)} ${r.cost_usd === null ? '       -' : `$${r.cost_usd.toFixed(4)}`}  ${forTerminal(r.goal.slice(0, 60))}${by(r)}${tasks(r)}${why(r)}`);
    process.stdout.write(`${rows.length === 0 ? 'no fleet runs' : lines.join('\n')}\n`);
  });
}

export async function resumeFleetCommand(runId: string | undefined, answer: string | undefined, db: DbFlag): Promise<number> {
  if (runId === undefined) throw new AciaError('USAGE', 'a fleet run is resumed by its id: acia resume <runId> [--answer "..."] --db <url>');
  return withFleet(db, async (fleet) => {
    await answerRun(fleet, runId, answer);
    process.stdout.write(`queued ${runId}${answer === undefined ? '' : ' with your answer'}; a worker resumes it (watch it: acia runs --db ...)\n`);
    return 0;
  });
}

export async function fleetStatusCommand(db: DbFlag, json: boolean): Promise<number> {
  return withFleet(db, async (fleet) => {
    const st = await readFleetStatus(fleet);
    process.stdout.write(json ? `${JSON.stringify(st)}\n` : `${renderFleetStatus(st)}\n`);
    return 0;
  });
}
