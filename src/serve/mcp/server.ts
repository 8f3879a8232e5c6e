// The team as an MCP server: tools acia_run, acia_status, acia_answer, acia_say, acia_resume, acia_cancel,
// acia_runs, acia_show, acia_verify, and resources for run ledgers, plans and wiki pages. Errors are MCP
// tool errors that carry the CLI's message, error code and exit code. A caller that cancels a call
// waiting on a run (`notifications/cancelled`, Esc in Claude Code) stops that run, resumable (like Ctrl-C);
// acia_cancel ends a run for good (like `acia cancel`).
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { errorMessage, isAciaError } from '../../core/errors.js';
import type { RunResult } from '../../team/team.js';
import { exitCodeFor } from '../../app/exit-codes.js';
import type { RunEvent, RunsService } from './runs-service.js';

type Extra = {
  _meta?: { progressToken?: string | number } & Record<string, unknown>;
  signal: AbortSignal;
  sendNotification: (n: { method: 'notifications/progress'; params: { progressToken: string | number; progress: number; message?: string } }) => Promise<void>;
};

const repo = z.string().optional().describe('the repository (default: the directory acia mcp was started in)');

/** Starting or continuing a run: new branches and worktrees only (the user's checkout is untouched), calls to model APIs. */
const RUNS: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true };
const READS: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
/** A message into a running run's inbox: it adds to what the run knows (nothing is undone), and sending it twice sends two messages. */
const SAYS: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };
/** Cancelling a run: it cannot be undone (the run does not go on), and cancelling it again changes nothing. */
const STOPS: ToolAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false };

/**
 * The server one client connection gets. `waiting` holds the runs a call of this connection is waiting
 * on: when the connection goes, those are stopped and the others left to finish (see serve.ts).
 */
export function createAciaMcpServer(service: RunsService, version: string, waiting: Set<string> = new Set()): McpServer {
  const server = new McpServer({ name: 'acia', version }, { capabilities: { logging: {} } });

  /** Waits for the run; the caller cancelling its call stops the run (its ledger ends aborted, resumable). */
  const waitFor = async (started: { runId: string; done: Promise<RunResult> }, extra: Extra): Promise<CallToolResult> => {
    const stop = () => void service.stop([started.runId]);
    waiting.add(started.runId);
    if (extra.signal.aborted) stop();
    extra.signal.addEventListener('abort', stop, { once: true });
    try {
      return ok(resultOf(await started.done));
    } finally {
      extra.signal.removeEventListener('abort', stop);
      waiting.delete(started.runId);
    }
  };

  /** Every ledger entry of a run this server drives goes out as a log message; while a caller waits, as progress too. */
  const streamer = (extra: Extra, wait: boolean) => {
    let n = 0;
    const token = extra._meta?.progressToken;
    return (e: RunEvent) => {
      void server.server.sendLoggingMessage({ level: 'info', logger: 'acia', data: e }).catch(() => undefined);
      if (wait && token !== undefined) {
        n++;
        void extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: n, message: `${e.runId} ${e.seq} ${e.actor} ${e.text}` } }).catch(() => undefined);
      }
    };
  };

  server.registerTool(
    'acia_run',
    {
      title: 'Run the ACIA team on a goal',
      description:
        'Starts a run: the PM plans, Dev agents change code in sandboxed worktrees on branch acia/<runId>, QA runs the tests. Returns the run id once started (progress arrives as log notifications); the run goes on if this client disconnects. With wait: true, returns when the run stops, and cancelling the call stops the run (resumable). A run waiting for a human stops with reason awaiting_human: answer with acia_answer.',
      inputSchema: {
        goal: z.string().min(1).describe('what the team should do'),
        repo,
        model: z.string().optional().describe('anthropic:<id>, openai:<id> or scripted:<file> (relative to the repository)'),
        parallel: z.number().int().min(1).max(32).optional(),
        maxIterations: z.number().int().min(0).max(50).optional(),
        maxCostUsd: z.number().positive().optional(),
        maxMinutes: z.number().positive().optional(),
        testCommand: z.string().optional(),
        includeUncommitted: z.boolean().optional(),
        wait: z.boolean().optional().describe('wait for the run to stop (default: return once it started)'),
      },
      annotations: RUNS,
    },
    (args, extra) =>
      guarded(async () => {
        const { wait, ...opts } = args;
        const started = await service.start(opts, streamer(extra as Extra, wait === true));
        if (wait !== true) return ok({ runId: started.runId, status: 'running', next: `acia_status to follow it, acia_cancel to stop it; its ledger is acia://runs/${started.runId}/ledger` });
        return waitFor(started, extra as Extra);
      }),
  );

  server.registerTool(
    'acia_answer',
    {
      title: 'Answer a run waiting for a human',
      description: 'Answers the open escalation of a run and resumes it: retry, skip, approve, abort, or any other text as guidance for the agents.',
      inputSchema: { runId: z.string(), answer: z.string().min(1), repo, wait: z.boolean().optional() },
      annotations: RUNS,
    },
    (args, extra) =>
      guarded(async () => {
        const resumed = await service.answer(args.runId, args.answer, args.repo, streamer(extra as Extra, args.wait === true));
        if (args.wait !== true) return ok({ runId: resumed.runId, status: 'running' });
        return waitFor(resumed, extra as Extra);
      }),
  );

  server.registerTool(
    'acia_say',
    {
      title: 'Message a running team',
      description:
        'Sends a message to a run: to the PM (which may amend the plan) or, with task, to that task\'s agent. mode queue delivers it at the agent\'s next turn, steer at its next tool boundary, interrupt stops its model call in flight and delivers it now. Recorded in the ledger with its author; a finished run or task is refused.',
      inputSchema: { runId: z.string(), message: z.string().min(1), task: z.string().optional(), mode: z.enum(['queue', 'steer', 'interrupt']).optional(), repo },
      annotations: SAYS,
    },
    (args) => guarded(async () => ok(await service.say(args.runId, args.message, { task: args.task, mode: args.mode }, args.repo))),
  );

  server.registerTool(
    'acia_resume',
    {
      title: 'Continue an interrupted run',
      description: 'Continues a run that was interrupted (a cancelled call, Ctrl-C, its process killed) from its ledger, like `acia resume <runId>`. A run waiting for a human is answered with acia_answer instead.',
      inputSchema: { runId: z.string(), repo, wait: z.boolean().optional() },
      annotations: RUNS,
    },
    (args, extra) =>
      guarded(async () => {
        const resumed = await service.resume(args.runId, args.repo, streamer(extra as Extra, args.wait === true));
        if (args.wait !== true) return ok({ runId: resumed.runId, status: 'running' });
        return waitFor(resumed, extra as Extra);
      }),
  );

  server.registerTool(
    'acia_cancel',
    {
      title: 'Cancel a run',
      description:
        'Cancels a run as `acia cancel` does: it stops at its next safe point and its ledger ends cancelled, for good (it cannot be resumed). Works on runs of this server and on runs another ACIA process on this machine drives; a run waiting for a human is closed at once. Returns once the end is recorded. To stop a run and continue it later, cancel the acia_run call that waits on it, then acia_resume.',
      inputSchema: { runId: z.string(), repo },
      annotations: STOPS,
    },
    (args) => guarded(async () => ok(await service.cancel(args.runId, args.repo))),
  );

  server.registerTool(
    'acia_status',
    {
      title: 'Status of a run',
      description: 'Where a run is: status, tasks, cost, the open escalation (if any) and its last ledger entries. Without runId: the latest unfinished run.',
      inputSchema: { runId: z.string().optional(), repo },
      annotations: READS,
    },
    (args) => guarded(async () => ok(await service.status(args.runId, args.repo))),
  );

  server.registerTool(
    'acia_runs',
    { title: 'List runs', description: 'The runs of a repository, newest last, with status, goal and cost.', inputSchema: { repo }, annotations: READS },
    (args) => guarded(async () => ok({ runs: await service.runs(args.repo) })),
  );

  server.registerTool(
    'acia_show',
    { title: 'Show a run', description: 'A run\'s plan, tasks and every ledger entry, one line each (like `acia show`).', inputSchema: { runId: z.string(), repo }, annotations: READS },
    (args) => guarded(async () => ({ content: [{ type: 'text', text: await service.show(args.runId, args.repo) }] })),
  );

  server.registerTool(
    'acia_verify',
    {
      title: 'Verify a run\'s ledger',
      description: 'Checks the hash chain, blobs and anchor of a run\'s ledger (like `acia verify <runId>`); a tampered ledger is a tool error naming the first bad entry.',
      inputSchema: { runId: z.string(), repo },
      annotations: READS,
    },
    (args) =>
      guarded(async () => {
        const v = await service.verify(args.runId, args.repo);
        if (v.ok) return ok(v);
        const first = v.problems[0];
        return { isError: true, content: [{ type: 'text', text: `acia: run ${v.runId} FAILED verification${first ? ` at seq ${String(first.seq)}: ${first.code} ${first.message}` : ''}` }], structuredContent: { code: 'LEDGER_CORRUPT', exitCode: 1, report: v } };
      }),
  );

  const runList = async () => ({
    resources: (await service.runIds()).flatMap((id) => (['ledger', 'plan', 'wiki'] as const).map((what) => ({ uri: `acia://runs/${id}/${what}`, name: `${id} ${what}`, title: `Run ${id}: ${RESOURCE_TITLES[what]}`, mimeType: RESOURCE_TYPES[what] }))),
  });
  server.registerResource(
    'run',
    new ResourceTemplate('acia://runs/{runId}/{what}', { list: runList }),
    { title: 'A run: ledger (JSONL), plan (JSON) or wiki page (markdown)', description: 'what is one of ledger, plan, wiki' },
    async (uri, vars) => {
      const what = String(vars.what);
      if (what !== 'ledger' && what !== 'plan' && what !== 'wiki') throw new Error(`unknown run resource "${what}": expected ledger, plan or wiki`);
      const r = await service.resource(String(vars.runId), what);
      return { contents: [{ uri: uri.href, mimeType: r.mimeType, text: r.text }] };
    },
  );
  server.registerResource(
    'wiki',
    new ResourceTemplate('acia://wiki/{+page}', { list: undefined }),
    { title: 'A wiki page', description: 'a page of .acia/wiki, e.g. acia://wiki/index.md or acia://wiki/memory/lessons.md' },
    async (uri, vars) => {
      const r = await service.wikiPage(String(vars.page));
      return { contents: [{ uri: uri.href, mimeType: r.mimeType, text: r.text }] };
    },
  );
  return server;
}

const RESOURCE_TITLES = { ledger: 'ledger (JSONL)', plan: 'chosen plan (JSON)', wiki: 'wiki page (markdown)' } as const;
const RESOURCE_TYPES = { ledger: 'application/x-ndjson', plan: 'application/json', wiki: 'text/markdown' } as const;

function resultOf(r: RunResult): Record<string, unknown> {
  return { ...r, wiki: `acia://runs/${r.runId}/wiki`, ledger: `acia://runs/${r.runId}/ledger` };
}

function ok(value: unknown): CallToolResult {
  const structured = typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : { value };
  return { content: [{ type: 'text', text: JSON.stringify(value, null, 2) }], structuredContent: structured };
}

/** An AciaError becomes the CLI's line (`acia: <message>` and the hint) with its code and exit code. */
async function guarded(work: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await work();
  } catch (e) {
    if (isAciaError(e)) {
      const text = `acia: ${e.message}${e.hint ? `\n  ${e.hint}` : ''}`;
      return { isError: true, content: [{ type: 'text', text }], structuredContent: { code: e.code, exitCode: exitCodeFor(e.code), message: e.message, ...(e.hint ? { hint: e.hint } : {}) } };
    }
    return { isError: true, content: [{ type: 'text', text: `acia: internal error: ${errorMessage(e)}` }], structuredContent: { code: 'INTERNAL', exitCode: 1, message: errorMessage(e) } };
  }
}
