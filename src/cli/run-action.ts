// What `acia run`, `acia resume`, `acia plan`, `acia exec` and `acia demo` share at the terminal:
// progress, Ctrl-C, the human prompt, the summary and the exit code. The library work is src/app.
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import chalk from 'chalk';
import { planMermaid } from '../core/wiki/mermaid.js';
import { readEntries } from './runs-action.js';
import type { CliEventLine } from './progress.js';
import { AciaError } from '../core/errors.js';
import { describeIgnored } from '../core/config/load.js';
import type { Config } from '../core/config/schema.js';
import type { TerminalReason } from '../core/ledger/run-vocabulary.js';
import { foldRun } from '../core/run/reducer.js';
import { roleCostLine } from '../core/run/state.js';
import { probeSandbox } from '../core/sandbox/detect.js';
import { driverOverrides } from '../core/sandbox/safe-git.js';
import { noHuman, type Escalator } from '../team/deps.js';
import type { RunResult } from '../team/team.js';
import { createDeps } from '../app/create-deps.js';
import { applyRunBranch, mergeWarnings } from '../app/apply-run.js';
import { locateRun, prepareRun, type RunKind } from '../app/prepare-run.js';
import { EXIT } from '../app/exit-codes.js';
import { forTerminal } from '../core/text/terminal.js';
import { createProgress } from './progress.js';
import { ttyEscalator } from './tty-escalator.js';
import { shellLine } from './shell-quote.js';
import type { RunFlags } from './commands/run.js';

export type { RunKind } from '../app/prepare-run.js';

export interface RunEnvironment {
  /** For the demo: the fake server's URL and key, instead of the user's. */
  anthropic?: { baseURL: string; apiKey: string };
  /** Settings the caller fixes (the demo's scenario), under the flags. */
  defaults?: Partial<Config>;
  allowSandboxFallback?: boolean;
  /** Set by the demo (and a demo's resume): hints then name the demo repo with --repo. */
  demo?: boolean;
}

/** The terminal's part of `acia run`, `resume`, `plan` and `exec`: the rest is src/app (prepareRun). */
export async function runCommand(what: RunKind, flags: RunFlags, env: RunEnvironment = {}): Promise<number> {
  // The sandbox probe (a bwrap process) and the repository's git drivers are asked while git answers.
  if (flags.sandbox !== 'off') probeSandbox().catch(() => undefined);
  driverOverrides(resolve(flags.repo)).catch(() => undefined);
  const target = await locateRun(withFlags(what, flags), { dir: resolve(flags.repo), env: process.env, apply: flags.apply ?? false });
  if (target.what.kind === 'resume' && env.anthropic === undefined && flags.model === undefined && target.recorded !== null) {
    // A demo goes on offline like the demo itself, when this repo is one `acia demo` made.
    const { demoResume } = await import('./demo-action.js');
    const code = await demoResume(target.repo, target.recorded.model, target.what, flags);
    if (code !== null) return code;
  }
  const run = await prepareRun(target, { flags: flagConfig(flags), env: process.env, ...(env.defaults ? { defaults: env.defaults } : {}), ownModel: env.anthropic !== undefined, apply: flags.apply ?? false });
  const stderr = process.stderr;
  const warn = (line: string) => stderr.write(`${chalk.yellow('warning:')} ${forTerminal(line)}\n`);
  if (run.ignored) warn(describeIgnored(run.ignored));
  const progress = createProgress({ mode: flags.json ? 'json' : flags.quiet ? 'quiet' : stderr.isTTY ? 'tty' : 'plain', stdout: process.stdout, stderr, debug: flags.debug ?? false });
  // `git status` of a large checkout takes a while: the run starts meanwhile (it works from the last
  // commit either way) and the warning comes when git answers, before the summary at the latest.
  const uncommitted = run.uncommitted.then(
    (dirty) => {
      if (!dirty) return;
      progress.suspend();
      warn('the working tree has uncommitted changes; the team works from the last commit and will not see them (use --include-uncommitted to include them)');
    },
    () => undefined,
  );
  const controller = new AbortController();
  let interrupts = 0;
  const onSigint = () => {
    if (++interrupts > 1) process.exit(EXIT.INTERRUPTED);
    progress.suspend();
    stderr.write('\nstopping after the current step (Ctrl-C again to stop now)\n');
    controller.abort();
  };
  process.on('SIGINT', onSigint);
  const escalator: Escalator = process.stdin.isTTY && stderr.isTTY && !flags.json ? ttyEscalator(process.stdin, stderr, { before: () => progress.hold(), after: () => progress.release() }, [run.repo]) : noHuman;
  let result: RunResult;
  try {
    const deps = await createDeps({
      kind: 'local',
      repo: run.repo,
      config: run.config,
      env: process.env,
      escalator,
      signal: controller.signal,
      onEvent: (ev) => progress.onEvent(ev),
      warn: (msg) => {
        progress.suspend();
        warn(msg);
      },
      ...(env.anthropic ? { anthropic: env.anthropic } : {}),
      allowSandboxFallback: env.allowSandboxFallback ?? false,
      // A new run calls the model within a second or two; a resume may only record an answer.
      prefetchModelClient: run.what.kind !== 'resume',
    });
    result = await run.start(deps);
  } finally {
    await uncommitted;
    progress.close();
    process.off('SIGINT', onSigint);
  }
  if (flags.apply && result.reason === 'succeeded') {
    await applyRunBranch(run.git, run.repo, result.runBranch, flags.allowIgnored ?? false);
    stderr.write(`applied ${result.runBranch} to your current branch\n`);
  } else if (result.reason === 'succeeded' && what.kind !== 'plan') for (const line of await mergeWarnings(run.git, run.repo, result.runBranch)) warn(line);
  if (what.kind === 'plan') await printPlan(result, what.out, flags.json ?? false);
  printSummary(result, { json: flags.json ?? false, repo: run.repo, model: flags.model === undefined || env.demo ? undefined : (flagConfig(flags).model as string) }, what.kind === 'plan' ? (what.out ?? null) : undefined);
  return exitCodeForResult(result);
}

/** The command's own options in its RunKind. */
function withFlags(what: RunKind, flags: RunFlags): RunKind {
  if (what.kind === 'run') return { ...what, includeUncommitted: flags.includeUncommitted ?? false, forceUncommitted: flags.forceUncommitted ?? false };
  if (what.kind === 'resume' && flags.answer !== undefined) return { ...what, answer: flags.answer };
  return what;
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
  const values: Partial<Record<keyof Config, unknown>> = {
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
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined));
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
