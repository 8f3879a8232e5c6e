// `acia replay`: runs the executor again against a run's recorded model responses, tool results,
// git outcomes and human answers — no model, no side effects — session by session as the run was
// started and resumed, and compares the decisions it records with the recorded ledger, actor by actor.
import { readRunBlob, runDirOf } from '../core/contain/acia-state.js';
import type { ContextPacket } from '../core/acm/contracts.js';
import { dataOf, firstOf, lastOf, type LedgerEntry } from '../core/ledger/entry.js';
import type { EventDataOf } from '../core/ledger/events.js';
import type { RunLedger } from '../core/ledger/types.js';
import { memoryFromPacket, packetReader } from '../agents/pm/context-packet.js';
import { recordedLayer } from '../core/config/load.js';
import { modelIdOf } from '../core/config/schema.js';
import { AciaError, errorMessage } from '../core/errors.js';
import { MemoryLedger } from '../core/ledger/memory-ledger.js';
import { RecordedRequests } from '../core/ledger/request-delta.js';
import { McpCatalog } from '../core/tools/mcp/catalog.js';
import { RecordedMcp } from '../core/tools/mcp/recorded.js';
import type { Clock } from '../core/acm/ids.js';
import type { Config } from '../core/config/schema.js';
import type { LlmClient } from '../core/llm/types.js';
import type { McpToolSource } from '../core/tools/mcp/catalog.js';
import { builtinTools } from '../core/tools/tool-sets.js';
import type { Escalator, FleetDeps, StoreDeps, TeamDeps } from './deps.js';
import { noMcp } from './deps-defaults.js';
import { localRepoReader } from './repo-reader.js';
import { runDevTask } from './task-dev.js';
import type { CallTool } from './toolbox.js';
import { closeCancelled, type CancelRequest } from './cancel.js';
import { foldRun } from './run-state.js';
import { lostHandouts, replayDispatcher } from './replay-handouts.js';
import { RecordedHooks, type HookSource } from '../core/hooks/source.js';
import { ReplayLlm, ReplayWorkspace, replayCallTool, replayEscalator } from './replay-sources.js';
import { firstDivergence, type Divergence } from './replay-compare.js';
import { SessionCut, SessionGate } from './replay-session.js';
import { Git } from './git.js';
import { continueRun, rerunRecorded } from './team.js';
import { ReplayMailbox, type Mailbox } from './mailbox.js';
import type { RoleDef, SkillDef } from '../agents/roles/role-file.js';
import type { RoleCatalog } from './roles.js';
import type { ModelDeps } from './deps.js';

export interface ReplayReport {
  runId: string;
  identical: boolean;
  recordedEntries: number;
  replayedEntries: number;
  /** Why the replayed run stopped early, when it did (often the cause of the divergence). */
  error: string | null;
  /** The first place where the replay's decisions differ from the recording. */
  divergence: Divergence | null;
}

/** What a recorded session runs with: every source is the recording (createDeps, src/app, puts them together). */
export interface ReplayParts {
  /** The caller's config with the session's recorded settings (as `acia resume` takes them). */
  config: Config;
  clock: Clock;
  runId: string;
  model: { client: LlmClient; id: string; spec: string };
  call: CallTool;
  mcp: McpToolSource;
  ledger: RunLedger;
  workspace: StoreDeps['workspace'];
  repoReader: StoreDeps['repoReader'];
  readMemory: StoreDeps['readMemory'];
  memoryPages: StoreDeps['memoryPages'];
  escalator: Escalator;
  /** The hooks' recorded decisions (no hook runs). */
  hooks: HookSource;
  /** Dev tasks: in this process, or, where the recording lost fleet hand-outs, as their workers ran them. */
  dispatchTask: FleetDeps['dispatchTask'];
  /** A role's own model (`--model pm=...`), answered from the recording. */
  forSpec?: (spec: string, id: string | null) => Pick<ModelDeps, 'client' | 'id' | 'spec'>;
  /** The roles and skills the run recorded (ROLES_LOADED); absent before roles were recorded. */
  roles?: RoleCatalog;
  /** Absent: no message reaches the session (a harness's run). */
  mailbox?: () => Mailbox;
}

/** What a replay takes from outside: the config it started from, its clock, and how a session's deps are made. */
export interface ReplayOptions {
  config: Config;
  clock: Clock;
  compose: (parts: ReplayParts) => Promise<TeamDeps>;
}

/** One session of the recorded run: its start (RUN_STARTED) or a resume (RUN_RESUMED), then what it recorded. */
interface Session {
  resumed: EventDataOf<'RUN_RESUMED'> | null;
  entries: LedgerEntry[];
}

/**
 * Runs a recorded run again from its ledger with the recorded model responses and tool outcomes, into an
 * in-memory ledger, and reports where the new entries diverge from the recorded ones. A run that was
 * resumed is replayed session by session: each session but the last stops where its recording stops
 * (a crash, an interrupt, a question to a human), and the next resumes from what the replay recorded,
 * with the answer and settings that session was resumed with.
 */
export async function replayRun(
  base: ReplayOptions,
  repo: string,
  runId: string,
  recorded: readonly LedgerEntry[],
  /** Where the run's blobs are: the run directory (default), or a bundle's memory-ledger/. */
  runDir: string = runDirOf(repo, runId),
): Promise<ReplayReport> {
  // Not through a link (core/contain): a bundle or run a clone shipped may hold one in blobs/.
  const getBlob = (ref: string) => {
    const bytes = readRunBlob(runDir, ref);
    return bytes === null ? Promise.reject(new AciaError('LEDGER_CORRUPT', `run ${runId}: blob ${ref} is missing`)) : Promise.resolve(bytes);
  };
  const started = firstOf(recorded, 'RUN_STARTED')?.data;
  if (!started) throw new AciaError('LEDGER_CORRUPT', `run ${runId} has no RUN_STARTED entry`);
  const ledger = new MemoryLedger(runId, base.clock, `replay:${runId}`, getBlob);
  const built = firstOf(recorded, 'CONTEXT_BUILT')?.data;
  const packet = built ? (JSON.parse((await getBlob(built.packetRef)).toString('utf8')) as ContextPacket) : null;
  // MCP tools as the run saw them, from its recorded catalogs: no server starts during a replay.
  const catalogs: McpCatalog[] = [];
  for (const { catalogRef } of dataOf(recorded, 'MCP_TOOLS')) catalogs.push(McpCatalog.parse(JSON.parse((await getBlob(catalogRef)).toString('utf8'))));
  const toolNames = new Set([...builtinTools.map((t) => t.name), ...catalogs.flatMap((c) => c.servers.flatMap((s) => s.tools.map((t) => t.name))), 'load_skill']);
  // The roles as the run recorded them (built-ins too: a later ACIA's prompts are not the run's), and the
  // model id each role's requests carried.
  const rolesLoaded = firstOf(recorded, 'ROLES_LOADED')?.data;
  const readDef = async (ref: string): Promise<unknown> => JSON.parse((await getBlob(ref)).toString('utf8'));
  const roles = rolesLoaded
    ? {
        roles: await Promise.all(rolesLoaded.roles.map(async (r) => ({ def: (await readDef(r.ref)) as RoleDef, source: r.source }))),
        skills: await Promise.all(rolesLoaded.skills.map(async (k) => ({ def: (await readDef(k.ref)) as SkillDef, source: k.source }))),
      }
    : null;
  const roleModelIds = new Map((rolesLoaded?.roles ?? []).flatMap((r) => (r.model ? [[r.model.spec, r.model.id] as const] : [])));
  const requests = new RecordedRequests(dataOf(recorded, 'LLM_CALL'), (ref) => readRunBlob(runDir, ref));
  const shared: Shared = { base, repo, runId, recorded, getBlob, requests, packet, catalogs, toolNames, started, hooks: new RecordedHooks(recorded), roles, roleModelIds };

  let failure: string | null = null;
  let divergence: Divergence | null = null;
  const from: SessionFrom = { model: started.model, sentModel: undefined };
  // A run `acia cancel` closed while nobody ran it: its sessions, then the close, through the same code.
  const closed = closedByCancel(recorded);
  const sessions = sessionsOf(closed === null ? recorded : recorded.slice(0, closed.at));
  for (const [k, session] of sessions.entries()) {
    const last = k === sessions.length - 1;
    // A last session that died before `acia cancel` closed the run is cut where it died, as any other.
    const died = last && closed !== null && lastOf(session.entries, 'RUN_COMPLETED') === undefined;
    ({ failure, divergence } = await replaySession(shared, ledger, session, last && !died, from));
    if (failure !== null || divergence !== null) break;
  }
  if (closed !== null && failure === null && divergence === null) await closeCancelled(ledger, foldRun(ledger.entries()), base.clock, closed.request);
  const report = { ...compare(recorded, ledger.entries(), runId), error: failure };
  if (divergence !== null) return { ...report, identical: false, divergence };
  if (failure !== null && report.divergence === null) {
    return { ...report, identical: false, divergence: { actor: 'team', index: 0, recorded: null, replayed: null, reason: failure } };
  }
  return report;
}

/** The model a session asked for, as the session before it left it. */
interface SessionFrom {
  model: string;
  sentModel: string | undefined;
}

/**
 * Replays one session into `ledger`. The last runs to its end; any other runs until it has made every
 * decision it recorded (then it is cut off, as the process that recorded it died there), stops by
 * itself, or diverges.
 */
async function replaySession(shared: Shared, ledger: RunLedger, session: Session, last: boolean, from: SessionFrom): Promise<{ failure: string | null; divergence: Divergence | null }> {
  const { repo, runId, started, requests } = shared;
  const earlier = [...ledger.entries()];
  // A session cancelled while it ran (`acia cancel`) stopped where the request reached it, which replay cannot
  // see coming, as with an interrupt: it is cut where its decisions end and given its recorded end.
  const cancelled = session.entries.some((e) => e.type === 'CANCEL_REQUESTED' && e.data.wasRunning);
  const cut = last && !cancelled ? null : new SessionCut(session.entries, earlier);
  const gate = cut?.gate ?? new SessionGate(true);
  from.model = session.resumed?.model ?? from.model;
  // The model id the session sent, as recorded in its first request (a script names its own model).
  const firstCall = firstOf(session.entries, 'LLM_CALL')?.data;
  if (firstCall) {
    const sent = requests.get(firstCall.requestHash);
    if (!sent.ok) throw new AciaError('LEDGER_CORRUPT', `run ${runId}: ${sent.message}`);
    if (typeof sent.request.model === 'string') from.sentModel = sent.request.model;
  }
  const sessionLedger = cut ? cut.ledger(ledger) : ledger;
  // A fleet session's lost hand-outs are replayed as their workers ran them; the rest of the session is
  // served what is left.
  const lost = lostHandouts(session.entries);
  const handedOut = new Set([...lost.values()].flatMap((hs) => hs.flatMap((h) => h.entries)));
  const settings = session.resumed?.settings ?? started.settings;
  const inputs: SessionInputs = { session: session.entries.filter((e) => !handedOut.has(e)), earlier, gate, settings, model: from.model, sentModel: from.sentModel, ledger: sessionLedger, resumedWithAnswer: session.resumed?.answer !== undefined };
  const handoutDivergences: Divergence[] = [];
  const dispatch =
    lost.size === 0
      ? undefined
      : replayDispatcher({
          lost,
          gate,
          depsFor: (h, before, hgate, hledger) => sessionDeps(shared, { ...inputs, session: h.entries, earlier: before, gate: hgate, ledger: hledger, resumedWithAnswer: false }),
          diverged: (d) => handoutDivergences.push(d),
        });
  const deps = await sessionDeps(shared, inputs, dispatch);
  const answer = session.resumed?.answer;
  const run =
    session.resumed === null
      ? rerunRecorded(deps, repo, runId, sessionLedger, started)
      : continueRun(deps, { repo, runId, runDir: ledger.dir, ledger: sessionLedger, ...(answer === undefined ? {} : { answer }) });
  let failure: string | null = null;
  let divergence: Divergence | null = null;
  if (cut === null) {
    await run.catch((e: unknown) => (failure = errorMessage(e)));
  } else {
    const ended = await Promise.race([cut.done, run.then(() => 'stopped' as const, (e: unknown) => ({ error: errorMessage(e) }))]);
    cut.gate.cut();
    if (ended !== null && typeof ended === 'object' && 'error' in ended) failure = ended.error;
    divergence = ended !== null && typeof ended === 'object' && 'actor' in ended ? ended : ended === null ? null : cut.missing();
  }
  return { failure, divergence: handoutDivergences[0] ?? divergence };
}

/** The recording split where it was resumed (a crash's recovered tail belongs to neither side's decisions). */
/** Where `acia cancel` closed the run while nobody ran it (CANCEL_REQUESTED not running, then only its end), and with what request. */
function closedByCancel(recorded: readonly LedgerEntry[]): { at: number; request: CancelRequest } | null {
  const at = recorded.findLastIndex((e) => e.type === 'CANCEL_REQUESTED');
  const entry = recorded[at];
  if (entry?.type !== 'CANCEL_REQUESTED' || entry.data.wasRunning) return null;
  if (!recorded.slice(at + 1).every((e) => e.type === 'RUN_COMPLETED' || e.type === 'EVAL_GRADED')) return null;
  const { wasRunning: _running, ...request } = entry.data;
  return { at, request };
}

function sessionsOf(recorded: readonly LedgerEntry[]): Session[] {
  const sessions: Session[] = [{ resumed: null, entries: [] }];
  for (const e of recorded) {
    if (e.type === 'RUN_RESUMED') sessions.push({ resumed: e.data, entries: [] });
    else if (e.type !== 'LEDGER_RECOVERED') sessions.at(-1)!.entries.push(e);
  }
  return sessions;
}

interface Shared {
  base: ReplayOptions;
  repo: string;
  runId: string;
  recorded: readonly LedgerEntry[];
  getBlob: (ref: string) => Promise<Buffer>;
  /** The recorded requests, whole (a request may be stored as a delta of the one before it). */
  requests: RecordedRequests;
  packet: ContextPacket | null;
  catalogs: McpCatalog[];
  toolNames: ReadonlySet<string>;
  started: EventDataOf<'RUN_STARTED'>;
  hooks: HookSource;
  roles: RoleCatalog | null;
  roleModelIds: ReadonlyMap<string, string>;
}

interface SessionInputs {
  session: readonly LedgerEntry[];
  earlier: readonly LedgerEntry[];
  gate: SessionGate;
  settings: EventDataOf<'RUN_STARTED'>['settings'];
  model: string;
  sentModel: string | undefined;
  ledger: RunLedger;
  /** The session was resumed with an answer: its first HUMAN_RESPONSE is that answer, not one it asked for. */
  resumedWithAnswer?: boolean;
}

/** The deps one session runs with: the run's static parts, this session's settings, its recording as every source. */
function sessionDeps(s: Shared, i: SessionInputs, dispatchTask: FleetDeps['dispatchTask'] = runDevTask): Promise<TeamDeps> {
  const { base, packet, getBlob } = s;
  // Memory pages as the session found them: before each update it recorded, the page it replaced;
  // otherwise the page as the context packet captured it. Nothing is written.
  const memoryUpdates = dataOf(i.session, 'MEMORY_UPDATED');
  const memoryPages: StoreDeps['memoryPages'] = {
    read: async (_repo, page) => {
      const at = memoryUpdates.findIndex((u) => u.page === page);
      if (at !== -1) {
        const [update] = memoryUpdates.splice(at, 1);
        return update!.beforeRef ? getBlob(update!.beforeRef) : null;
      }
      const seen = packet ? memoryFromPacket(packet).find((m) => m.page === page) : undefined;
      return seen ? Buffer.from(seen.content, 'utf8') : null;
    },
    write: () => Promise.resolve(),
  };
  // The packet as recorded: the replay needs no repository when the packet can rebuild itself.
  const recordedReader = packet ? packetReader(packet) : null;
  const client = new ReplayLlm(i.session, getBlob, i.gate);
  return base.compose({
    config: {
      ...base.config,
      ...(typeof packet?.facts.testCommand === 'string' ? { testCommand: packet.facts.testCommand } : {}),
      // The session's recorded settings, as `acia resume` takes them (core/config/load.ts).
      ...recordedLayer({ runId: s.runId, model: i.model, ...i.settings }),
    },
    clock: base.clock,
    runId: s.runId,
    model: { id: i.sentModel ?? modelIdOf(i.model), spec: i.model, client },
    // A role's own model: the same recording answers it, as the id its requests carried.
    forSpec: (spec, id) => ({ client, spec, id: id ?? s.roleModelIds.get(spec) ?? modelIdOf(spec) }),
    ...(s.roles ? { roles: s.roles } : {}),
    // Messages as the session took them in and handed them over (received in any session, delivered in this one).
    mailbox: () => new ReplayMailbox(i.session, s.recorded),
    call: replayCallTool(i.session, s.toolNames, getBlob, i.gate),
    // No live MCP server during a replay: the recorded catalogs.
    mcp: s.catalogs.length > 0 ? new RecordedMcp(s.catalogs) : noMcp,
    ledger: i.ledger,
    memoryPages,
    workspace: () => new ReplayWorkspace(s.recorded, i.session, () => i.ledger.entries(), s.repo, s.runId, i.gate),
    repoReader: recordedReader ? () => recordedReader : localRepoReader(new Git(base.clock)),
    // The memory the run saw, not what the wiki holds now.
    readMemory: () => Promise.resolve(packet ? memoryFromPacket(packet) : []),
    escalator: replayEscalator(i.session, i.gate, i.resumedWithAnswer === true),
    // The hooks' recorded decisions, by occurrence across the sessions: no hook runs during a replay.
    hooks: s.hooks,
    dispatchTask,
  });
}

export function compare(recorded: readonly LedgerEntry[], replayed: readonly LedgerEntry[], runId: string): Omit<ReplayReport, 'error'> {
  let first = firstDivergence(recorded, replayed);
  const [a0, b0] = [lastOf(recorded, 'RUN_COMPLETED')?.data, lastOf(replayed, 'RUN_COMPLETED')?.data];
  if (first === null && a0?.reason !== b0?.reason) {
    first = { actor: 'team', index: 0, recorded: null, replayed: null, reason: `the run ended ${String(a0?.reason)} but the replay ended ${String(b0?.reason)}: ${b0?.message ?? ''}` };
  }
  return { runId, identical: first === null, recordedEntries: recorded.length, replayedEntries: replayed.length, divergence: first };
}
