// Runs a dev task (dev.implement, dev.fix): the Dev agent in its own worktree, then ACIA commits the
// attempt, asks policy, checks the task's verification expressions and merges into the run branch.
import { devAgent } from '../agents/dev/dev-agent.js';
import type { RunContext } from './run-context.js';
import { devAgentsOf } from './agents-acp/dev-agent-choice.js';
import { runBestOf, startCandidates } from './agents-acp/best-of-n.js';
import { runAcpDevAgent } from './agents-acp/acp-dev-worker.js';
import { effectiveSource, guardScope } from './scheduler.js';
import { filesWithMarkers, mergeTaskId, mergeTaskSpec } from './merge-task.js';
import type { TaskWorktree } from './workspace.js';
import { roleNameOf } from './roles.js';
import type { TaskSpec } from '../core/acm/contracts.js';
import { AciaError, errorMessage } from '../core/errors.js';
import type { ToolResult } from '../core/tools/types.js';
import type { ToolCall } from '../agents/agent-loop.js';
import { lessonsOf, maxAttempts, retryDelayMs, runTaskAgent, sleep, startAttempt, taskMessage, type TaskOutcome } from './task-common.js';
import { fatal, policyCheck, undoChange } from './task-policy.js';
import { CompletionGate, mergeHooks } from './user-hooks.js';

export async function runDevTask(ctx: RunContext, taskId: string): Promise<TaskOutcome> {
  const task = ctx.state.tasks.get(taskId)!;
  const spec = task.spec;
  const actor = `dev:${taskId}`;
  const agents = devAgentsOf(ctx);
  for (let attempt = task.attempts + 1; ; attempt++) {
    // Best-of-N candidates start from the attempt's base at once: their agents boot while the task's own
    // worktree, checks and setup are prepared (a merge task's candidates need its merge state first).
    const early = agents.length > 1 && spec.capability !== 'dev.merge' ? startCandidates(ctx, { taskId, base: task.lastCheckpoint ?? (await ctx.workspace.runHead()), agents }) : null;
    const { wt, denied, setupNote } = await startAttempt(ctx, spec, attempt, task.lastCheckpoint).catch(async (e: unknown) => {
      await early?.close();
      throw e;
    });
    if (denied) {
      await early?.close();
      return denied;
    }

    const extra: string[] = setupNote === null ? [] : [setupNote];
    const merging = spec.capability === 'dev.merge' ? await beginMerge(ctx, spec, wt) : null;
    if (merging !== null) extra.push(...merging.context);
    const failure = (spec.input as { failure?: unknown }).failure;
    if (typeof failure === 'string') extra.push(`Failing test output to fix:\n${failure}`);
    if (task.guidance) extra.push(`Guidance from the human: ${task.guidance}`);

    const message = taskMessage(ctx, spec, extra);
    const blocked = installBlocked();
    let outcome;
    // ACIA's own agent has the user's task.post hooks judge its result in its session; an external one's
    // result meets them at the task.post policy point below.
    let gate: CompletionGate | null = null;
    if (agents.length > 1) {
      // Best-of-N: the candidates work from this attempt's base; the winner's files become this worktree's.
      const best = await runBestOf(ctx, early ?? startCandidates(ctx, { taskId, base: wt.baseCommit, agents }), { taskId, attempt, task: message });
      if (best.commit) await ctx.workspace.adopt(wt, best.commit);
      outcome = best.outcome;
    } else if (agents[0]?.agent) {
      outcome = await runAcpDevAgent(ctx, { agent: agents[0].agent, actor, taskId, root: wt.path, task: message });
    } else {
      gate = new CompletionGate(ctx, { actor, root: wt.path, spec, attempt });
      outcome = await runTaskAgent(ctx, { def: devAgent, role: roleNameOf(spec.capability, spec.input), actor, taskId, root: wt.path, task: message, gate, onResult: blocked.see });
    }
    const cut = blocked.last();
    if (cut !== null) {
      // Adding a dependency needs a registry the sandbox lets through: no fix attempt can change that.
      const why = `\`${cut.command}\` could not reach a package registry: ${cut.line}`;
      return fatal(ctx, taskId, attempt, why, 'environment_broken', `${why} — the environment, not the code: ${registryAdvice(ctx)}; then answer retry`, cut.output);
    }

    if (outcome.kind === 'returned') {
      const result = outcome.result;
      const firstLine = result.summary.split('\n')[0]?.slice(0, 72) ?? '';
      if (merging !== null) {
        // Checked by ACIA over the files, never taken from the agent's word.
        const left = await filesWithMarkers(wt.path, merging.files);
        const check = `no conflict markers left in ${merging.files.join(', ')}`;
        await ctx.rec.record('team', 'VERIFICATION', { taskId, passed: left.length === 0, exitCode: null, command: check, passedCount: null, failedCount: null, outputRef: await ctx.rec.blob(left.length === 0 ? check : `markers left in: ${left.join(', ')}`), source: 'check' });
        if (left.length > 0) {
          const message = `conflict markers left in ${left.join(', ')}`;
          if (attempt < maxAttempts(ctx, spec, 'FATAL_ERROR')) {
            await scheduleRetry(ctx, taskId, attempt, message);
            continue;
          }
          return fatal(ctx, taskId, attempt, message, 'merge_conflict', `${taskId} could not resolve the merge conflict: ${message}`);
        }
      }
      const { commit, files } =
        merging !== null
          ? await ctx.workspace.commitMerge(taskId, wt, `acia(${taskId}): ${firstLine}\n\n${result.summary}\n\nRun: ${ctx.runId}, attempt ${attempt}`)
          : await ctx.workspace.checkpoint(taskId, wt, `acia(${taskId}): ${firstLine}\n\n${result.summary}\n\nRun: ${ctx.runId}, attempt ${attempt}`);
      if (commit) await ctx.rec.record('team', 'CHECKPOINT', { taskId, attempt, commit, branch: wt.branch, files });
      const output: Record<string, unknown> = { ...(result.facts ?? {}), summary: result.summary, filesChanged: files.length, commit };

      const post = gate?.stopped ? { allow: false, reason: `hook ${gate.stopped.hook}: ${gate.stopped.reason}` } : await policyCheck(ctx, 'task.post', spec, files, { hooks: gate === null });
      if (!post.allow && !task.policyOverride) return undoChange(ctx, taskId, attempt, wt, post.reason);

      const failedCheck = await runChecks(ctx, taskId, spec.verification, output);
      if (failedCheck !== null) {
        if (attempt < maxAttempts(ctx, spec, 'FATAL_ERROR')) {
          await scheduleRetry(ctx, taskId, attempt, `verification ${failedCheck} is false`);
          continue;
        }
        await ctx.rec.record('team', 'TASK_FAILED', { taskId, attempt, errorKind: 'FATAL_ERROR', message: `verification ${failedCheck} is false` });
        return { kind: 'failed', errorKind: 'FATAL_ERROR', message: `verification ${failedCheck} is false` };
      }

      const gateMerge = await mergeHooks(ctx, spec, attempt, wt, files, commit);
      if (!gateMerge.allow && !task.policyOverride) return undoChange(ctx, taskId, attempt, wt, `hook ${gateMerge.hook}: ${gateMerge.reason}`);
      const merged = await ctx.workspace.merge(taskId);
      await ctx.rec.record('team', 'MERGE', { taskId, into: ctx.workspace.runBranch, commit: merged.commit, conflict: merged.conflict, files: merged.files });
      if (merged.conflict && spec.capability !== 'dev.merge' && !ctx.state.tasks.has(mergeTaskId(taskId))) {
        // The normal case on real code: a dev.merge task resolves it, and takes this task's place for what follows.
        const mergeSpec = mergeTaskSpec(ctx, taskId, merged.files, merged.hunks ?? '');
        await ctx.rec.record('team', 'TASK_ADDED', { task: mergeSpec, edges: [], reason: 'merge', parent: taskId, replaces: taskId, iteration: 0 });
        await ctx.rec.record('team', 'TASK_COMPLETED', { taskId, attempt, output: { ...output, mergedBy: mergeSpec.id }, summary: `${result.summary} (merge conflict in ${merged.files.join(', ')}: ${mergeSpec.id} resolves it)`, ...lessonsOf(result) });
        return { kind: 'completed' };
      }
      if (merged.conflict) {
        return fatal(ctx, taskId, attempt, `merge conflict in ${merged.files.join(', ')}`, 'merge_conflict', `${taskId} conflicts with work already merged, in ${merged.files.join(', ') || 'unknown files'}`);
      }
      await ctx.rec.record('team', 'TASK_COMPLETED', { taskId, attempt, output, summary: result.summary, ...lessonsOf(result) });
      return { kind: 'completed' };
    }

    if (outcome.kind === 'auth_required') {
      // No retry or other plan mends an agent that cannot log in: the task fails once and a human is asked.
      await ctx.rec.record('team', 'TASK_FAILED', { taskId, attempt, errorKind: 'FATAL_ERROR', message: outcome.message });
      return { kind: 'escalate', reason: 'environment_broken', message: `${taskId} failed: ${outcome.message} — the environment, not the code: fix the agent's setup, then answer retry` };
    }
    if (outcome.kind === 'loop_detected') {
      return fatal(ctx, taskId, attempt, `loop detected: ${outcome.message}`, 'loop_detected', `${actor} is looping: ${outcome.message}`);
    }
    // protocol_error, max_turns, refused: retry the attempt from the last checkpoint while attempts remain.
    if (attempt < maxAttempts(ctx, spec, 'RETRYABLE_ERROR')) {
      await scheduleRetry(ctx, taskId, attempt, `${outcome.kind}: ${outcome.message}`);
      continue;
    }
    await ctx.rec.record('team', 'TASK_FAILED', { taskId, attempt, errorKind: 'RETRYABLE_ERROR', message: `${outcome.kind}: ${outcome.message}` });
    return { kind: 'failed', errorKind: 'RETRYABLE_ERROR', message: `${outcome.kind}: ${outcome.message}` };
  }
}

/**
 * Watches a dev agent's commands for a dependency install that could not reach a registry and was not
 * followed by one that worked (the agent may have found another way).
 */
function installBlocked(): { see: (call: ToolCall, result: ToolResult) => void; last: () => { command: string; line: string; output: string } | null } {
  let cut: { command: string; line: string; output: string } | null = null;
  return {
    see: (call, result) => {
      if (call.name !== 'run_command' || result.data?.installer !== true) return;
      const line = result.data.registryUnreachable;
      const command = (call.input as { command?: unknown }).command;
      if (result.ok) cut = null;
      else if (typeof line === 'string' && typeof command === 'string') cut = { command, line, output: result.forModel };
    },
    last: () => cut,
  };
}

/** What to do about an unreachable registry: which hosts the sandbox lets through, and where to allow one. */
function registryAdvice(ctx: RunContext): string {
  if (ctx.deps.config.sandbox === 'off') return 'the registry cannot be reached from this machine (--sandbox off): check the network or the registry settings, or add the dependency in your checkout';
  const hosts = ctx.deps.config.allowedHosts;
  const now = hosts.length === 0 ? 'none is allowed now' : `allowed now: ${hosts.join(', ')}`;
  return `commands in the sandbox reach only the hosts in allowedHosts (${now}): add the registry's host (registry.npmjs.org, registry.yarnpkg.com, pypi.org and files.pythonhosted.org, or your own index's host:port) to allowedHosts in your user config (~/.config/acia/config.json, or .acia/config.json once trusted), or add the dependency in your checkout`;
}

async function scheduleRetry(ctx: RunContext, taskId: string, attempt: number, reason: string): Promise<void> {
  const spec = ctx.state.tasks.get(taskId)!.spec;
  const delayMs = retryDelayMs(ctx, spec, attempt);
  await ctx.rec.record('team', 'RETRY_SCHEDULED', { taskId, attempt: attempt + 1, delayMs, reason });
  await sleep(ctx, delayMs);
}

/** Runs a task's verification expressions over its output; returns the first that is false, or null. */
export async function runChecks(ctx: RunContext, taskId: string, checks: readonly string[], output: Record<string, unknown>): Promise<string | null> {
  for (const check of checks) {
    const scope = guardScope(ctx.state, ctx.facts);
    scope.tasks[taskId] = output;
    // A re-verification answers for the task it replaced: expressions written against that id read this output.
    for (const [id, t] of ctx.state.tasks) if (effectiveSource(ctx.state, id) === ctx.state.tasks.get(taskId) && t !== ctx.state.tasks.get(taskId)) scope.tasks[id] = output;
    let passed: boolean;
    let cannotRun: string | undefined;
    try {
      passed = ctx.deps.governance.evalGuard(check, scope);
    } catch (e) {
      // Validation refuses such a plan; one that got here anyway says why its check is false.
      passed = false;
      cannotRun = `the expression cannot be evaluated: ${errorMessage(e)}`;
    }
    const outputRef = await ctx.rec.blob(check);
    await ctx.rec.record('team', 'VERIFICATION', { taskId, passed, exitCode: null, command: check, passedCount: null, failedCount: null, outputRef, source: 'check', ...(cannotRun === undefined ? {} : { cannotRun }) });
    if (!passed) return check;
  }
  return null;
}

/**
 * Starts a dev.merge attempt: the task's branch merged into this worktree (at the run head) without a
 * commit, conflicts in place. Returns the conflicted files and what the agent is told about them.
 */
async function beginMerge(ctx: RunContext, spec: TaskSpec, wt: TaskWorktree): Promise<{ files: string[]; context: string[] }> {
  const input = spec.input as { task?: unknown; files?: unknown; conflicts?: unknown };
  const source = typeof input.task === 'string' ? ctx.state.tasks.get(input.task) : undefined;
  // The branch comes from the recorded state, never from the task input: a plan cannot name a ref.
  if (!source?.branch) throw new AciaError('PLAN_INVALID', `${spec.id}: dev.merge needs a task whose branch exists (input.task ${String(input.task)})`);
  const live = await ctx.workspace.beginMerge(wt, source.branch);
  const recorded = Array.isArray(input.files) ? input.files.filter((f): f is string => typeof f === 'string') : [];
  const files = [...new Set([...recorded, ...live])];
  // The prompt holds only what the ledger recorded (replay sends the same request); the check covers both.
  const context = [`Conflicted files: ${recorded.join(', ')}`];
  if (typeof input.conflicts === 'string' && input.conflicts !== '') context.push(`Conflict hunks (as git left them):\n${input.conflicts}`);
  return { files, context };
}
