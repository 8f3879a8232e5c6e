// The fleet's figures (issue 18), on a real PostgreSQL started here (Debian's binaries) and real
// `acia worker` processes taking runs from it:
//   fleet_throughput_runs_per_min (W workers, 8 by default) / fleet_throughput_runs_per_min_3_workers /
//     fleet_peak_rss_mb_per_worker: N queued scripted runs of the `happy` demo (zero latency) taken by W
//     and by 3 worker processes (concurrency 1 each);
//   fleet_coordination_ms_dequeue_to_agent / fleet_coordination_ms_agent_to_merged: per Dev task, median,
//     with what each step of the hand-over costs in their detail;
//   fleet_parallel_speedup_4_workers: the `parallel` demo (its scripted latencies) on 4 workers against 1.
// Run on its own: `npm run build && node bench/fleet.mjs [--quick] [--runs N] [--workers W] [--pairs P]`
// (merges its figures into bench/results.json), or as part of `npm run bench`.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chownSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { CLI, ROOT, SCENARIOS, median, round, scratch, scriptWithLatency } from './util.mjs';

// ---- a throwaway PostgreSQL cluster (as tests/helpers/postgres.ts) ----

function postgresBin() {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const v = readdirSync(root).filter((x) => existsSync(join(root, x, 'bin', 'pg_ctl'))).sort((a, b) => Number(b) - Number(a))[0];
  return v ? join(root, v, 'bin') : null;
}

const freePort = () =>
  new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

async function startPostgres(bin) {
  const dir = scratch('fleet-pg');
  const data = join(dir, 'data');
  const asRoot = process.getuid?.() === 0;
  if (asRoot) chownSync(dir, Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })), Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' })));
  const run = (cmd, args) => {
    const argv = asRoot ? ['runuser', '-u', 'postgres', '--', join(bin, cmd), ...args] : [join(bin, cmd), ...args];
    const r = spawnSync(argv[0], argv.slice(1), { encoding: 'utf8', cwd: dir });
    if (r.status !== 0) throw new Error(`${cmd}: ${r.stderr || r.stdout}`);
  };
  run('initdb', ['-D', data, '-U', 'acia', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  const port = await freePort();
  // 8 workers hold up to 8 + 4 connections each: more than the default 100 leaves no headroom.
  run('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-w', '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=300`, 'start']);
  return {
    url: `postgres://acia@127.0.0.1:${port}/postgres`,
    stop: () => {
      run('pg_ctl', ['-D', data, '-m', 'immediate', 'stop']);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

// ---- a fleet: a bare remote of the demo repo, workers, submitted runs ----

function bareRemote(root) {
  const repo = join(root, 'repo');
  cpSync(join(SCENARIOS, '_base'), repo, { recursive: true });
  const g = (cwd, ...args) => execFileSync('git', args, { cwd, stdio: 'ignore' });
  g(repo, 'init', '-q', '-b', 'main');
  g(repo, 'add', '-A');
  g(repo, '-c', 'user.name=b', '-c', 'user.email=b@example.com', 'commit', '-q', '-m', 'initial');
  const remote = join(root, 'app.git');
  g(root, 'clone', '-q', '--bare', repo, remote);
  return remote;
}

/** The workers' own config: their policy serves the bench's remotes and scripts (an empty policy refuses every run). */
function workerConfigHome(root) {
  const home = join(root, 'worker-xdg');
  mkdirSync(join(home, 'acia'), { recursive: true });
  writeFileSync(join(home, 'acia', 'config.json'), JSON.stringify({ fleetWorker: { repos: [root], scriptedModelDirs: [root] } }));
  return home;
}

function startWorkers(url, root, n, tag) {
  const env = { ...process.env, XDG_CONFIG_HOME: workerConfigHome(root) };
  return Array.from({ length: n }, (_, i) => {
    const name = `${tag}-${i + 1}`;
    const child = spawn(process.execPath, [CLI, 'worker', '--db', url, '--concurrency', '1', '--name', name, '--cache', join(root, `cache-${name}`)], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let log = '';
    child.stderr.on('data', (d) => (log = (log + d).slice(-4000)));
    return { name, child, log: () => log };
  });
}

/** Peak resident set of a process so far (VmHWM), in MB. */
const peakRssMb = (pid) => {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
};

async function stopWorkers(workers) {
  await Promise.all(
    workers.map(
      (w) =>
        new Promise((resolve) => {
          if (w.child.exitCode !== null) return resolve();
          w.child.once('exit', resolve);
          w.child.kill('SIGTERM');
          setTimeout(() => w.child.kill('SIGKILL'), 20_000).unref();
        }),
    ),
  );
}

/** Queues runs in-process with what `acia submit` does (a CLI process per run would dominate the set-up). */
async function submitMany(url, remote, scenario, scriptFile, count) {
  const { openFleet } = await import('../dist/fleet/fleet-db.js');
  const { submitRun } = await import('../dist/fleet/submit.js');
  const s = JSON.parse(readFileSync(join(SCENARIOS, scenario, 'scenario.json'), 'utf8'));
  const fleet = await openFleet(url, { queue: false });
  try {
    const ids = [];
    const settings = { model: `scripted:${scriptFile}`, testCommand: s.settings.testCommand, parallel: s.settings.parallel, maxIterations: s.settings.maxIterations };
    for (let i = 0; i < count; i++) ids.push(await submitRun(fleet, { goal: s.goal, repoUrl: remote, base: 'main', settings }));
    return ids;
  } finally {
    await fleet.close();
  }
}

async function waitForRuns(db, ids, timeoutMs, workers) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const rows = (await db.query("SELECT run_id, status FROM acia_runs WHERE run_id = ANY($1) AND status NOT IN ('queued', 'running')", [ids])).rows;
    if (rows.length === ids.length) return rows;
    if (Date.now() > end) throw new Error(`${ids.length - rows.length} of ${ids.length} runs still unfinished after ${timeoutMs / 1000} s; a worker said: ${workers[0]?.log()}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

const entriesOf = async (db, runId) => (await db.query('SELECT line FROM acia_ledger WHERE run_id = $1 ORDER BY seq', [runId])).rows.map((r) => JSON.parse(r.line));
const at = (e) => Date.parse(e.ts);

/**
 * Coordination per Dev task, from the ledger (and pg-boss's job rows once tasks are jobs of their own):
 * - dequeue -> agent start: from the moment the task was handed to a worker (a task job's started_on when
 *   one exists for it; today, when every task runs where its run is, TASK_STARTED) to the agent's first
 *   model request (the first LLM_CALL's ts minus its durationMs);
 * - agent end -> merged: from the agent's last reply (its last LLM_CALL) to the task's MERGE entry
 *   (checkpoint commit, push, merge into the run branch, push).
 */
async function coordination(db, runIds) {
  // The last hand-out of each task (a task handed out again has several jobs; the one that finished counts).
  const jobRows = (await db.query("SELECT data->>'runId' AS run_id, data->>'taskId' AS task_id, created_on, started_on, completed_on FROM pgboss.job WHERE data ? 'taskId' AND started_on IS NOT NULL ORDER BY started_on")).rows;
  const taskJobs = new Map(jobRows.map((r) => [`${r.run_id}/${r.task_id}`, r.started_on.getTime()]));
  const jobOf = new Map(jobRows.map((r) => [`${r.run_id}/${r.task_id}`, r]));
  // The run's own dequeue: its (first) job's started_on -> RUN_STARTED (clone, fetch, set-up on the worker).
  const runJobs = new Map(
    (await db.query("SELECT DISTINCT ON (data->>'runId') data->>'runId' AS run_id, started_on FROM pgboss.job WHERE name = 'acia-runs' AND started_on IS NOT NULL ORDER BY data->>'runId', started_on")).rows.map((r) => [r.run_id, r.started_on.getTime()]),
  );
  const toAgent = [];
  const toMerged = [];
  const toCheckpoint = [];
  const runStart = [];
  // A hand-over step by step (ms, per Dev task): queue wait (created -> started_on), checkout (started_on ->
  // TASK_STARTED), agent set-up (TASK_STARTED -> first model request), checkpoint (last reply -> CHECKPOINT:
  // commit and push of the task branch), merge (CHECKPOINT -> MERGE: lock, fetch, merge, push), job done
  // (MERGE -> the job's completed_on; the orchestrator's 100 ms poll then sees it).
  const steps = { queueWait: [], checkout: [], agentSetup: [], checkpoint: [], merge: [], jobDone: [] };
  for (const runId of runIds) {
    const entries = await entriesOf(db, runId);
    const runStarted = entries.find((e) => e.type === 'RUN_STARTED');
    if (runStarted && runJobs.has(runId)) runStart.push(at(runStarted) - runJobs.get(runId));
    const tasks = new Set(entries.filter((e) => e.type === 'TASK_STARTED' && String(e.actor) === 'team').map((e) => e.data.taskId));
    for (const task of tasks) {
      const mine = entries.filter((e) => e.data?.taskId === task || e.actor === `dev:${task}`);
      const started = mine.find((e) => e.type === 'TASK_STARTED');
      const calls = entries.filter((e) => e.type === 'LLM_CALL' && e.actor === `dev:${task}`);
      const merge = mine.find((e) => e.type === 'MERGE');
      const checkpoint = mine.find((e) => e.type === 'CHECKPOINT');
      if (checkpoint) toCheckpoint.push(at(checkpoint) - at(calls.at(-1)));
      if (!started || calls.length === 0) continue;
      const handed = taskJobs.get(`${runId}/${task}`) ?? at(started);
      const firstRequest = at(calls[0]) - calls[0].data.durationMs;
      toAgent.push(firstRequest - handed);
      if (merge) toMerged.push(at(merge) - at(calls.at(-1)));
      const job = jobOf.get(`${runId}/${task}`);
      // The attempt that finished: its TASK_STARTED is the last one.
      const lastStart = mine.findLast((e) => e.type === 'TASK_STARTED');
      steps.agentSetup.push(firstRequest - at(lastStart));
      if (checkpoint) steps.checkpoint.push(at(checkpoint) - at(calls.at(-1)));
      if (checkpoint && merge) steps.merge.push(at(merge) - at(checkpoint));
      if (!job) continue;
      steps.queueWait.push(job.started_on.getTime() - job.created_on.getTime());
      steps.checkout.push(at(lastStart) - job.started_on.getTime());
      if (merge && job.completed_on) steps.jobDone.push(job.completed_on.getTime() - at(merge));
    }
  }
  return { toAgent, toMerged, toCheckpoint, runStart, steps, taskJobs: taskJobs.size };
}

// ---- the figures ----

async function throughput(url, root, { runs, workers: n, log }) {
  const remote = bareRemote(join(root, `tp-${n}`));
  const script = join(root, 'happy-0ms.json');
  writeFileSync(script, JSON.stringify(scriptWithLatency('happy', 0)));
  // Submitted before any worker starts: the queue holds all of them, as in a backlog.
  const ids = await submitMany(url, remote, 'happy', script, runs);
  log(`  ${runs} runs queued; ${n} workers start`);
  const db = new pg.Pool({ connectionString: url, max: 2 });
  const workers = startWorkers(url, root, n, `tp${n}`);
  const t0 = Date.now();
  try {
    const rows = await waitForRuns(db, ids, 60 * 60_000, workers);
    const wallMs = Date.now() - t0;
    const rss = workers.map((w) => peakRssMb(w.child.pid));
    const statuses = {};
    for (const r of rows) statuses[r.status] = (statuses[r.status] ?? 0) + 1;
    // Refused or failed runs end in milliseconds: a set that did not all succeed measures nothing.
    if (statuses.succeeded !== runs) throw new Error(`${n} workers: runs ended ${JSON.stringify(statuses)}, not all succeeded; a worker said: ${workers[0]?.log()}`);
    const runsPerWorker = Object.fromEntries((await db.query('SELECT worker, count(*)::int AS n FROM acia_runs WHERE run_id = ANY($1) GROUP BY worker ORDER BY worker', [ids])).rows.map((r) => [r.worker, r.n]));
    const c = await coordination(db, ids);
    log(`  ${runs} runs in ${round(wallMs / 1000, 1)} s; peak RSS per worker max ${round(Math.max(...rss), 1)} MB; dequeue->agent ${round(median(c.toAgent), 1)} ms, agent->merged ${round(median(c.toMerged), 1)} ms`);
    // detail: as fleet_throughput_runs_per_min reports it.
    return { detail: { wallMs, statuses, runsPerWorker }, rss, coordination: c };
  } finally {
    await stopWorkers(workers);
    await db.end();
  }
}

/** The `parallel` demo (4 Dev tasks, 2.5 s per scripted reply) on a fleet of `n` workers: submit to finished. */
async function parallelOn(url, root, n, i) {
  const remote = bareRemote(join(root, `par-${n}-${i}`));
  const script = join(root, 'parallel.json');
  writeFileSync(script, readFileSync(join(SCENARIOS, 'parallel', 'script.json')));
  const db = new pg.Pool({ connectionString: url, max: 2 });
  const workers = startWorkers(url, root, n, `par${n}x${i}`);
  try {
    // Workers first, so the figure is the run's own time, not the workers' start-up.
    for (let k = 0; k < 100 && (await db.query('SELECT count(*)::int AS n FROM acia_workers WHERE name LIKE $1 AND NOT stopped', [`par${n}x${i}-%`])).rows[0].n < n; k++) await new Promise((r) => setTimeout(r, 100));
    const t0 = Date.now();
    const [runId] = await submitMany(url, remote, 'parallel', script, 1);
    const [row] = await waitForRuns(db, [runId], 10 * 60_000, workers);
    const wallMs = Date.now() - t0;
    const entries = await entriesOf(db, runId);
    const ledgerMs = at(entries.findLast((e) => e.type === 'RUN_COMPLETED')) - at(entries.find((e) => e.type === 'RUN_STARTED'));
    const ranOn = (await db.query('SELECT worker FROM acia_runs WHERE run_id = $1', [runId])).rows[0].worker;
    return { wallMs, ledgerMs, status: row.status, ranOn };
  } finally {
    await stopWorkers(workers);
    await db.end();
  }
}

/** A per-Dev-task coordination figure (ms, goal <= 50): the median of `samples`, their count and p90 in its detail. */
function coordinationFigure(samples, how, goalMs, detail) {
  const value = median(samples);
  const p90 = [...samples].sort((a, b) => a - b)[Math.floor(samples.length * 0.9)] ?? NaN;
  return { value: round(value, 1), unit: 'ms', how, goal: `<= ${goalMs}`, met: value <= goalMs, detail: { tasks: samples.length, p90: round(p90, 1), ...detail } };
}

const medians = (steps) => Object.fromEntries(Object.entries(steps).map(([k, v]) => [`${k}Ms`, v.length === 0 ? null : round(median(v), 1)]));

export async function fleetFigures({ quick = false, runs = quick ? 40 : 200, workers = 8, pairs = quick ? 1 : 2, log = () => {} } = {}) {
  const bin = postgresBin();
  if (!bin) {
    const na = (goal) => ({ value: null, unit: '', how: 'not measured: no PostgreSQL server binaries under /usr/lib/postgresql', goal, met: null });
    return { fleet_throughput_runs_per_min: na(null), fleet_coordination_ms_dequeue_to_agent: na('<= 100'), fleet_coordination_ms_agent_to_merged: na('<= 300'), fleet_parallel_speedup_4_workers: na('>= 3.2') };
  }
  const server = await startPostgres(bin);
  const root = scratch('fleet');
  try {
    const tp3 = await throughput(server.url, root, { runs, workers: 3, log });
    const tp = await throughput(server.url, root, { runs, workers, log });
    const ratios = [];
    const pairsDetail = [];
    for (let i = 0; i < pairs; i++) {
      const order = i % 2 === 0 ? [4, 1] : [1, 4];
      const got = {};
      for (const n of order) got[n] = await parallelOn(server.url, root, n, i);
      ratios.push(got[1].wallMs / got[4].wallMs);
      pairsDetail.push({ oneWorker: got[1], fourWorkers: got[4] });
      log(`  parallel pair ${i + 1}: 1 worker ${round(got[1].wallMs / 1000, 1)} s, 4 workers ${round(got[4].wallMs / 1000, 1)} s`);
    }
    const speedup = median(ratios);
    // Coordination over both throughput sets' Dev tasks.
    const c = Object.fromEntries(Object.keys(tp.coordination).map((k) => [k, k === 'taskJobs' ? tp.coordination[k] + tp3.coordination[k] : k === 'steps' ? Object.fromEntries(Object.keys(tp.coordination.steps).map((s) => [s, [...tp.coordination.steps[s], ...tp3.coordination.steps[s]]])) : [...tp.coordination[k], ...tp3.coordination[k]]]));
    const distributed = c.taskJobs > 0;
    const where = `${runs} queued \`happy\` runs (zero-latency scripted model, sandbox auto) taken by ${workers} \`acia worker\` processes (--concurrency 1) on one PostgreSQL 15 (fsync off) on this ${(await import('node:os')).cpus().length}-CPU machine`;
    return {
      fleet_throughput_runs_per_min: {
        value: round((runs / tp.detail.wallMs) * 60_000, 1),
        unit: 'runs/min',
        how: `${where}: runs / (first worker started -> last run finished); bench/fleet.mjs`,
        goal: null,
        met: null,
        detail: tp.detail,
      },
      fleet_throughput_runs_per_min_3_workers: {
        value: round((runs / tp3.detail.wallMs) * 60_000, 1),
        unit: 'runs/min',
        how: `as fleet_throughput_runs_per_min, with 3 workers`,
        goal: null,
        met: null,
        detail: tp3.detail,
      },
      fleet_peak_rss_mb_per_worker: {
        value: round(Math.max(...tp.rss, ...tp3.rss), 1),
        unit: 'MB',
        how: `the largest VmHWM (peak resident set) of the worker processes after their ${runs} runs (the worker's node process; git, tests and sandboxes it spawns are not counted)`,
        goal: null,
        met: null,
        detail: { perWorkerMb: { [workers]: tp.rss.map((x) => round(x, 1)), 3: tp3.rss.map((x) => round(x, 1)) } },
      },
      fleet_coordination_ms_dequeue_to_agent: coordinationFigure(
        c.toAgent,
        `median over the Dev tasks of those runs: ${distributed ? "the task job's started_on (pg-boss)" : 'TASK_STARTED (tasks are not jobs of their own yet: they run on the worker holding the run)'} -> the agent's first model request (first LLM_CALL ts - durationMs)`,
        100,
        // Per run, not per task: the run job's started_on (pg-boss) -> RUN_STARTED (clone, fetch, set-up).
        { medianRunJobToRunStartedMs: round(median(c.runStart), 1), handOverMedians: medians(c.steps) },
      ),
      fleet_coordination_ms_agent_to_merged: coordinationFigure(
        c.toMerged,
        'median over the same Dev tasks: the agent\'s last LLM_CALL -> the task\'s MERGE entry (checkpoint commit, push of acia-tasks/<run>/<task>, merge into acia/<run>, push)',
        300,
        // Where it goes: up to CHECKPOINT is the commit and the push of the task branch; the rest, the merge and the run branch's push.
        { medianToCheckpointMs: round(median(c.toCheckpoint), 1) },
      ),
      fleet_parallel_speedup_4_workers: {
        value: round(speedup),
        unit: 'x',
        how: `the \`parallel\` demo (4 Dev tasks, 2.5 s per scripted reply, --parallel 4) submitted to a fleet of 1 worker and of 4 workers (--concurrency 1 each): submit -> finished, 1 worker over 4, median of ${pairs} interleaved pair(s). ${distributed ? '' : 'Today a run and all its tasks stay on the worker that leased it, so both sides run the same way and this is ~1: the figure measures task-level distribution once it lands.'}`,
        goal: '>= 3.2',
        met: speedup >= 3.2,
        detail: { ratios: ratios.map((r) => round(r)), pairs: pairsDetail },
      },
    };
  } finally {
    server.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

// On its own: measure, then merge these figures into bench/results.json (other figures untouched).
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  // --runs N, --workers W, --pairs P where given; the rest keep fleetFigures' defaults.
  const given = ['runs', 'workers', 'pairs'].filter((name) => args.includes(`--${name}`)).map((name) => [name, Number(args[args.indexOf(`--${name}`) + 1])]);
  const figures = await fleetFigures({ quick: args.includes('--quick'), ...Object.fromEntries(given), log: (m) => process.stderr.write(`${m}\n`) });
  process.stdout.write(`${JSON.stringify(figures, null, 2)}\n`);
  if (!args.includes('--no-write')) {
    const file = join(ROOT, 'bench', 'results.json');
    const results = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
    writeFileSync(file, `${JSON.stringify({ ...results, ...figures, _meta: results._meta }, null, 2)}\n`);
  }
}
