// An external agent's session as the task's trace: its tool calls and replies recorded as TOOL_CALL /
// TOOL_RESULT entries of the task, and its permission requests answered by policy (a protected path is
// refused) and recorded as POLICY_DECISION entries (hook `agent.permission`).
import type { RequestPermissionRequest, RequestPermissionResponse, SessionNotification } from '@agentclientprotocol/sdk';
import { matchesProtected } from '../../core/policy/policy.js';
import type { RunContext } from '../run-context.js';
import type { AcpBootOptions } from './acp-dev-worker.js';

/** Records the agent's updates as the task's trace, and answers its permission requests by policy. */
export class Trace {
  private readonly chunks: string[] = [];
  private readonly open = new Map<string, { title: string; kind: string; rawInput: unknown; locations: string[] }>();
  private pending: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly ctx: RunContext,
    private readonly o: AcpBootOptions,
    /** The worktree's path as the sandboxed agent sees it, when that differs. */
    private readonly inside?: string,
  ) {}

  text(): string {
    return this.chunks.join('');
  }

  flush(): Promise<unknown> {
    return this.pending.catch(() => undefined);
  }

  update(n: SessionNotification): void {
    const u = n.update;
    const { ctx, o } = this;
    if (u.sessionUpdate === 'agent_message_chunk' && u.content.type === 'text') {
      this.chunks.push(u.content.text);
      return;
    }
    if (u.sessionUpdate !== 'tool_call' && u.sessionUpdate !== 'tool_call_update') return;
    // A call arrives in pieces (announced, filled in, finished); it is recorded once, when it ends.
    const call = this.open.get(u.toolCallId) ?? { title: '', kind: 'other', rawInput: null, locations: [] };
    if (u.title) call.title = u.title;
    if (u.kind) call.kind = u.kind;
    if (u.rawInput !== undefined && !isEmpty(u.rawInput)) call.rawInput = u.rawInput;
    if (u.locations && u.locations.length > 0) call.locations = u.locations.map((l) => l.path);
    this.open.set(u.toolCallId, call);
    if (u.sessionUpdate !== 'tool_call_update' || (u.status !== 'completed' && u.status !== 'failed')) return;
    this.open.delete(u.toolCallId);
    const shown = (u.content ?? []).map((c) => (c.type === 'content' && c.content.type === 'text' ? c.content.text : c.type === 'diff' ? `--- ${c.path}\n${c.newText}` : `[${c.type}]`)).join('\n');
    const output = shown || (typeof u.rawOutput === 'string' ? u.rawOutput : JSON.stringify(u.rawOutput ?? call.title));
    const name = `${o.agent.name}:${call.kind}`;
    const ok = u.status === 'completed';
    this.chain(async () => {
      await ctx.rec.record(o.actor, 'TOOL_CALL', { taskId: o.taskId, toolUseId: u.toolCallId, name, input: call });
      const outputRef = await ctx.rec.blob(output);
      return ctx.rec.record(o.actor, 'TOOL_RESULT', { taskId: o.taskId, toolUseId: u.toolCallId, name, ok, outputRef, durationMs: 0 });
    });
  }

  /** Allowed unless the call names a protected path; the decision is recorded like every policy answer. */
  async permission(p: RequestPermissionRequest): Promise<RequestPermissionResponse> {
    const { ctx, o } = this;
    const roots = [o.root, this.inside].filter((r): r is string => r !== undefined);
    const paths = (p.toolCall.locations ?? []).map((l) => {
      const root = roots.find((r) => l.path.startsWith(`${r}/`));
      return root === undefined ? l.path : l.path.slice(root.length + 1);
    });
    const hit = paths.find((f) => ctx.deps.config.protectedPaths.some((pat) => matchesProtected(f, pat)));
    const allow = hit === undefined;
    const reason = allow ? undefined : `${hit} is a protected path`;
    const request = { agent: o.agent.name, task: { id: o.taskId }, toolCall: { title: p.toolCall.title ?? null, kind: p.toolCall.kind ?? null, paths }, options: p.options.map((x) => x.optionId) };
    this.chain(() => ctx.rec.record('policy', 'POLICY_DECISION', { hook: 'agent.permission', taskId: o.taskId, request, response: { allow, ...(reason ? { reason } : {}) } }));
    await this.flush();
    const want = allow ? ['allow_once', 'allow_always'] : ['reject_once', 'reject_always'];
    const option = p.options.find((x) => x.kind === want[0]) ?? p.options.find((x) => x.kind === want[1]);
    return option ? { outcome: { outcome: 'selected', optionId: option.optionId } } : { outcome: { outcome: 'cancelled' } };
  }

  private chain(step: () => Promise<unknown>): void {
    this.pending = this.pending.then(step, step);
  }
}

function isEmpty(v: unknown): boolean {
  return typeof v === 'object' && v !== null && Object.keys(v).length === 0;
}
