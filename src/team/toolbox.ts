// The toolbox an agent gets from the team: resolves tool names, records each call before it runs
// (write-ahead) and its result after, with the output stored as a blob.
import { canonicalJson } from '../core/acm/canonical-json.js';
import type { LlmToolSpec } from '../core/llm/types.js';
import type { Tool, ToolContext, ToolResult } from '../core/tools/types.js';
import type { AgentToolbox, ToolCall } from '../agents/agent-loop.js';
import type { Recorder } from './recorder.js';

export type CallTool = (tool: Tool, input: unknown, ctx: ToolContext) => Promise<ToolResult>;

export interface ToolboxOptions {
  tools: readonly Tool[];
  toSpec: (tool: Tool) => LlmToolSpec;
  /** Resolved before the first tool call; the PM's may still be waiting for its worktree. */
  ctx: PromiseLike<ToolContext>;
  callTool: CallTool;
  recorder: Recorder;
  actor: string;
  taskId: string;
  /** Sees every finished call (the QA runner keeps the last run_tests result). */
  onResult?: (call: ToolCall, result: ToolResult) => void;
  /** Why a tool the agent does not have is missing (an MCP server that did not start), or null. */
  explainUnknown?: (name: string) => string | null;
  /** The user's tool.pre and tool.post hooks (user-hooks.ts). */
  hooks?: ToolHooks;
  /**
   * The planner's reads are internal context (ACM v0.5 §5.3.4): each successful read-only call's output is
   * also recorded as CONTEXT_INTERNALIZED with its digest, so the bundle can carry what planning saw.
   */
  internalize?: boolean;
}

/** What a read names: its path, or its query. */
function describeInput(input: unknown): string {
  const i = (input ?? {}) as { path?: unknown; pattern?: unknown };
  if (typeof i.pattern === 'string') return `${i.pattern}${typeof i.path === 'string' ? ` in ${i.path}` : ''}`;
  return typeof i.path === 'string' ? i.path : JSON.stringify(input ?? null);
}

export interface ToolHooks {
  /** A denial: why the call must not run (the agent reads it as the call's result). */
  before(call: ToolCall): Promise<{ blockedBy: string; reason: string } | null>;
  /** What the hooks add to the result the agent reads (a denial's reason, context), or null. */
  after(call: ToolCall, result: ToolResult): Promise<string | null>;
}

export function makeToolbox(o: ToolboxOptions): AgentToolbox {
  const byName = new Map(o.tools.map((t) => [t.name, t]));
  return {
    specs: o.tools.map(o.toSpec),
    readOnly: (name) => byName.get(name)?.readOnly ?? false,
    async invoke(call) {
      const tool = byName.get(call.name);
      // Write-ahead: a call that can change something is durable before it runs. ACIA's own read-only tools
      // (not an MCP server's, whose read-only hint is the server's word) change nothing a crash could leave
      // half done: their call and result go out with the ledger's next group commit, unwaited.
      const entry = { taskId: o.taskId, toolUseId: call.id, name: call.name, input: call.input ?? null };
      if (tool?.readOnly === true && tool.descriptor.provider === 'acia') await o.recorder.note(o.actor, 'TOOL_CALL', entry);
      else await o.recorder.record(o.actor, 'TOOL_CALL', entry);
      const started = o.recorder.now();
      const blocked = await o.hooks?.before(call);
      const result: ToolResult = blocked
        ? {
            ok: false,
            forModel: `Blocked by the hook ${blocked.blockedBy}: ${blocked.reason}`,
            forDisplay: `blocked by hook ${blocked.blockedBy}`,
            // Marked so a replay never serves it as a tool's output: the tool did not run.
            data: { blockedBy: blocked.blockedBy },
          }
        : tool
          ? await o.callTool(tool, call.input, await o.ctx)
          : unknownTool(call.name, byName, o.explainUnknown?.(call.name) ?? null);
      const outputRef = await o.recorder.blob(canonicalJson({ forModel: result.forModel, forDisplay: result.forDisplay }));
      // Its effects happened already; the next call that can change something (or the task's next step)
      // waits for this entry with its own. A planner's read is internal context: its record is appended
      // right after, with no await between, so reads running side by side cannot come between the two.
      const written = o.recorder.note(o.actor, 'TOOL_RESULT', {
        taskId: o.taskId,
        toolUseId: call.id,
        name: call.name,
        ok: result.ok,
        outputRef,
        ...(result.data === undefined ? {} : { data: result.data }),
        durationMs: o.recorder.now() - started,
      });
      const internalized =
        o.internalize && result.ok && tool?.readOnly === true
          ? o.recorder.note(o.actor, 'CONTEXT_INTERNALIZED', {
              taskId: o.taskId,
              artifacts: [{ uri: `${call.name}:${describeInput(call.input)}`, tool: call.name, toolUseId: call.id, input: call.input ?? null, digest: outputRef, scope: 'internal' }],
              rationale: `read by ${o.actor} while planning, beyond the Context Packet`,
            })
          : undefined;
      await written;
      await internalized;
      o.onResult?.(call, result);
      // TOOL_RESULT holds what the tool returned; what a hook adds is in its POLICY_DECISION (a replay adds it again).
      const added = blocked ? null : await o.hooks?.after(call, result);
      return added ? { ...result, forModel: `${result.forModel}\n\n${added}` } : result;
    },
  };
}

function unknownTool(name: string, byName: ReadonlyMap<string, Tool>, why: string | null): ToolResult {
  if (why !== null) return { ok: false, forModel: why, forDisplay: why };
  return { ok: false, forModel: `Unknown tool "${name}". Available tools: ${[...byName.keys()].join(', ')}, return_result.`, forDisplay: `unknown tool ${name}` };
}
