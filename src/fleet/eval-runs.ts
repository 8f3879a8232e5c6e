// `acia eval --db`: each instance's run goes to the fleet instead of running here. The instance's fresh
// checkout (made and graded on this machine, exactly as without --db) is pushed to a bare repository the
// workers can clone and push to; the run is submitted at its base commit with the instance's settings;
// once it ends, its run branch is fetched back and its ledger exported into the checkout, so grading,
// the grade entry, the wiki and the report are the local eval's, on the same kind of run directory.
import { mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { systemClock } from '../core/acm/ids.js';
import { AciaError } from '../core/errors.js';
import { retryTransient } from '../core/ledger/pg-retry.js';
import { TerminalReason } from '../core/ledger/run-vocabulary.js';
import { foldRun } from '../core/run/reducer.js';
import { roleCosts } from '../core/run/state.js';
import { readLedgerEntries } from '../core/ledger/line-reader.js';
import { LEDGER_FILE } from '../core/ledger/file-ledger.js';
import { parseLedgerValue, type LedgerEntry } from '../core/ledger/entry.js';
import { Git } from '../team/git.js';
import type { RunResult } from '../team/run-end.js';
import { cancelFleetRun } from './cancel.js';
import { exportRun } from './export.js';
import type { FleetClient } from './fleet-db.js';
import { remoteGit } from './remote-git.js';
import { submitRun } from './submit.js';

export interface FleetEvalOptions {
  /** Where each instance's bare repository goes: a place every worker may clone from and push to (its `fleetWorker.repos`). */
  remotesDir: string;
  /** How long one instance's run may take on the fleet, queue included. */
  timeoutMs: number;
  signal?: AbortSignal;
  pollMs?: number;
}

export interface FleetInstance {
  instance_id: string;
  goal: string;
  /** What `acia submit` would send: model, testCommand, sandbox, budget. */
  settings: Record<string, unknown>;
}

/**
 * Runs one instance on the fleet from its checkout `repo` (HEAD at the base commit) and returns the run's
 * result as a local run would, its ledger exported to `repo/.acia/runs/<runId>`. Returns null when the
 * eval was interrupted (the fleet run is cancelled).
 */
export async function runInstanceOnFleet(fleet: FleetClient, repo: string, inst: FleetInstance, o: FleetEvalOptions): Promise<RunResult | null> {
  const git = new Git(systemClock);
  const base = await git.head(repo);
  mkdirSync(o.remotesDir, { recursive: true });
  const remote = resolve(o.remotesDir, `${inst.instance_id}.git`);
  rmSync(remote, { recursive: true, force: true });
  await remoteGit(o.remotesDir, ['clone', '-q', '--bare', '--', repo, remote]);
  const runId = await submitRun(fleet, { goal: inst.goal, repoUrl: remote, base, settings: inst.settings, label: `acia eval ${inst.instance_id}` });
  const deadline = Date.now() + o.timeoutMs;
  let status = 'queued';
  while (['queued', 'running'].includes(status) || (status === 'error' && !(await sessionEnded(fleet, runId)))) {
    if (o.signal?.aborted) {
      await cancelFleetRun(fleet, runId, { wait: false }).catch(() => undefined);
      return null;
    }
    if (Date.now() > deadline) {
      await cancelFleetRun(fleet, runId, { wait: false }).catch(() => undefined);
      throw new AciaError('INTERNAL', `fleet run ${runId} for ${inst.instance_id} did not end within ${Math.round(o.timeoutMs / 1000)} s; it was cancelled`, { hint: 'are workers running on this database, and do their fleetWorker.repos and scriptedModelDirs allow the eval?' });
    }
    await new Promise((r) => setTimeout(r, o.pollMs ?? 250));
    const row = (await retryTransient(() => fleet.db.query<{ status: string; message: string | null }>('SELECT status, message FROM acia_runs WHERE run_id = $1', [runId]))).rows[0];
    status = row?.status ?? 'missing';
    // Refused by the workers' policy: the run never started, and the eval cannot go on like this.
    if (status === 'error' && row?.message?.includes("refused by the worker's policy")) throw new AciaError('FLEET_POLICY', `${inst.instance_id}: ${row.message}`);
  }
  // The run's branch as the fleet left it, next to the base it started from.
  const runBranch = `acia/${runId}`;
  await remoteGit(repo, ['fetch', '-q', '--', remote, `+refs/heads/${runBranch}:refs/heads/${runBranch}`], { allowFail: true });
  const exported = await exportRun(fleet.db, runId, repo);
  const entries: LedgerEntry[] = [];
  for await (const e of readLedgerEntries(join(exported.dir, LEDGER_FILE))) entries.push(e);
  const state = foldRun(entries);
  const done = state.completed;
  const reason = TerminalReason.safeParse(done?.reason ?? status);
  return {
    runId,
    reason: reason.success ? reason.data : 'error',
    message: done?.message ?? `the fleet run ended ${status}`,
    runBranch,
    runDir: exported.dir,
    headCommit: done?.headCommit ?? null,
    filesChanged: done?.filesChanged ?? [],
    costUsd: state.costKnown ? Math.round(state.costUsd * 1e6) / 1e6 : null,
    tokens: state.tokens,
    roleCosts: roleCosts(state),
  };
}

/**
 * Whether the run's ledger ends with RUN_COMPLETED. A run whose job failed (a database outage past the
 * worker's patience) is `error` in its row with no RUN_COMPLETED, and pg-boss hands it out again: it is
 * not over, and grading it now would grade half a run. (Its retries spent, it waits out --run-timeout.)
 */
async function sessionEnded(fleet: FleetClient, runId: string): Promise<boolean> {
  const r = await retryTransient(() => fleet.db.query<{ line: string }>('SELECT line FROM acia_ledger WHERE run_id = $1 ORDER BY seq DESC LIMIT 1', [runId]));
  const last = r.rows[0];
  return last !== undefined && parseLedgerValue(JSON.parse(last.line), `fleet run ${runId}'s last ledger row`).type === 'RUN_COMPLETED';
}

/** The bare repositories an eval made for the fleet, under `out` unless the user chose elsewhere. */
export function defaultRemotesDir(out: string): string {
  return join(out, 'remotes');
}
