// What `acia run`, `acia resume` and `acia demo` share: preflight, config, progress, Ctrl-C, the
// human prompt, the summary and the exit code.
import { existsSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { planMermaid } from '../core/wiki/mermaid.js';
import { readEntries } from './runs-action.js';
import { readContextPacket, readPlanFile } from './plan-files.js';
import type { CliEventLine } from './progress.js';
import chalk from 'chalk';
import { AciaError } from '../core/errors.js';
import { describeIgnored, loadConfig } from '../core/config/load.js';
import type { Config } from '../core/config/schema.js';
import type { TerminalReason } from '../core/ledger/events.js';
import { firstOf } from '../core/ledger/entry.js';
import { foldRun } from '../core/run/reducer.js';
import { systemClock } from '../core/acm/ids.js';
import { Git, probeRepo } from '../team/git.js';
import { guardAciaState } from '../core/contain/clone-guard.js';
import { requireRunDir } from '../core/contain/acia-state.js';
import { roleCostLine } from '../core/run/state.js';
import { probeSandbox } from '../core/sandbox/detect.js';
import { driverOverrides } from '../core/sandbox/safe-git.js';
import { reviewApply } from '../team/apply.js';
import { noHuman, type Escalator } from '../team/deps.js';
import { latestResumableRun, notStarted, resumeRun, startRun, type RunResult } from '../team/team.js';
import { buildDeps, checkResumable, preflightModel, type BuildDepsOptions } from '../app/build-deps.js';
import { EXIT } from '../app/exit-codes.js';
import { forTerminal } from '../core/text/terminal.js';
import { createProgress, type ProgressMode } from './progress.js';
import { ttyEscalator } from './tty-escalator.js';
import { shellLine } from './shell-quote.js';
import type { RunFlags } from './commands/run.js';

export type RunKind =
  | { kind: 'run'; goal: string }
  | { kind: 'resume'; runId?: string }
  | { kind: 'plan'; goal: string; out?: string; context?: string }
  | { kind: 'exec'; file: string; goal?: string; rebindContext?: boolean };

export interface RunEnvironment {
  /** For the demo: the fake server's URL and key, instead of the user's. */
  anthropic?: { baseURL: string; apiKey: string };
  /** Settings the caller fixes (the demo's scenario), under the flags. */
  defaults?: Partial<Config>;
  allowSandboxFallback?: boolean;
  /** Set by the demo (and a demo's resume): hints then name the demo repo with --repo. */
  demo?: boolean;
}

export async function runCommand(what: RunKind, flags: RunFlags, env: RunEnvironment = {}): Promise<number> {
  // The sandbox probe (a bwrap process) runs while git answers; buildDeps finds its answer cached.
  if (flags.sandbox !== 'off') probeSandbox().catch(() => undefined);
  // So is the query for the repository's filter, diff and merge drivers, which `git status` waits for.
  driverOverrides(resolve(flags.repo)).catch(() => undefined);
  const git = new Git(systemClock);
  const facts = await probeRepo(git, resolve(flags.repo));
  const repo = facts.root;
  // Asked once, while the config is read and the deps are built.
  const dirty = flags.apply || (what.kind === 'run' && !flags.includeUncommitted) ? git.isDirty(repo) : Promise.resolve(false);
  dirty.catch(() => undefined);
  // So is the check that the clone does not ship ACIA's own state (a git process too); startRun awaits it.
  const stateGuard = what.kind === 'run' ? guardAciaState(repo) : undefined;
  stateGuard?.catch(() => undefined);
  const given: Record<string, unknown> = Object.fromEntries(Object.entries(flagConfig(flags)).filter(([, v]) => v !== undefined));
  if (what.kind === 'resume') {
    // Resume with the model the run started with, unless --model says otherwise.
    const runId = what.runId ?? (await latestResumableRun(repo));
    const runDir = requireRunDir(repo, runId);
    what = { ...what, runId };
    // Nothing is taken from a ledger this user's state does not anchor (a run shipped with the clone).
    await checkResumable(process.env, repo, runId);
    // The run's recorded settings carry over; flags given now override them. The sandbox never does: it is
    // what the user's config and flags say now, so no ledger can turn it off.
    const entries = existsSync(join(runDir, 'ledger.jsonl')) ? await readEntries(runDir).catch(() => null) : [];
    const started = entries === null ? undefined : firstOf(entries, 'RUN_STARTED');
    // Said before the model's credentials are asked for: there is nothing to resume with them. (A ledger
    // that cannot be read goes on to resumeRun, which says what is wrong with it.)
    if (entries !== null && started === undefined) throw notStarted(runId);
    const recorded = started?.data;
    if (env.anthropic === undefined && flags.model === undefined && recorded?.model !== undefined) {
      // A demo goes on offline like the demo itself, when this repo is one `acia demo` made.
      const { demoResume } = await import('./demo-action.js');
      const code = await demoResume(repo, recorded.model, what, flags);
      if (code !== null) return code;
    }
    const carried: Record<string, unknown> = {
      model: recorded?.model,
      parallel: recorded?.settings?.parallel,
      maxIterations: recorded?.settings?.maxIterations,
      budget: recorded?.settings?.budget,
      roleModels: recorded?.settings?.roleModels,
    };
    for (const [k, v] of Object.entries(carried)) if (v !== undefined && given[k] === undefined) given[k] = v;
    if (given.budget !== undefined && carried.budget !== undefined && flagConfig(flags).budget !== undefined) {
      given.budget = { ...(carried.budget as object), ...(flagConfig(flags).budget as object) };
    }
  }
  const loaded = loadConfig({ repo, env: process.env, flags: { ...(env.defaults ?? {}), ...given } });
  const config = loaded.config;
  const stderr = process.stderr;
  if (loaded.ignored) stderr.write(`${chalk.yellow('warning:')} ${describeIgnored(loaded.ignored)}\n`);
  // Before anything is recorded: a resume without credentials leaves the run as it was, resumable.
  preflightModel(config, process.env, env.anthropic !== undefined, repo);
  if (flags.apply && (await dirty)) {
    throw new AciaError('USAGE', 'not starting: --apply needs a clean working tree, and yours has uncommitted changes', {
      hint: 'commit or stash them first, or run without --apply and merge the run branch yourself',
    });
  }
  const saved = what.kind === 'exec' ? readPlanFile(what.file) : null;
  const givenPacket = what.kind === 'plan' && what.context !== undefined ? readContextPacket(what.context) : null;

  if (what.kind === 'run' && !flags.includeUncommitted && (await dirty)) {
    stderr.write(`${chalk.yellow('warning:')} the working tree has uncommitted changes; the team works from the last commit and will not see them (use --include-uncommitted to include them)\n`);
  }

  const mode: ProgressMode = flags.json ? 'json' : flags.quiet ? 'quiet' : process.stderr.isTTY ? 'tty' : 'plain';
  const progress = createProgress({ mode, stdout: process.stdout, stderr, debug: flags.debug ?? false });
  const controller = new AbortController();
  let interrupts = 0;
  const onSigint = () => {
    interrupts++;
    if (interrupts === 1) {
      progress.suspend();
      stderr.write('\nstopping after the current step (Ctrl-C again to stop now)\n');
      controller.abort();
    } else {
      process.exit(EXIT.INTERRUPTED);
    }
  };
  process.on('SIGINT', onSigint);

  const escalator: Escalator = process.stdin.isTTY && process.stderr.isTTY && !flags.json ? ttyEscalator(process.stdin, stderr, {
          before: () => progress.hold(),
          after: () => progress.release(),
        }, [repo]) : noHuman;
  const options: BuildDepsOptions = {
    repo,
    config,
    env: process.env,
    escalator,
    signal: controller.signal,
    onEvent: (ev) => progress.onEvent(ev),
    warn: (msg) => {
      progress.suspend();
      stderr.write(`${chalk.yellow('warning:')} ${forTerminal(msg)}\n`);
    },
    ...(env.anthropic ? { anthropic: env.anthropic } : {}),
    allowSandboxFallback: env.allowSandboxFallback ?? false,
    // A new run calls the model within a second or two; a resume may only record an answer.
    prefetchModelClient: what.kind !== 'resume',
  };
  let result: RunResult;
  try {
    const deps = await buildDeps(options);
    switch (what.kind) {
      case 'run':
        result = await startRun(deps, { dir: repo, repoFacts: facts, ...(stateGuard ? { stateGuard } : {}), goal: what.goal, includeUncommitted: flags.includeUncommitted ?? false, forceUncommitted: flags.forceUncommitted ?? false });
        break;
      case 'plan':
        result = await startRun(deps, { dir: repo, goal: what.goal, planOnly: true, ...(givenPacket ? { contextPacket: givenPacket } : {}) });
        break;
      case 'exec':
        result = await startRun(deps, { dir: repo, goal: what.goal ?? `execute ${saved!.file}`, planSet: saved!.planSet, rebindContext: what.rebindContext ?? false });
        break;
      case 'resume':
        result = await resumeRun(deps, { dir: repo, ...(what.runId === undefined ? {} : { runId: what.runId }), ...(flags.answer === undefined ? {} : { answer: flags.answer }) });
        break;
    }
  } finally {
    progress.close();
    process.off('SIGINT', onSigint);
  }

  if (flags.apply && result.reason === 'succeeded') await applyRunBranch(git, repo, result, flags.allowIgnored ?? false);
  else if (result.reason === 'succeeded' && what.kind !== 'plan') await warnBeforeMerge(git, repo, result.runBranch);
  if (what.kind === 'plan') await printPlan(result, what.out, flags.json ?? false);
  printSummary(result, { json: flags.json ?? false, repo, model: flags.model === undefined || env.demo ? undefined : (flagConfig(flags).model as string) }, what.kind === 'plan' ? (what.out ?? null) : undefined);
  return exitCodeForResult(result);
}

/** The exit code for a run's result: its terminal reason, except that rejected credentials are a configuration error. */
export function exitCodeForResult(result: Pick<RunResult, 'reason' | 'errorCode'>): number {
  // Rejected credentials and a saved plan refused as input (a stale contextRef) are the caller's to fix.
  return result.reason === 'error' && (result.errorCode === 'LLM_AUTH' || result.errorCode === 'INPUT_INVALID') ? EXIT.USAGE : exitCodeForReason(result.reason);
}

export function exitCodeForReason(reason: TerminalReason): number {
  switch (reason) {
    case 'succeeded':
      return EXIT.OK;
    case 'failed':
    case 'verification_failed':
    case 'error':
      return EXIT.FAILED;
    case 'awaiting_human':
      return EXIT.AWAITING_HUMAN;
    case 'budget_exhausted':
      return EXIT.BUDGET_EXHAUSTED;
    case 'aborted':
      return EXIT.INTERRUPTED;
    case 'cancelled':
      return EXIT.CANCELLED;
  }
}

function flagConfig(f: RunFlags): Partial<Record<keyof Config, unknown>> {
  const num = (v: string | undefined, name: string): number | undefined => {
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!Number.isFinite(n)) throw new AciaError('USAGE', `${name} expects a number, got "${v}"`);
    return n;
  };
  const budget = {
    ...(f.maxCostUsd === undefined ? {} : { maxCostUsd: num(f.maxCostUsd, '--max-cost-usd') }),
    ...(f.maxTokens === undefined ? {} : { maxTokens: num(f.maxTokens, '--max-tokens') }),
    ...(f.maxMinutes === undefined ? {} : { maxMinutes: num(f.maxMinutes, '--max-minutes') }),
  };
  return {
    // A script path typed on the command line is relative to where it was typed (in a config file, to the repo).
    ...modelFlag(f.model),
    ...(f.approvePlan ? { approvePlan: true } : {}),
    parallel: num(f.parallel, '--parallel'),
    maxIterations: num(f.maxIterations, '--max-iterations'),
    sandbox: f.sandbox,
    testCommand: f.testCommand,
    devAgent: devAgentFlag(f),
    ...(Object.keys(budget).length > 0 ? { budget } : {}),
  };
}

/**
 * `--model <spec>`, or per role `pm=<spec>,dev=<spec>` (with at most one bare spec for the other roles).
 * A script path typed on the command line is relative to where it was typed (in a config file, to the repo).
 */
export function modelFlag(given: string | undefined): { model?: string; roleModels?: Record<string, string> } {
  if (given === undefined) return {};
  const local = (spec: string) => (spec.startsWith('scripted:') ? `scripted:${resolve(spec.slice('scripted:'.length))}` : spec.startsWith('chaos:') ? `chaos:${resolve(spec.slice('chaos:'.length))}` : spec);
  if (!/^[a-z0-9][a-z0-9_-]*=/.test(given)) return { model: local(given) };
  const roleModels: Record<string, string> = {};
  let model: string | undefined;
  for (const part of given.split(',')) {
    const m = /^([a-z0-9][a-z0-9_-]{0,63})=(.+)$/.exec(part.trim());
    if (m) roleModels[m[1]!] = local(m[2]!.trim());
    else if (model === undefined && part.trim() !== '') model = local(part.trim());
    else throw new AciaError('USAGE', `--model expects <spec> or <role>=<spec>,... (e.g. pm=anthropic:claude-opus-4-1,dev=anthropic:claude-sonnet-4-5), got "${part}"`);
  }
  return { ...(model === undefined ? {} : { model }), roleModels };
}

/** Without --apply the summary tells the user to merge; first say what a plain `git merge` would do to them. */
async function warnBeforeMerge(git: Git, repo: string, branch: string): Promise<void> {
  const review = await reviewApply(git, repo, branch).catch(() => null);
  if (review === null) return;
  const say = (what: string, ps: string[]) => {
    if (ps.length > 0) process.stderr.write(`${chalk.yellow('warning:')} ${branch} ${what}: ${ps.slice(0, 5).join(', ')}${ps.length > 5 ? ` (+${ps.length - 5} more)` : ''}; review it before merging\n`);
  };
  say('would overwrite untracked or ignored files in your checkout', review.overwrites);
  say('adds paths your checkout ignores', review.ignoredAdds);
  say("changes ACIA's own directory", review.aciaPaths);
}

async function applyRunBranch(git: Git, repo: string, result: RunResult, allowIgnored: boolean): Promise<void> {
  // Checked before the team ran too; checked again because the user may have edited files meanwhile.
  if (await git.isDirty(repo)) {
    throw new AciaError('USAGE', `not applying ${result.runBranch}: your working tree has uncommitted changes`, {
      hint: `commit or stash them, then: git merge ${result.runBranch}`,
    });
  }
  const review = await reviewApply(git, repo, result.runBranch);
  const list = (ps: string[]) => `${ps.slice(0, 5).join(', ')}${ps.length > 5 ? ` (+${ps.length - 5} more)` : ''}`;
  if (review.aciaPaths.length > 0) {
    throw new AciaError('APPLY_REFUSED', `not applying ${result.runBranch}: it changes ACIA's own directory: ${list(review.aciaPaths)}`, {
      hint: `inspect it: git diff HEAD...${result.runBranch} -- .acia`,
    });
  }
  if (review.overwrites.length > 0) {
    throw new AciaError('APPLY_REFUSED', `not applying ${result.runBranch}: it would overwrite untracked or ignored files in your checkout: ${list(review.overwrites)}`, {
      hint: `move them aside and review the branch first: git diff HEAD...${result.runBranch}`,
    });
  }
  if (review.ignoredAdds.length > 0 && !allowIgnored) {
    throw new AciaError('APPLY_REFUSED', `not applying ${result.runBranch}: it adds paths your checkout ignores: ${list(review.ignoredAdds)}`, {
      hint: `review them (git diff HEAD...${result.runBranch} -- <path>); to merge anyway add --allow-ignored`,
    });
  }
  const r = await git.run(repo, ['merge', '--no-edit', result.runBranch], { allowFail: true });
  if (r.exitCode !== 0) {
    await git.run(repo, ['merge', '--abort'], { allowFail: true });
    throw new AciaError('INTERNAL', `merging ${result.runBranch} into your branch failed: ${r.stderr.split('\n')[0] ?? ''}`, { hint: `merge it yourself: git merge ${result.runBranch}` });
  }
  process.stderr.write(`applied ${result.runBranch} to your current branch\n`);
}

/** `planOut`: set for `acia plan` (the file written, or null), whose run changes nothing worth merging. */
function printSummary(r: RunResult, o: { json: boolean; repo: string; model: string | undefined }, planOut?: string | null): void {
  if (o.json) {
    const event: CliEventLine = { kind: 'result', result: r };
    process.stdout.write(`${JSON.stringify(event)}\n`);
    return;
  }
  // Every printed command runs as printed: from where the user is (for a demo, not the repo), with the
  // model the user chose, every path quoted for the shell.
  const here = resolve(process.cwd()) === o.repo;
  const repoArgs = here ? [] : ['--repo', o.repo];
  const modelArgs = o.model === undefined ? [] : ['--model', o.model];
  const gitC = shellLine(here ? ['git'] : ['git', '-C', o.repo]);
  const ok = r.reason === 'succeeded';
  const head = ok ? chalk.green('succeeded') : r.reason === 'awaiting_human' ? chalk.magenta('awaiting a human') : chalk.red(r.reason.replace('_', ' '));
  const lines = [
    `${chalk.bold('run')} ${r.runId}: ${head} — ${forTerminal(r.message)}`,
    `  branch   ${r.runBranch}${r.headCommit ? ` (${r.headCommit.slice(0, 10)})` : ''}, ${r.filesChanged.length} file(s) changed`,
    `  cost     ${r.costUsd === null ? 'unknown (unpriced model)' : `$${r.costUsd.toFixed(4)}`}, ${r.tokens} tokens`,
    ...(r.roleCosts.length > 1 ? [`  by role  ${roleCostLine(r.roleCosts)}`] : []),
    `  ledger   ${r.runDir}/ledger.jsonl (check it: ${shellLine(['acia', 'verify', r.runId, ...repoArgs])})`,
    `  wiki     ${r.runDir.replace(/runs\/[^/]+$/, 'wiki')}/runs/${r.runId}.md`,
  ];
  lines.push(...nextLines(r, [...repoArgs, ...modelArgs], gitC, planOut));
  process.stdout.write(`${lines.join('\n')}\n`);
}

/** The `next` lines of the summary: how to go on, with the flags that make each command run as printed. */
export function nextLines(r: Pick<RunResult, 'runId' | 'reason' | 'runBranch' | 'resumeCommand' | 'answers' | 'raiseLimit'>, flags: string[], gitC: string, planOut?: string | null): string[] {
  const resume = (...more: string[]) => shellLine(['acia', 'resume', r.runId, ...flags, ...more]);
  if (r.reason === 'budget_exhausted' && r.resumeCommand !== undefined) {
    const raise = r.raiseLimit?.split(' ') ?? [];
    return [`  next     ${resume('--answer', 'approve')}   (go on past the limit)`, ...(raise.length > 0 ? [`     or    ${resume(...raise)}   (go on under a higher limit)`] : [])];
  }
  if (r.reason === 'awaiting_human' && r.answers !== undefined) {
    const commands = [...(r.answers.includes('guidance') ? [resume('--answer', 'your guidance for the team')] : []), ...r.answers.filter((a) => a !== 'guidance').map((w) => resume('--answer', w))];
    return commands.map((c, i) => `  ${i === 0 ? 'next' : '  or'}     ${c}`);
  }
  if (r.resumeCommand !== undefined) return [`  next     ${resume()}`];
  if (r.reason === 'aborted') return ['  (aborted for good: this run cannot be resumed)'];
  if (r.reason === 'cancelled') return ['  (cancelled: this run does not go on and cannot be resumed)'];
  if (r.reason === 'succeeded' && planOut !== undefined) return [`  next     ${planOut === null ? 'acia plan ... --out plan.json, then acia exec plan.json' : shellLine(['acia', 'exec', planOut, ...flags])}`];
  if (r.reason === 'succeeded') return [`  next     ${gitC} diff HEAD...${r.runBranch}   then   ${gitC} merge ${r.runBranch}`];
  return [];
}


async function printPlan(result: RunResult, out: string | undefined, json: boolean): Promise<void> {
  const entries = await readEntries(result.runDir);
  const state = foldRun(entries);
  const selected = state.selection;
  const planSet = state.planSet;
  if (!planSet) return;
  if (out) {
    writeFileSync(out, `${JSON.stringify(planSet, null, 2)}\n`);
    process.stderr.write(`wrote ${out} (run it with: ${shellLine(['acia', 'exec', out])})\n`);
  }
  if (json) return;
  const lines: string[] = [];
  for (const plan of planSet.plans) {
    const chosen = plan.id === selected?.planId;
    // Every field here is the model's: shown with terminal controls stripped.
    lines.push(`${chosen ? chalk.green('●') : '○'} ${chalk.bold(forTerminal(plan.id))}${chosen ? ' (chosen)' : ''}: ${forTerminal(plan.rationale)}`);
    for (const t of plan.tasks) {
      const after = plan.edges.filter((e) => e.to === t.id).map((e) => forTerminal(`${e.from}${e.guard ? ` if ${e.guard}` : ''}${e.onError ? ` on ${e.onError}` : ''}`));
      const what = (t.input as { instructions?: unknown }).instructions;
      lines.push(`   ${forTerminal(t.id).padEnd(6)} ${forTerminal(t.capability).padEnd(15)} ${forTerminal(t.title ?? (typeof what === 'string' ? what.slice(0, 60) : ''))}${after.length ? chalk.dim(`  after ${after.join(', ')}`) : ''}`);
    }
  }
  const chosenPlan = planSet.plans.find((p) => p.id === selected?.planId);
  if (chosenPlan) lines.push('', forTerminal(planMermaid(chosenPlan).trimEnd(), { newlines: true }));
  process.stdout.write(`${lines.join('\n')}\n\n`);
}

/** `--dev-agent x` or `--dev-agents a,b,c` (best of N); both at once is a usage error. */
function devAgentFlag(f: RunFlags): string | undefined {
  if (f.devAgent !== undefined && f.devAgents !== undefined) throw new AciaError('USAGE', 'give --dev-agent or --dev-agents, not both');
  return f.devAgents ?? f.devAgent;
}
