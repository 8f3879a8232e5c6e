// What `acia run`, `acia resume` and `acia demo` share: preflight, config, progress, Ctrl-C, the
// human prompt, the summary and the exit code.
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { PlanSet } from '../core/acm/contracts.js';
import { defaultCapabilityMap } from '../core/acm/capabilities.js';
import { validatePlanSet } from '../core/acm/validate-plan.js';
import { planMermaid } from '../core/wiki/mermaid.js';
import { readEntries } from './runs-action.js';
import type { CliEventLine } from './progress.js';
import chalk from 'chalk';
import { AciaError } from '../core/errors.js';
import { describeIgnored, loadConfig } from '../core/config/load.js';
import type { Config } from '../core/config/schema.js';
import type { TerminalReason } from '../core/ledger/events.js';
import { systemClock } from '../core/acm/ids.js';
import { Git, repoRoot, requireCommit } from '../team/git.js';
import { noHuman, type Escalator } from '../team/deps.js';
import { latestUnfinishedRun, resumeRun, startRun, type RunResult } from '../team/team.js';
import { buildDeps, checkResumable, preflightModel, type BuildDepsOptions } from './build-deps.js';
import { EXIT } from './exit-codes.js';
import { forTerminal } from '../core/text/terminal.js';
import { createProgress, type ProgressMode } from './progress.js';
import { ttyEscalator } from './tty-escalator.js';
import type { RunFlags } from './commands/run.js';

export type RunKind =
  | { kind: 'run'; goal: string }
  | { kind: 'resume'; runId?: string }
  | { kind: 'plan'; goal: string; out?: string }
  | { kind: 'exec'; file: string; goal?: string };

export interface RunEnvironment {
  /** For the demo: the fake server's URL and key, instead of the user's. */
  anthropic?: { baseURL: string; apiKey: string };
  /** Settings the caller fixes (the demo's scenario), under the flags. */
  defaults?: Partial<Config>;
  allowSandboxFallback?: boolean;
}

export async function runCommand(what: RunKind, flags: RunFlags, env: RunEnvironment = {}): Promise<number> {
  const git = new Git(systemClock);
  const repo = await repoRoot(git, resolve(flags.repo));
  await requireCommit(git, repo);
  const given: Record<string, unknown> = Object.fromEntries(Object.entries(flagConfig(flags)).filter(([, v]) => v !== undefined));
  if (what.kind === 'resume') {
    const runId = what.runId ?? (await latestUnfinishedRun(repo));
    what = { ...what, runId };
    // Nothing is taken from a ledger this user's state does not anchor (a run shipped with the clone).
    await checkResumable(process.env, repo, runId);
    // The run's recorded settings carry over; flags given now override them. The sandbox never does: it is
    // what the user's config and flags say now, so no ledger can turn it off.
    const started = (await readEntries(join(repo, '.acia', 'runs', runId)).catch(() => [])).find((e) => e.type === 'RUN_STARTED');
    const recorded = started?.data as { model?: string; settings?: { parallel?: number; maxIterations?: number; budget?: Record<string, number> } } | undefined;
    const carried: Record<string, unknown> = {
      model: recorded?.model,
      parallel: recorded?.settings?.parallel,
      maxIterations: recorded?.settings?.maxIterations,
      budget: recorded?.settings?.budget,
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
  if (what.kind !== 'resume') preflightModel(config, process.env, env.anthropic !== undefined, repo);
  const saved = what.kind === 'exec' ? readPlanFile(what.file) : null;

  if (what.kind === 'run' && !flags.includeUncommitted && (await git.isDirty(repo))) {
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

  const escalator: Escalator = process.stdin.isTTY && process.stderr.isTTY && !flags.json ? ttyEscalator(process.stdin, stderr, () => progress.suspend()) : noHuman;
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
  };
  let result: RunResult;
  try {
    const deps = await buildDeps(options);
    switch (what.kind) {
      case 'run':
        result = await startRun(deps, { dir: repo, goal: what.goal, includeUncommitted: flags.includeUncommitted ?? false });
        break;
      case 'plan':
        result = await startRun(deps, { dir: repo, goal: what.goal, planOnly: true });
        break;
      case 'exec':
        result = await startRun(deps, { dir: repo, goal: what.goal ?? `execute ${saved!.file}`, planSet: saved!.planSet });
        break;
      case 'resume':
        result = await resumeRun(deps, { dir: repo, ...(what.runId === undefined ? {} : { runId: what.runId }), ...(flags.answer === undefined ? {} : { answer: flags.answer }) });
        break;
    }
  } finally {
    progress.close();
    process.off('SIGINT', onSigint);
  }

  if (flags.apply && result.reason === 'succeeded') await applyRunBranch(git, repo, result);
  if (what.kind === 'plan') await printPlan(result, what.out, flags.json ?? false);
  printSummary(result, flags.json ?? false, repo, what.kind === 'plan' ? (what.out ?? null) : undefined);
  return exitCodeForResult(result);
}

/** The exit code for a run's result: its terminal reason, except that rejected credentials are a configuration error. */
export function exitCodeForResult(result: Pick<RunResult, 'reason' | 'errorCode'>): number {
  return result.reason === 'error' && result.errorCode === 'LLM_AUTH' ? EXIT.USAGE : exitCodeForReason(result.reason);
}

export function exitCodeForReason(reason: TerminalReason): number {
  switch (reason) {
    case 'succeeded':
      return EXIT.OK;
    case 'verification_failed':
    case 'error':
      return EXIT.FAILED;
    case 'awaiting_human':
      return EXIT.AWAITING_HUMAN;
    case 'budget_exhausted':
      return EXIT.BUDGET_EXHAUSTED;
    case 'aborted':
      return EXIT.INTERRUPTED;
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
    model: f.model?.startsWith('scripted:') ? `scripted:${resolve(f.model.slice('scripted:'.length))}` : f.model?.startsWith('chaos:') ? `chaos:${resolve(f.model.slice('chaos:'.length))}` : f.model,
    parallel: num(f.parallel, '--parallel'),
    maxIterations: num(f.maxIterations, '--max-iterations'),
    sandbox: f.sandbox,
    testCommand: f.testCommand,
    devAgent: f.devAgent,
    ...(Object.keys(budget).length > 0 ? { budget } : {}),
  };
}

async function applyRunBranch(git: Git, repo: string, result: RunResult): Promise<void> {
  if (await git.isDirty(repo)) {
    throw new AciaError('USAGE', `not applying ${result.runBranch}: your working tree has uncommitted changes`, {
      hint: `commit or stash them, then: git merge ${result.runBranch}`,
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
function printSummary(r: RunResult, json: boolean, repo: string, planOut?: string | null): void {
  // Follow-up commands must work from where the user is, which for a demo is not the repo.
  const here = resolve(process.cwd()) === repo;
  const repoFlag = here ? '' : ` --repo ${repo}`;
  const gitC = here ? 'git' : `git -C ${repo}`;
  if (json) {
    const event: CliEventLine = { kind: 'result', result: r };
    process.stdout.write(`${JSON.stringify(event)}\n`);
    return;
  }
  const ok = r.reason === 'succeeded';
  const head = ok ? chalk.green('succeeded') : r.reason === 'awaiting_human' ? chalk.magenta('awaiting a human') : chalk.red(r.reason.replace('_', ' '));
  const lines = [
    `${chalk.bold('run')} ${r.runId}: ${head} — ${forTerminal(r.message)}`,
    `  branch   ${r.runBranch}${r.headCommit ? ` (${r.headCommit.slice(0, 10)})` : ''}, ${r.filesChanged.length} file(s) changed`,
    `  cost     ${r.costUsd === null ? 'unknown (unpriced model)' : `$${r.costUsd.toFixed(4)}`}, ${r.tokens} tokens`,
    `  ledger   ${r.runDir}/ledger.jsonl (check it: acia verify ${r.runId}${repoFlag})`,
    `  wiki     ${r.runDir.replace(/runs\/[^/]+$/, 'wiki')}/runs/${r.runId}.md`,
  ];
  if (r.resumeCommand) lines.push(`  next     ${r.resumeCommand.replace(/^acia resume (\S+)/, `acia resume $1${repoFlag}`)}`);
  else if (ok && planOut !== undefined) lines.push(`  next     ${planOut === null ? 'acia plan ... --out plan.json, then acia exec plan.json' : `acia exec ${planOut}`}`);
  else if (ok) lines.push(`  next     ${gitC} diff HEAD...${r.runBranch}   then   ${gitC} merge ${r.runBranch}`);
  process.stdout.write(`${lines.join('\n')}\n`);
}

function readPlanFile(file: string): { file: string; planSet: PlanSet } {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new AciaError(code === 'ENOENT' ? 'FILE_NOT_FOUND' : 'JSON_PARSE', code === 'ENOENT' ? `no such file: ${file}` : `${file} is not valid JSON: ${(e as Error).message}`);
  }
  // A bare plan becomes a plan set of one, chosen by the human who runs it.
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new AciaError('INPUT_INVALID', `${file} is not a plan: expected a JSON object (a plan set from \`acia plan --out\`, or one plan)`);
  }
  const set =
    'plans' in value
      ? value
      : { goalId: (value as { goalId?: unknown }).goalId, contextRef: (value as { contextRef?: unknown }).contextRef, plans: [value], selection: { method: 'human', chosenPlanId: (value as { id?: unknown }).id, rationale: 'saved plan' } };
  // Checked in full (structure, cycles, capabilities) before a run exists: a bad file is bad input, exit 2.
  const checked = validatePlanSet(set, defaultCapabilityMap);
  if (!checked.ok || !checked.planSet) {
    const first = checked.errors[0];
    const more = checked.errors.length > 1 ? ` (+${checked.errors.length - 1} more)` : '';
    throw new AciaError('INPUT_INVALID', `${file} is not a valid plan: ${first?.path ?? '$'}: ${first?.message ?? 'invalid plan'}${more}`, { hint: `see every problem with \`acia validate ${file}\`` });
  }
  return { file, planSet: checked.planSet };
}

async function printPlan(result: RunResult, out: string | undefined, json: boolean): Promise<void> {
  const entries = await readEntries(result.runDir);
  const proposed = entries.filter((e) => e.type === 'PLAN_PROPOSED' && (e.data as { valid: boolean }).valid).at(-1);
  const selected = entries.find((e) => e.type === 'PLAN_SELECTED')?.data as { planId: string } | undefined;
  const planSet = (proposed?.data as { planSet?: PlanSet } | undefined)?.planSet;
  if (!planSet) return;
  if (out) {
    writeFileSync(out, `${JSON.stringify(planSet, null, 2)}\n`);
    process.stderr.write(`wrote ${out} (run it with: acia exec ${out})\n`);
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
