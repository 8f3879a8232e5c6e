// What a run's ledger says about whether it can go on, read without taking the run's lock: for
// `acia resume` without an id and for `acia clean`.
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { listRunIds, runDirOf } from '../core/contain/acia-state.js';
import { readRegularFile } from '../core/contain/no-follow.js';
import type { LedgerEntry } from '../core/ledger/entry.js';
import { parseLedgerLine } from '../core/ledger/line-reader.js';
import { AciaError } from '../core/errors.js';
import { finishedReason, foldRun, openEscalation, type RunState } from './run-state.js';

export interface RunStatus {
  runId: string;
  startedAt: string;
  /** The last entry's time: when the run last did anything. */
  lastAt: string;
  /** Why the run cannot go on, or null. */
  finished: string | null;
  /** An open question for a human (including a budget stop). */
  awaitingHuman: boolean;
  /** RUN_COMPLETED's reason of the last session, or null when none ended cleanly. */
  reason: string | null;
  /** Whether the run started any task: from then on its branch holds its work, and resuming needs it. */
  startedWork: boolean;
  /** A process on this host holds the run's writer lock and is alive: the run is going on right now. */
  live: boolean;
}

/** The status of every run under `<repo>/.acia/runs` that has started, oldest first. */
export async function listRunStatuses(repo: string): Promise<RunStatus[]> {
  // Run ids and directories as the containment module checks them: a `.acia/runs` link is refused, and a
  // name that is not a run id (`.ssh`, one with a slash) is never a run.
  const runs: RunStatus[] = [];
  await Promise.resolve();
  for (const id of listRunIds(repo)) {
    const entries = readLedgerFile(join(runDirOf(repo, id), 'ledger.jsonl'));
    if (entries === null) continue;
    const state = foldRun(entries);
    if (!state.started) continue;
    runs.push({
      runId: id,
      startedAt: entries[0]?.ts ?? '',
      lastAt: entries.at(-1)?.ts ?? '',
      finished: finishedReason(state),
      awaitingHuman: openEscalation(state) !== null,
      reason: state.completed?.reason ?? null,
      startedWork: hasStartedWork(state),
      live: lockHeldByLiveProcess(runDirOf(repo, id)),
    });
  }
  runs.sort((a, b) => (a.startedAt < b.startedAt ? -1 : a.startedAt > b.startedAt ? 1 : a.runId.localeCompare(b.runId)));
  return runs;
}

/**
 * The newest run that `acia resume` can continue: one waiting for a human, stopped by its budget,
 * interrupted or errored. Finished runs (succeeded, verification failed, aborted by a human) are
 * passed over, and when the newest run is one of them the error says so.
 */
export async function latestResumableRun(repo: string, branchExists?: (branch: string) => Promise<boolean>): Promise<string> {
  const runs = await listRunStatuses(repo);
  const unfinished = runs.filter((r) => r.finished === null);
  const last = unfinished.at(-1);
  if (last) {
    // Its branch gone (acia clean): refuse, naming it, rather than silently pick an older run.
    if (branchExists && last.startedWork && !(await branchExists(`acia/${last.runId}`))) {
      const older = [];
      for (const r of unfinished.slice(0, -1).reverse()) if (!r.startedWork || (await branchExists(`acia/${r.runId}`))) older.push(r.runId);
      throw cleanedRun(last.runId, older[0]);
    }
    return last.runId;
  }
  const newest = runs.at(-1);
  if (newest) {
    throw new AciaError('RUN_FINISHED', `no run in ${repo} can go on: the latest, ${newest.runId}, is finished (${newest.finished ?? ''})`, {
      hint: 'start a new run with `acia run "<task>"`',
    });
  }
  throw new AciaError('RUN_NOT_FOUND', `no unfinished run in ${repo}`, { hint: 'start one with `acia run "<task>"`' });
}

/** Whether any task of the run started: from then on the run's branch holds its work. */
export function hasStartedWork(state: RunState): boolean {
  return [...state.tasks.values()].some((t) => t.attempts > 0);
}

/** The error for resuming a run whose branch `acia clean` removed; `older` names one that can still go on. */
export function cleanedRun(runId: string, older?: string): AciaError {
  return new AciaError('RUN_FINISHED', `run ${runId} cannot be resumed: its branch acia/${runId} is gone (\`acia clean\` removed it), and with it the work the ledger records`, {
    hint: older === undefined ? 'start a new run with `acia run "<task>"`' : `resume an older run with \`acia resume ${older}\`, or start a new one with \`acia run "<task>"\``,
  });
}

/** True when the run's lock file names a process on this host that is alive (a listing must not wait on it). */
function lockHeldByLiveProcess(runDir: string): boolean {
  let owner: { pid?: unknown; host?: unknown };
  try {
    const bytes = readRegularFile(runDir, join(runDir, 'lock'));
    if (bytes === null) return false;
    owner = JSON.parse(bytes.toString('utf8')) as { pid?: unknown; host?: unknown };
  } catch {
    return false;
  }
  if (typeof owner.pid !== 'number' || owner.host !== hostname()) return false;
  try {
    process.kill(owner.pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A run's ledger entries read without taking its lock (a listing must not block a live run); null when unreadable. */
function readLedgerFile(file: string): LedgerEntry[] | null {
  let text: string;
  try {
    const bytes = readRegularFile(dirname(file), file);
    if (bytes === null) return null;
    text = bytes.toString('utf8');
  } catch {
    return null;
  }
  const entries: LedgerEntry[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      entries.push(parseLedgerLine(line, file));
    } catch {
      // A torn last line of a crashed session: the entries before it are what counts.
      break;
    }
  }
  return entries;
}
