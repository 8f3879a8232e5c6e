// `acia acp`: ACIA as an Agent Client Protocol agent. An editor (Zed, JetBrains, Neovim) or any ACP
// client opens a session on a repository; a prompt is a goal the team plans and carries out; the run
// streams back as plan, tool-call and message updates; an escalation becomes a permission request
// (retry / skip / approve / abort; the plan approval gate with its plans: directing.ts) or, for guidance,
// the next prompt turn; a prompt while the run goes on is a message to the team; session/cancel stops it
// as Ctrl-C does, and session/load replays a run's history. The client's MCP servers reach the team's
// agents (client-mcp.ts); a missing model key is ACP's auth_required, answered by `authenticate` (auth.ts).
import { isAbsolute, join } from 'node:path';
import { randomUUID } from 'node:crypto';
import {
  agent,
  PROTOCOL_VERSION,
  RequestError,
  type AgentApp,
  type AgentContext,
  type ContentBlock,
  type PermissionOption,
  type PromptResponse,
  type SessionUpdate,
  type StopReason,
} from '@agentclientprotocol/sdk';
import { AciaError, errorMessage, isAciaError } from '../../core/errors.js';
import { foldRun } from '../../core/run/reducer.js';
import { describeIgnored, loadConfig } from '../../core/config/load.js';
import { systemClock } from '../../core/acm/ids.js';
import type { LedgerEntry } from '../../core/ledger/entry.js';
import type { HumanAction } from '../../core/ledger/run-vocabulary.js';
import { readManifest } from '../../core/ledger/manifest.js';
import { readLedgerEntries } from '../../core/ledger/line-reader.js';
import { checkRunAnchored, preflightModel } from '../../app/build-deps.js';
import { createDeps } from '../../app/create-deps.js';
import { resumableSettings } from '../../app/prepare-run.js';
import { existingRunDir, readRunBlob, runDirOf as runDirIn } from '../../core/contain/acia-state.js';
import { guardAciaState } from '../../core/contain/clone-guard.js';
import { isRunId } from '../../core/contain/run-id.js';
import { Git, repoRoot, requireCommit } from '../../team/git.js';
import { resumeRun, startRun, type RunResult } from '../../team/team.js';
import type { EscalationQuestion, Escalator, HumanAnswer } from '../../team/deps.js';
import { AcpUpdateMapper, message } from './updates.js';
import { stripControls } from './text.js';
import { authenticate, authMethods, authRequired, keyMissing } from './auth.js';
import { CLIENT_SOURCE, clientMcpServers } from './client-mcp.js';
import { askPermission, askPlanApproval, sendPromptAsMessage } from './directing.js';
import type { UserMcpServer } from '../../core/tools/mcp/config.js';

export interface AcpAgentOptions {
  env: NodeJS.ProcessEnv;
  version: string;
  /** Settings given on `acia acp`'s command line; they win over the config files, as run flags do. */
  flags: { model?: string; sandbox?: string };
  /** Diagnostics for the person who started the agent (stderr: stdout carries the protocol). */
  log: (line: string) => void;
}

interface Session {
  id: string;
  repo: string;
  /** The run this session drives: the last one started, or the one loaded. */
  runId: string | null;
  /** The run the prompt turn in progress drives, once known: a prompt meanwhile is a message to it. */
  live: string | null;
  controller: AbortController | null;
  cancelled: boolean;
  /** The MCP servers the client gave the session, for the team's agents. */
  mcpServers: Record<string, UserMcpServer>;
}

const ACTION_LABELS: Record<Exclude<HumanAction, 'guidance'>, string> = {
  retry: 'Retry: another fix iteration',
  skip: 'Skip this task',
  approve: 'Approve and go on',
  abort: 'Abort the run',
  switch: 'Run the other plan',
  edit: 'Edit the plan (send it as "edit {plan JSON}" in your next message)',
};

/** The ACP agent app; connect it to a stream (`ndJsonStream(stdout, stdin)`) or, in tests, to a client app. */
export function createAcpAgent(options: AcpAgentOptions): AgentApp {
  // This agent's own environment: `authenticate` may add the key to it, never to the process's.
  const o: AcpAgentOptions = { ...options, env: { ...options.env } };
  const flags = Object.fromEntries(Object.entries(o.flags).filter(([, v]) => v !== undefined));
  const sessions = new Map<string, Session>();
  const sessionOf = (id: string): Session => {
    const s = sessions.get(id);
    if (!s) throw RequestError.sessionNotFound(id);
    return s;
  };
  const openRepo = async (cwd: string): Promise<string> => {
    // ACP: "All file paths in the protocol MUST be absolute"; a relative one would name the agent's own cwd.
    if (!isAbsolute(cwd)) throw RequestError.invalidParams(undefined, `cwd must be an absolute path (got ${JSON.stringify(cwd)})`);
    const git = new Git(systemClock);
    try {
      const repo = await repoRoot(git, cwd);
      await requireCommit(git, repo);
      return repo;
    } catch (e) {
      throw RequestError.invalidParams(undefined, errorMessage(e));
    }
  };

  const serversOf = (given: Parameters<typeof clientMcpServers>[0]): Record<string, UserMcpServer> => {
    const { servers, rejected } = clientMcpServers(given);
    for (const line of rejected) o.log(`warning: ${line}`);
    return servers;
  };
  /** ACP's auth_required before a session opens, when the model its repository would use lacks its key. */
  const requireKey = (repo: string): void => {
    let model: string;
    try {
      model = loadConfig({ repo, env: o.env, flags }).config.model;
    } catch {
      return; // a config error is reported, with its file, by the first prompt
    }
    if (keyMissing(model, o.env)) throw authRequired(`${model} needs ANTHROPIC_API_KEY, which is not set`);
  };

  return agent()
    .onRequest('initialize', () => ({
      protocolVersion: PROTOCOL_VERSION,
      agentInfo: { name: 'acia', title: 'ACIA team (PM, Dev, QA)', version: o.version },
      agentCapabilities: { loadSession: true, promptCapabilities: { embeddedContext: true }, mcpCapabilities: { http: true, sse: true } },
      authMethods: authMethods(o.env, flags),
    }))
    .onRequest('authenticate', ({ params }) => authenticate(params, o.env))
    .onRequest('session/new', async ({ params }) => {
      const repo = await openRepo(params.cwd);
      requireKey(repo);
      const id = `acia-${randomUUID()}`;
      sessions.set(id, { id, repo, runId: null, live: null, controller: null, cancelled: false, mcpServers: serversOf(params.mcpServers) });
      return { sessionId: id };
    })
    .onRequest('session/load', async ({ params, client }) => {
      const repo = await openRepo(params.cwd);
      // A session id names a run directory: checked like every run id, and only a run ACIA recorded for this
      // user (anchored in their state directory) is loaded; a run the clone shipped, or `../x`, is not found.
      if (!isRunId(params.sessionId)) throw RequestError.sessionNotFound(params.sessionId);
      const runDir = await (async () => {
        try {
          await guardAciaState(repo);
          const dir = existingRunDir(repo, params.sessionId);
          if (dir !== null) await checkRunAnchored(o.env, dir, params.sessionId);
          return dir;
        } catch (e) {
          o.log(`session/load ${params.sessionId}: ${errorMessage(e)}`);
          return null;
        }
      })();
      const entries = runDir === null ? null : await readEntries(runDir).catch(() => null);
      if (runDir === null || entries === null || entries.length === 0) throw RequestError.sessionNotFound(params.sessionId);
      // A loaded session is the run: its id is the run id, and the next prompt resumes it.
      sessions.set(params.sessionId, { id: params.sessionId, repo, runId: params.sessionId, live: null, controller: null, cancelled: false, mcpServers: serversOf(params.mcpServers) });
      const mapper = new AcpUpdateMapper(blobReader(runDir), repo, true);
      for (const entry of entries) for (const update of mapper.map(entry)) await notify(client, params.sessionId, update);
    })
    .onNotification('session/cancel', ({ params }) => {
      const s = sessions.get(params.sessionId);
      if (!s?.controller) return;
      s.cancelled = true;
      s.controller.abort();
    })
    .onRequest('session/prompt', async ({ params, client }): Promise<PromptResponse> => {
      const s = sessionOf(params.sessionId);
      const text = promptText(params.prompt);
      if (text === '') throw RequestError.invalidParams(undefined, 'the prompt has no text: say what the team should do');
      // While the session's run is going, a prompt is a message to its team (docs/acp.md), not a new turn.
      if (s.controller) return promptAsMessage(s, text, client);
      s.controller = new AbortController();
      s.cancelled = false;
      try {
        const result = await drive(o, s, text, client);
        await notify(client, s.id, message(summaryOf(result, s.cancelled)));
        return { stopReason: stopReasonOf(result, s.cancelled) };
      } catch (e) {
        if (isAciaError(e) && e.code === 'LLM_AUTH') throw authRequired(e.message);
        if (isAciaError(e)) {
          // Not the model refusing: a setting or the repository is wrong. The turn fails with the reason.
          await notify(client, s.id, message(`acia: ${e.message}${e.hint ? `\n${e.hint}` : ''}\n`));
          throw RequestError.internalError({ code: e.code, ...(e.hint ? { hint: e.hint } : {}) }, e.message);
        }
        throw e;
      } finally {
        s.controller = null;
        s.live = null;
      }
    });
}

/** A prompt while the run is going: `acia say` to the run, answered at once (the run's turn goes on). */
async function promptAsMessage(s: Session, text: string, client: AgentContext): Promise<PromptResponse> {
  if (s.live === null) throw RequestError.invalidRequest(undefined, 'the run is still starting; send the message again once its plan shows');
  try {
    await sendPromptAsMessage(client, s.id, s.repo, s.live, text);
  } catch (e) {
    if (isAciaError(e)) throw RequestError.invalidParams({ code: e.code }, e.message);
    throw e;
  }
  return { stopReason: 'end_turn' };
}

/**
 * Starts the session's run, or resumes it when it waits for a human (the prompt is then the answer)
 * or was stopped by a cancel ("continue" or "resume" goes on where it stopped). After a finished run
 * (this session's, or a loaded one) a prompt is a follow-up: a new run that starts from where a
 * succeeded run left its branch, so the conversation builds on what the team did.
 */
async function drive(o: AcpAgentOptions, s: Session, text: string, client: AgentContext): Promise<RunResult> {
  const waiting = s.runId === null ? null : await resumableState(s.repo, s.runId);
  const resuming = waiting !== null && s.runId !== null && (waiting === 'awaiting_human' || /^(continue|resume)$/i.test(text.trim()));
  const previous = s.runId !== null && waiting === null ? await finishedRun(runDirIn(s.repo, s.runId)) : null;
  if (previous !== null && /^(continue|resume)$/i.test(text.trim())) {
    throw new AciaError('USAGE', `run ${s.runId} is finished (${previous.reason}); there is nothing to continue`, { hint: 'say what the team should do next: a new run builds on it' });
  }
  // A resumed run goes on with the settings it recorded, as `acia resume` does; the flags given now win.
  const recorded = resuming && s.runId !== null ? await resumableSettings(o.env, s.repo, s.runId) : null;
  const loaded = loadConfig({ repo: s.repo, env: o.env, flags: Object.fromEntries(Object.entries(o.flags).filter(([, v]) => v !== undefined)), recorded });
  const clientServers = Object.keys(s.mcpServers).length > 0 ? { clientMcpServers: { servers: s.mcpServers, source: CLIENT_SOURCE } } : {};
  const config = loaded.config;
  if (loaded.ignored) {
    // The repository's untrusted settings are never applied silently: the editor's user is told, as on a terminal.
    const warning = `warning: ${describeIgnored(loaded.ignored)}`;
    o.log(warning);
    await notify(client, s.id, message(`${warning}\n`));
  }
  preflightModel(config, o.env, false, s.repo);
  const runDirOf = (runId: string) => runDirIn(s.repo, runId);
  if (resuming) s.live = s.runId;
  let mapper: AcpUpdateMapper | null = null;
  let queue = Promise.resolve();
  const deps = await createDeps({
    kind: 'local',
    repo: s.repo,
    config,
    env: o.env,
    escalator: permissionEscalator(client, s.id),
    ...clientServers,
    signal: s.controller!.signal,
    warn: (m) => o.log(`warning: ${m}`),
    onEvent: (ev) => {
      if (ev.kind !== 'entry') return;
      const entry: LedgerEntry = ev.entry;
      mapper ??= new AcpUpdateMapper(blobReader(runDirOf(entry.runId)), s.repo);
      if (entry.type === 'RUN_STARTED') s.runId = s.live = entry.runId;
      // Updates go out in ledger order; a slow client slows nothing but its own view.
      const updates = mapper.map(entry);
      queue = queue.then(async () => {
        for (const u of updates) await notify(client, s.id, u);
      });
    },
  });
  let result: RunResult;
  if (waiting !== null && s.runId !== null) {
    const answer = waiting === 'awaiting_human' ? text : undefined;
    if (!resuming) {
      result = await startRun(deps, { dir: s.repo, goal: text });
    } else {
      // Replay the run so far so the client's plan view is complete before new updates arrive.
      const entries = await readEntries(runDirOf(s.runId));
      mapper = new AcpUpdateMapper(blobReader(runDirOf(s.runId)), s.repo);
      for (const e of entries) mapper.map(e);
      result = await resumeRun(deps, { dir: s.repo, runId: s.runId, ...(answer === undefined ? {} : { answer }) });
    }
  } else if (previous?.head) {
    await notify(client, s.id, message(`Building on run ${s.runId} (${previous.head.slice(0, 10)}, its branch's head).\n`));
    result = await startRun(deps, { dir: s.repo, goal: text, baseCommit: previous.head });
  } else {
    result = await startRun(deps, { dir: s.repo, goal: text });
  }
  await queue;
  s.runId = result.runId;
  return result;
}

/** How a finished run ended, and the commit a follow-up starts from (a succeeded run's head; else none: HEAD). */
async function finishedRun(runDir: string): Promise<{ reason: string; head: string | null } | null> {
  const end = foldRun(await readEntries(runDir)).completed;
  if (end === null) return null;
  return { reason: end.reason, head: end.reason === 'succeeded' ? end.headCommit : null };
}

/** `awaiting_human`, or `interrupted` for a run stopped mid-way, or null when the run is over. */
async function resumableState(repo: string, runId: string): Promise<'awaiting_human' | 'interrupted' | null> {
  const dir = existingRunDir(repo, runId);
  const manifest = dir === null ? null : await readManifest(dir);
  if (manifest === null) return null;
  if (manifest.status === 'awaiting_human') return 'awaiting_human';
  if (manifest.status === 'aborted' || manifest.status === 'running' || manifest.status === 'budget_exhausted') return 'interrupted';
  return null;
}

/** Escalations as permission requests; "guidance" is answered by the next prompt turn instead. */
function permissionEscalator(client: AgentContext, sessionId: string): Escalator {
  return {
    async ask(q: EscalationQuestion): Promise<HumanAnswer | null> {
      if (q.reason === 'plan_approval') return askPlanApproval(client, sessionId, q);
      const options: PermissionOption[] = q.options
        .filter((a): a is Exclude<HumanAction, 'guidance'> => a !== 'guidance')
        .map((a) => ({ optionId: a, name: ACTION_LABELS[a], kind: a === 'abort' || a === 'skip' ? 'reject_once' : 'allow_once' }));
      if (q.options.includes('guidance')) options.push({ optionId: 'guidance', name: 'Give guidance (in your next message)', kind: 'reject_once' });
      const failure = q.lastFailure ? `\n\nLast failure:\n${q.lastFailure.split('\n').slice(-25).join('\n')}` : '';
      await notify(client, sessionId, message(`The team needs you (${q.reason}${q.taskId ? `, task ${q.taskId}` : ''}): ${q.message}${failure}\n`));
      // The question is a tool call the client has seen announced before it is asked about it.
      const title = stripControls(`The team needs you: ${q.message}`);
      const chosen = await askPermission(client, sessionId, { toolCallId: `escalation-${randomUUID()}`, title, kind: 'other', status: 'pending' }, options);
      // Cancelled, or guidance to come in the next prompt: the run waits on disk, resumable.
      if (chosen === 'retry' || chosen === 'skip' || chosen === 'approve' || chosen === 'abort') return { action: chosen };
      return null;
    },
  };
}

function promptText(blocks: ContentBlock[]): string {
  const parts: string[] = [];
  for (const b of blocks) {
    if (b.type === 'text') parts.push(b.text);
    else if (b.type === 'resource' && 'text' in b.resource) parts.push(`${b.resource.uri}:\n${b.resource.text}`);
    else if (b.type === 'resource_link') parts.push(b.uri);
  }
  return parts.join('\n').trim();
}

function stopReasonOf(r: RunResult, cancelled: boolean): StopReason {
  if (cancelled) return 'cancelled';
  if (r.reason === 'budget_exhausted') return 'max_tokens';
  return 'end_turn';
}

function summaryOf(r: RunResult, cancelled: boolean): string {
  const cost = r.costUsd === null ? 'unpriced' : `$${r.costUsd.toFixed(4)}`;
  const lines = [`\nrun ${r.runId}: ${r.reason.replace('_', ' ')} — ${r.message}`, `branch ${r.runBranch}, ${r.filesChanged.length} file(s) changed, ${cost}, ${r.tokens} tokens`];
  if (r.reason === 'awaiting_human') lines.push(`Answer in your next message (${answerWords(r.answers ?? [])}).`);
  else if (cancelled) lines.push('Say "continue" to resume it.');
  else if (r.reason === 'budget_exhausted') lines.push('Raise the budget in your config, then say "continue" to resume it.');
  else if (r.reason === 'succeeded') lines.push('Say what to do next: a new run starts from this one\'s branch.');
  return `${lines.join('\n')}\n`;
}

/** The answers a waiting run takes, as the next prompt gives them. */
function answerWords(options: readonly HumanAction[]): string {
  const words = options.filter((o) => o !== 'guidance').map((o) => (o === 'switch' ? 'switch [plan id]' : o === 'edit' ? 'edit {plan JSON}' : o));
  const guidance = options.includes('guidance') ? [options.includes('switch') ? 'feedback to plan again' : 'guidance'] : [];
  return [...guidance, ...words].join(' / ') || 'guidance, or retry / skip / approve / abort';
}

function blobReader(runDir: string): (ref: string) => string | null {
  return (ref) => readRunBlob(runDir, ref)?.toString('utf8') ?? null;
}

async function notify(client: AgentContext, sessionId: string, update: SessionUpdate): Promise<void> {
  await client.notify('session/update', { sessionId, update });
}


async function readEntries(runDir: string): Promise<LedgerEntry[]> {
  const out: LedgerEntry[] = [];
  for await (const e of readLedgerEntries(join(runDir, 'ledger.jsonl'))) out.push(e);
  return out;
}
