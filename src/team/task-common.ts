// Pieces every task runner shares: how a task ends, the agent's toolbox and task message, retries.
import type { LlmRequest } from '../core/llm/types.js';
import { lazy } from './lazy.js';
import { relative } from 'node:path';
import { canonicalJson, sha256Hex } from '../core/acm/canonical-json.js';
import type { ErrorKind, TaskSpec } from '../core/acm/contracts.js';
import type { EscalationReason } from '../core/ledger/run-vocabulary.js';
import type { Tool, ToolContext, ToolResult } from '../core/tools/types.js';
import { AciaError, errorMessage, isAciaError } from '../core/errors.js';
import { runAgent, type AgentOutcome, type ToolCall } from '../agents/agent-loop.js';
import type { AgentDefinition } from '../agents/define-agent.js';
import { renderPrompt } from '../agents/prompt-template.js';
import { roleDevAgent, rolePmAgent, roleQaAgent } from '../agents/roles/role-agents.js';
import { roleNameOf, roleOf, skillsNotice, skillTool, type RunRole } from './roles.js';
import { BudgetExceededError } from './budget.js';
import { modelHooks } from './run-context.js';
import { makeToolbox } from './toolbox.js';
import { attemptsAllowed, fatal, preCheck } from './task-policy.js';
import { renderInstructions } from '../agents/pm/context-packet.js';
import type { RunContext } from './run-context.js';
import { syncAddedDependencies } from './dependency-sync.js';
import type { TaskWorktree } from './workspace.js';
import { toolHooks, type CompletionGate } from './user-hooks.js';

export type TaskOutcome =
  | { kind: 'completed' }
  | { kind: 'failed'; errorKind: ErrorKind; message: string }
  | { kind: 'verification_failed'; message: string }
  | { kind: 'escalate'; reason: EscalationReason; message: string; lastFailure?: string };

/** `taskId`: the task the tools act for, whose last allow may have limited how long its commands run. */
export function toolContext(ctx: RunContext, root: string, taskId?: string): ToolContext {
  const limitMs = taskId === undefined ? undefined : ctx.state.tasks.get(taskId)?.limits?.timeoutMs;
  const runner = ctx.deps.tools.runnerFor(root);
  const viewRoot = runner.pathInside?.(root);
  return {
    root,
    fs: ctx.deps.tools.fs,
    runner,
    ...(viewRoot === undefined || viewRoot === root ? {} : { viewRoot }),
    ...(ctx.testCommand === null ? {} : { testCommand: ctx.testCommand }),
    ...(ctx.deps.config.setup === undefined ? {} : { setupCommand: ctx.deps.config.setup }),
    commandTimeoutS: limitMs === undefined ? ctx.deps.config.commandTimeoutS : Math.max(1, Math.min(ctx.deps.config.commandTimeoutS, Math.floor(limitMs / 1000))),
    ...toolSignal(ctx),
    ...(ctx.deps.config.budget.maxMinutes === undefined ? {} : { deadlineMs: ctx.sessionStartMs + ctx.deps.config.budget.maxMinutes * 60_000 }),
  };
}

/** Tools stop at Ctrl-C and at the run's --max-minutes deadline: a command cannot outlive the budget. */
function toolSignal(ctx: RunContext): { signal?: AbortSignal } {
  const maxMinutes = ctx.state.budgetWaived ? undefined : ctx.deps.config.budget.maxMinutes;
  const signals = [ctx.deps.runtime.signal];
  if (maxMinutes !== undefined) {
    const left = ctx.sessionStartMs + maxMinutes * 60_000 - ctx.deps.runtime.clock.now().getTime();
    signals.push(deadlineSignal(Math.max(0, Math.min(left, 2_147_483_647))));
  }
  if (signals.length === 0) return {};
  return { signal: signals.length === 1 ? signals[0]! : AbortSignal.any(signals) };
}

/**
 * Aborts after `ms`. Not `AbortSignal.timeout`: inside `AbortSignal.any` (Ctrl-C or the deadline) node 20
 * holds its sources weakly, so a timeout signal nothing else references can be garbage-collected and
 * never fire, and a command then outlived --max-minutes (seen under load). The timer holds this
 * controller; unref'd, it keeps no process alive.
 */
function deadlineSignal(ms: number): AbortSignal {
  const controller = new AbortController();
  setTimeout(() => controller.abort(new DOMException('the run reached its --max-minutes deadline', 'TimeoutError')), ms).unref();
  return controller.signal;
}

/**
 * This run's implementations of the tools an agent names, in the run's order (what the model is sent,
 * and so what replay matches); one the run does not provide is a wiring error, never dropped.
 */
export function toolsFor(ctx: RunContext, tools: readonly Tool[]): Tool[] {
  const names = new Set(tools.map((t) => t.name));
  const own = ctx.deps.tools.builtin.filter((b) => names.has(b.name));
  const missing = tools.find((t) => !own.some((o) => o.name === t.name));
  if (missing !== undefined) throw new AciaError('INTERNAL', `the ${missing.name} tool an agent uses is not one of this run's tools`);
  return own;
}

/**
 * An agent's tools: the built-in ones its role names (or its definition's), the MCP tools its servers give
 * the role's base (narrowed to those a role file names, `mcp__<server>` for all of a server's), and
 * `load_skill` when the run has skills.
 */
function agentTools(ctx: RunContext, def: AgentDefinition<unknown>, role: RunRole) {
  const named = role.def.tools;
  // A built-in role's file lists only built-in tools: it keeps every MCP tool its servers give it.
  const narrows = named !== null && role.def.format !== 'builtin';
  const mcp = ctx.deps.tools.mcp.toolsFor(def.role).filter((t) => !narrows || named.some((n) => t.name === n || t.name.startsWith(`${n}__`)));
  const skills = skillTool(ctx);
  // A role file names its built-in tools as text (checked when the role was loaded); a built-in role, by reference.
  const builtin = narrows ? ctx.deps.tools.builtin.filter((t) => named.includes(t.name)) : toolsFor(ctx, def.tools);
  return [...builtin, ...mcp, ...(skills ? [skills] : [])];
}

/** The system prompt: a built-in role's template, or a role file's prompt above its base role's contract; then its skills. */
function systemPrompt<O, V extends string>(ctx: RunContext, o: TaskAgentOptions<O, V>, role: RunRole): string {
  const values = (o.promptValues ?? {}) as Record<V, string>;
  const isBaseAgent = o.def.instructions === `${o.def.role}.md`;
  let text: string;
  if (role.def.format === 'builtin' || !isBaseAgent) text = renderPrompt<V>(o.def, values);
  else if (role.def.base === 'dev') text = renderPrompt(roleDevAgent, { role_prompt: role.def.prompt });
  else if (role.def.base === 'qa') text = renderPrompt(roleQaAgent, { role_prompt: role.def.prompt });
  else text = renderPrompt(rolePmAgent, { role_prompt: role.def.prompt, capabilities: (values as Record<string, string>).capabilities ?? '' });
  return text + skillsNotice(ctx, role);
}

/** The first user message: stable for the whole agent session, so it is part of the cached prefix. */
export function taskMessage(ctx: RunContext, spec: TaskSpec, extra: string[]): string {
  const input = spec.input as { instructions?: unknown; files?: unknown; question?: unknown; tools?: unknown };
  const lines = [
    `Goal of the run: ${ctx.state.started?.goal.intent ?? ''}`,
    `Your task: ${spec.id} (${spec.capability})${spec.title ? `: ${spec.title}` : ''}`,
  ];
  if (typeof input.instructions === 'string') lines.push(`Instructions: ${input.instructions}`);
  if (Array.isArray(input.files) && input.files.length > 0) lines.push(`Files: ${input.files.join(', ')}`);
  if (Array.isArray(input.tools) && input.tools.length > 0) lines.push(`Use these MCP tools for this task: ${input.tools.join(', ')}`);
  if (ctx.testCommand !== null) lines.push(`Test command: ${ctx.testCommand}`);
  lines.push(...extra);
  return lines.join('\n') + renderInstructions(ctx.instructions);
}

/**
 * Starts one attempt of a task: its worktree (reset to `checkpoint` when given), TASK_STARTED, and
 * the `task.pre` policy hook. Returns the worktree, and how the task ends instead when policy denies it
 * (and no human has overridden that) or its environment cannot run it.
 */
export async function startAttempt(
  ctx: RunContext,
  spec: TaskSpec,
  attempt: number,
  checkpoint: string | null,
): Promise<{ wt: TaskWorktree; denied: TaskOutcome | null; setupNote: string | null }> {
  const taskId = spec.id;
  const wt = await ctx.workspace.prepareTask(taskId, checkpoint);
  await ctx.rec.record('team', 'TASK_STARTED', {
    taskId,
    attempt,
    capability: spec.capability,
    branch: wt.branch,
    worktree: relative(ctx.repo, wt.path),
    baseCommit: wt.baseCommit,
    ...(ctx.deps.fleet.workerName === null ? {} : { worker: ctx.deps.fleet.workerName }),
    ...(ctx.roles.recorded ? { role: roleStamp(ctx, spec) } : {}),
  });
  const denied = await preCheck(ctx, spec, attempt);
  if (denied) return { wt, denied, setupNote: null };
  const setup = await runSetupCommand(ctx, spec, attempt, wt);
  // Dependencies the run's branch added (package.json, lockfile) installed in this worktree's own tree.
  const deps = setup.kind === 'broken' ? setup : await syncAddedDependencies(ctx, spec, attempt, wt);
  for (const step of [setup, deps]) {
    if (step.kind !== 'broken') continue;
    const advice = step.advice ?? 'fix the setup command or the installed dependencies';
    const human = `${step.message} — the environment, not the code: ${advice}; then answer retry`;
    return { wt, denied: await fatal(ctx, taskId, attempt, step.message, 'environment_broken', human, step.output), setupNote: null };
  }
  const notes = [setup, deps].flatMap((s) => (s.kind === 'failed' ? [s.note] : []));
  return { wt, denied: null, setupNote: notes.length > 0 ? notes.join('\n\n') : null };
}

export type SetupResult = { kind: 'none' | 'done' } | { kind: 'failed'; note: string } | { kind: 'broken'; message: string; output: string; advice?: string };

/**
 * The configured `setup` command, sandboxed in the task's worktree, recorded as a run_setup tool call of
 * the team; what it leaves untracked is never committed by the task's checkpoints. A setup that cannot
 * start (exit 127) is the environment's fault: the task escalates. One that runs and fails (a build
 * broken by the code) is the task's to see: its agent is told, with the output.
 */
export async function runSetupCommand(ctx: RunContext, spec: TaskSpec, attempt: number, wt: TaskWorktree, step: { command: string; id: string } | null = null): Promise<SetupResult> {
  const command = step?.command ?? ctx.deps.config.setup;
  const tool = ctx.deps.tools.builtin.find((t) => t.name === 'run_setup');
  if (command === undefined || tool === undefined) return { kind: 'none' };
  const toolUseId = `${step?.id ?? 'setup'}-${spec.id}-${attempt}`;
  await ctx.rec.record('team', 'TOOL_CALL', { taskId: spec.id, toolUseId, name: tool.name, input: { command } });
  const started = ctx.rec.now();
  let result = await ctx.deps.tools.call(tool, {}, { ...toolContext(ctx, wt.path, spec.id), setupCommand: command });
  // Its outputs (dist/, a generated file the repository does not ignore) are no change of the task's.
  if (result.ok && ctx.workspace.keepOutOfCheckpoints) {
    const kept = await ctx.workspace.keepOutOfCheckpoints(wt);
    if (kept.length > 0) result = { ...result, forModel: `${result.forModel}\n[kept out of commits: ${kept.join(', ')}]` };
  }
  const outputRef = await ctx.rec.blob(canonicalJson({ forModel: result.forModel, forDisplay: result.forDisplay }));
  await ctx.rec.record('team', 'TOOL_RESULT', {
    taskId: spec.id,
    toolUseId,
    name: tool.name,
    ok: result.ok,
    outputRef,
    ...(result.data === undefined ? {} : { data: result.data }),
    durationMs: ctx.rec.now() - started,
  });
  if (result.ok) return { kind: 'done' };
  const cannotRun = result.data?.cannotRun;
  const what = step === null ? 'the setup command' : `\`${command}\` (installing what the run's branch added to the dependencies)`;
  if (typeof cannotRun === 'string') {
    const advice = typeof result.data?.advice === 'string' ? result.data.advice : undefined;
    return { kind: 'broken', message: `${what} could not run: ${cannotRun}`, output: result.forModel, ...(advice === undefined ? {} : { advice }) };
  }
  return { kind: 'failed', note: `${step === null ? `The setup command (${command})` : `\`${command}\``} failed in your worktree before you started:\n${result.forModel}` };
}

/** The `lessons` member for a TASK_COMPLETED or TASK_FAILED entry, when the agent proposed any. */
export function lessonsOf(result: { lessons?: string[] | undefined } | null): { lessons?: string[] } {
  return result?.lessons && result.lessons.length > 0 ? { lessons: result.lessons } : {};
}

/** Backoff for a retry; jitter is derived from the run, task and attempt so replays wait the same. */
export function retryDelayMs(ctx: RunContext, spec: TaskSpec, attempt: number): number {
  const r = spec.retry;
  // The spec's backoffSeconds: the wait before each retry in turn, the last repeating.
  if (r?.delaysMs) return r.delaysMs[Math.min(attempt, r.delaysMs.length) - 1] ?? 0;
  const base = r?.baseMs ?? 500;
  const raw = r?.backoff === 'fixed' ? base : base * 2 ** Math.max(0, attempt - 1);
  if (r?.jitter === false) return raw;
  const h = parseInt(sha256Hex(`${ctx.runId}/${spec.id}/${attempt}`).slice(0, 8), 16);
  return Math.round(raw * (0.5 + (h % 1000) / 2000));
}

/**
 * The attempts a task may make after a failure of `kind`: its retry policy (2 without one), capped by the
 * retries its last allow granted; 1 when the policy's `retryOn` does not name the kind.
 */
export function maxAttempts(ctx: RunContext, spec: TaskSpec, kind: ErrorKind): number {
  const retryOn = spec.retry?.retryOn;
  if (retryOn !== undefined && !retryOn.includes(kind)) return 1;
  return attemptsAllowed(ctx, spec, spec.retry?.attempts ?? 2);
}

export function sleep(ctx: RunContext, ms: number): Promise<void> {
  return ctx.deps.runtime.sleep(ms);
}

/** Errors that end the run (budget, interrupt, bad key, a script with no turn left, a fleet writer fenced out) rather than a task attempt. */
export function isStopError(e: unknown): boolean {
  return e instanceof BudgetExceededError || (isAciaError(e) && (e.code === 'ABORTED' || e.code === 'LLM_AUTH' || e.code === 'SCRIPT_EXHAUSTED' || e.code === 'LEDGER_FENCED'));
}

/** Values for the template's placeholders: required exactly when the definition declares some. */
type PromptValues<V extends string> = [V] extends [never] ? { promptValues?: undefined } : { promptValues: Readonly<Record<V, string>> };

export type TaskAgentOptions<O, V extends string = never> = PromptValues<V> & {
  def: AgentDefinition<O, V>;
  /** The role it runs as (default: the definition's own, pm, dev or qa). */
  role?: string;
  actor: string;
  /** Recorded on tool entries; `plan` for the PM. */
  taskId: string;
  /** The worktree the agent's tools act on. */
  root: string;
  task: string;
  /** The PM starts before the run worktree exists: its tools (and their sandbox) wait for it. */
  waitForWorkspace?: boolean;
  onResult?: (call: ToolCall, result: ToolResult) => void;
  check?: (result: O) => string[] | Promise<string[]>;
  /**
   * The task and attempt the session works on (absent: the PM): the user's task.post hooks judge the
   * delivered result while the session can still act on a denial, and its tool hooks know the task.
   */
  gate?: CompletionGate;
  /** The agent's reads are recorded as internal context (the planner's). */
  internalize?: boolean;
};

/**
 * One agent session for a task: its tools recorded in the ledger, the budget checked before each model
 * call. A model failure that the client's retries could not fix ends the session as a protocol error
 * the caller may retry; stop errors propagate.
 */
export async function runTaskAgent<O, V extends string = never>(ctx: RunContext, o: TaskAgentOptions<O, V>): Promise<AgentOutcome<O>> {
  ctx.deps.tools.mcp.prewarm(o.root, o.def.role);
  try {
    // Built now (a sandbox that cannot start fails the attempt before any model call), or, for the PM,
    // once the worktree its tools act on exists.
    const toolCtx = o.waitForWorkspace ? lazy(() => Promise.resolve(ctx.workspaceReady).then(() => toolContext(ctx, o.root))) : Promise.resolve(toolContext(ctx, o.root, o.taskId));
    const role = roleOf(ctx, o.role ?? o.def.role);
    const hooks = modelHooks(ctx, o.actor, o.taskId === 'plan' || o.taskId === 'amend' ? undefined : o.taskId, role);
    return await runAgent({
      llm: role.model.client,
      model: role.model.id,
      caller: o.actor,
      system: systemPrompt(ctx, o, role),
      task: o.task,
      output: o.def.output,
      toolbox: makeToolbox({
        tools: agentTools(ctx, o.def as AgentDefinition<unknown>, role),
        toSpec: ctx.deps.tools.toSpec,
        ctx: toolCtx,
        callTool: ctx.deps.tools.call,
        recorder: ctx.rec,
        actor: o.actor,
        taskId: o.taskId,
        ...(o.onResult ? { onResult: o.onResult } : {}),
        explainUnknown: (name) => ctx.deps.tools.mcp.unavailable(name),
        ...optional('hooks', toolHooks(ctx, { actor: o.actor, taskId: o.taskId, root: o.root, spec: o.gate?.work.spec ?? null, attempt: o.gate?.work.attempt ?? null })),
        ...(o.internalize ? { internalize: true } : {}),
      }),
      maxTurns: role.def.format === 'builtin' ? o.def.maxTurns : (role.def.maxTurns ?? o.def.maxTurns),
      maxTokens: ctx.deps.config.maxTokensPerCall,
      runId: ctx.runId,
      ...(o.check || o.gate ? { check: async (result: O) => checkThenGate(o, result) } : {}),
      onRejectedResult: (call, problems) => recordRejectedResult(ctx, o.actor, o.taskId, call, problems),
      // The PM amending the plan was handed its messages; later ones wait for its next amendment.
      ...(o.taskId === 'amend' ? {} : { inbox: ctx.mailbox.inboxFor(ctx, o.taskId === 'plan' ? 'pm' : o.taskId, o.taskId, o.actor) }),
      signal: ctx.deps.runtime.signal,
      onChunk: (chunk) => ctx.deps.runtime.onEvent({ kind: 'chunk', chunk }),
      ...hooks,
      // The PM's first request is on its way after this turn of the event loop: the run worktree's
      // checkout starts then, in the time the model takes to answer.
      ...(o.waitForWorkspace
        ? {
            beforeModelCall: async (request: LlmRequest) => {
              await hooks.beforeModelCall(request);
              setTimeout(() => ctx.workspaceReady.start(), 0);
            },
          }
        : {}),
    });
  } catch (e) {
    if (isStopError(e)) throw e;
    return { kind: 'protocol_error', turns: 0, message: `model call failed: ${errorMessage(e)}` };
  } finally {
    // A finished session's MCP server instances stop now rather than at the end of a long run.
    await ctx.deps.tools.mcp.release(o.root);
  }
}

/** The definition's own check first; only a result that passes it goes to the user's hooks. */
async function checkThenGate<O>(o: { check?: (result: O) => string[] | Promise<string[]>; gate?: CompletionGate }, result: O): Promise<string[]> {
  const problems = o.check ? await o.check(result) : [];
  return problems.length > 0 || !o.gate ? problems : o.gate.check(result);
}

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return value === undefined ? {} : ({ [key]: value } as { [P in K]?: V });
}

/**
 * A return_result the agent loop rejected: recorded as the call it was and a failed result holding the
 * reasons, so `acia show` can say why a result was not accepted (the model saw the same reasons).
 */
async function recordRejectedResult(ctx: RunContext, actor: string, taskId: string, call: ToolCall, problems: string[]): Promise<void> {
  const text = `result rejected: ${problems.join('; ')}`;
  await ctx.rec.record(actor, 'TOOL_CALL', { taskId, toolUseId: call.id, name: call.name, input: call.input ?? null });
  const outputRef = await ctx.rec.blob(canonicalJson({ forModel: `The result is invalid:\n${problems.join('\n')}`, forDisplay: text }));
  await ctx.rec.record(actor, 'TOOL_RESULT', { taskId, toolUseId: call.id, name: call.name, ok: false, outputRef, data: { rejected: true, problems }, durationMs: 0 });
}

/** The role a task's attempt runs as, and its definition's digest, for TASK_STARTED. */
function roleStamp(ctx: RunContext, spec: TaskSpec): { name: string; digest: string } {
  const role = roleOf(ctx, roleNameOf(spec.capability, spec.input));
  return { name: role.def.name, digest: role.digest };
}
