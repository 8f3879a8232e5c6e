// What a front end does before a run starts or resumes, outside any terminal: find the repository and
// the run (a resumed one is checked against the user's anchors first), load the config with that run's
// recorded settings as a layer, check the model can be reached, read the plan or Context Packet a command
// was given, and start the git checks the run needs while the rest is prepared.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { systemClock } from '../core/acm/ids.js';
import { loadConfig, type IgnoredRepoKeys, type RecordedSettings } from '../core/config/load.js';
import type { Config } from '../core/config/schema.js';
import { requireRunDir } from '../core/contain/acia-state.js';
import { guardAciaState } from '../core/contain/clone-guard.js';
import { AciaError } from '../core/errors.js';
import { readLedgerEntries } from '../core/ledger/line-reader.js';
import { foldRun } from '../core/run/reducer.js';
import { recordedSettings } from '../core/run/settings.js';
import type { TeamDeps } from '../team/deps.js';
import { Git, probeRepo, type RepoFacts } from '../team/git.js';
import { latestResumableRun, notStarted, resumeRun, startRun, type RunResult } from '../team/team.js';
import { checkResumable, preflightModel } from './build-deps.js';
import { readContextPacket, readPlanFile } from './plan-files.js';

export type RunKind =
  | { kind: 'run'; goal: string; includeUncommitted?: boolean; forceUncommitted?: boolean }
  | { kind: 'resume'; runId?: string; answer?: string }
  | { kind: 'plan'; goal: string; out?: string; context?: string }
  | { kind: 'exec'; file: string; goal?: string; rebindContext?: boolean };

export interface RunTarget {
  /** With the resumed run's id filled in. */
  what: RunKind;
  repo: string;
  git: Git;
  facts: RepoFacts;
  /** For a resume: the settings the run recorded (its model among them). */
  recorded: RecordedSettings | null;
  /** Whether the working tree has uncommitted changes (asked only when it matters: a new run, --apply). */
  dirty: Promise<boolean>;
  /** `guardAciaState` for a new run, started early; startRun awaits it. */
  stateGuard: Promise<void> | undefined;
}

/** The repository and the run a command is about; for a resume, checked and its recorded settings read. */
export async function locateRun(what: RunKind, o: { dir: string; env: NodeJS.ProcessEnv; apply?: boolean }): Promise<RunTarget> {
  const git = new Git(systemClock);
  const facts = await probeRepo(git, o.dir);
  const repo = facts.root;
  // Asked once, while the config is read and the deps are built.
  const dirty = o.apply || (what.kind === 'run' && !what.includeUncommitted) ? git.isDirty(repo) : Promise.resolve(false);
  dirty.catch(() => undefined);
  // So is the check that the clone does not ship ACIA's own state (a git process too); startRun awaits it.
  const stateGuard = what.kind === 'run' ? guardAciaState(repo) : undefined;
  stateGuard?.catch(() => undefined);
  let recorded: RecordedSettings | null = null;
  if (what.kind === 'resume') {
    const runId = what.runId ?? (await latestResumableRun(repo));
    what = { ...what, runId };
    recorded = await resumableSettings(o.env, repo, runId);
  }
  return { what, repo, git, facts, recorded, dirty, stateGuard };
}

export interface PrepareOptions {
  /** Config values given for this command (flags); over everything else, the recorded settings included. */
  flags: Partial<Record<keyof Config, unknown>>;
  env: NodeJS.ProcessEnv;
  /** Settings the caller fixes for a new run (the demo's scenario), under the flags. */
  defaults?: Partial<Config>;
  /** The model endpoint is the caller's (the demo's fake server): no credential check. */
  ownModel?: boolean;
  /** The run branch will be merged into the checkout (`--apply`): refused on a dirty working tree. */
  apply?: boolean;
}

export interface PreparedRun extends RunTarget {
  config: Config;
  /** Keys of the repository's config that were not applied (the file is not trusted). */
  ignored: IgnoredRepoKeys | null;
  /** A new run from the last commit while the working tree has uncommitted changes the team will not see. */
  uncommitted: Promise<boolean>;
  /** Starts the run (or resumes it) with `deps`. */
  start(deps: TeamDeps): Promise<RunResult>;
}

/** The config (a resumed run's recorded settings as a layer under the flags), the checks, and how to start. */
export async function prepareRun(target: RunTarget, o: PrepareOptions): Promise<PreparedRun> {
  const { what, repo, facts, stateGuard, recorded, dirty } = target;
  const loaded = loadConfig({ repo, env: o.env, flags: what.kind === 'resume' ? o.flags : { ...(o.defaults ?? {}), ...o.flags }, recorded });
  // Before anything is recorded: a resume without credentials leaves the run as it was, resumable.
  preflightModel(loaded.config, o.env, o.ownModel ?? false, repo);
  if (o.apply && (await dirty)) {
    throw new AciaError('USAGE', 'not starting: --apply needs a clean working tree, and yours has uncommitted changes', {
      hint: 'commit or stash them first, or run without --apply and merge the run branch yourself',
    });
  }
  const saved = what.kind === 'exec' ? readPlanFile(what.file) : null;
  const givenPacket = what.kind === 'plan' && what.context !== undefined ? readContextPacket(what.context) : null;
  return {
    ...target,
    config: loaded.config,
    ignored: loaded.ignored,
    uncommitted: what.kind === 'run' && !what.includeUncommitted ? dirty : Promise.resolve(false),
    start: (deps) => {
      switch (what.kind) {
        case 'run':
          return startRun(deps, { dir: repo, repoFacts: facts, ...(stateGuard ? { stateGuard } : {}), goal: what.goal, includeUncommitted: what.includeUncommitted ?? false, forceUncommitted: what.forceUncommitted ?? false });
        case 'plan':
          return startRun(deps, { dir: repo, goal: what.goal, planOnly: true, ...(givenPacket ? { contextPacket: givenPacket } : {}) });
        case 'exec':
          return startRun(deps, { dir: repo, goal: what.goal ?? `execute ${saved!.file}`, planSet: saved!.planSet, rebindContext: what.rebindContext ?? false });
        case 'resume':
          return resumeRun(deps, { dir: repo, ...(what.runId === undefined ? {} : { runId: what.runId }), ...(what.answer === undefined ? {} : { answer: what.answer }) });
      }
    },
  };
}

/**
 * The settings a run to resume recorded, once its ledger is checked against the user's anchor (nothing is
 * taken from a ledger this user's state does not anchor: a run shipped with the clone). Null when the
 * ledger cannot be read (resumeRun then says what is wrong with it); a ledger with no RUN_STARTED is
 * refused here, before any credential is asked for: there is nothing to resume with them.
 */
export async function resumableSettings(env: NodeJS.ProcessEnv, repo: string, runId: string): Promise<RecordedSettings | null> {
  const runDir = requireRunDir(repo, runId);
  await checkResumable(env, repo, runId);
  if (!existsSync(join(runDir, 'ledger.jsonl'))) throw notStarted(runId);
  let settings: RecordedSettings | null;
  try {
    const entries = [];
    for await (const e of readLedgerEntries(join(runDir, 'ledger.jsonl'))) entries.push(e);
    settings = recordedSettings(foldRun(entries));
  } catch {
    return null;
  }
  if (settings === null) throw notStarted(runId);
  return settings;
}
