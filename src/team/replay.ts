// `acia replay`: runs the executor again against a run's recorded model responses, tool results,
// git outcomes and human answers — no model, no side effects — and compares the decisions it
// records with the recorded ledger, actor by actor.
import { readRunBlob, runDirOf } from '../core/contain/acia-state.js';
import { canonicalJson } from '../core/acm/canonical-json.js';
import type { ContextPacket } from '../core/acm/contracts.js';
import { dataOf, firstOf, lastOf, taskIdOf, type LedgerEntry } from '../core/ledger/entry.js';
import { memoryFromPacket, packetReader } from '../agents/pm/context-packet.js';
import { asRunId } from '../core/acm/ids.js';
import { modelIdOf } from '../core/config/schema.js';
import { AciaError, errorMessage } from '../core/errors.js';
import { MemoryLedger } from '../core/ledger/memory-ledger.js';
import { McpCatalog } from '../core/tools/mcp/catalog.js';
import { RecordedMcp } from '../core/tools/mcp/recorded.js';
import { RecordedHooks } from '../core/hooks/source.js';
import type { GovernanceDeps, ModelDeps, RuntimeDeps, StoreDeps, TeamDeps, ToolDeps } from './deps.js';
import { ReplayLlm, ReplayWorkspace, replayCallTool, replayEscalator } from './replay-sources.js';
import { rerunRecorded } from './team.js';
import { ReplayMailbox } from './mailbox.js';
import type { RoleDef, SkillDef } from '../agents/roles/role-file.js';

export interface EntrySummary {
  seq: number;
  actor: string;
  type: string;
  data: unknown;
}

export interface ReplayReport {
  runId: string;
  identical: boolean;
  recordedEntries: number;
  replayedEntries: number;
  /** Why the replayed run stopped early, when it did (often the cause of the divergence). */
  error: string | null;
  /** The first place where the replay's decisions differ from the recording. */
  divergence: { actor: string; index: number; recorded: EntrySummary | null; replayed: EntrySummary | null; reason: string } | null;
}

/** Entries that record the session rather than a decision: resumes, crash recovery, the stop itself. */
// EVAL_GRADED is the eval harness's grade, appended after the run: no decision of the team to replay.
// MESSAGE_RECEIVED is a human's input, taken in whenever it came: a replay delivers it where it was delivered.
const SESSION_TYPES = new Set(['RUN_RESUMED', 'LEDGER_RECOVERED', 'RUN_COMPLETED', 'EVAL_GRADED', 'MESSAGE_RECEIVED', 'CANCEL_REQUESTED']);

/** What a replay takes from outside: the static parts of a run's deps; the rest is served from the recording. */
export interface ReplayBase {
  config: TeamDeps['config'];
  model: Pick<ModelDeps, 'costUsd' | 'estimate'>;
  tools: Omit<ToolDeps, 'call' | 'mcp'>;
  governance: Omit<GovernanceDeps, 'escalator'>;
  runtime: Pick<RuntimeDeps, 'clock' | 'aciaVersion'>;
}

/**
 * Runs a recorded run again from its ledger with the recorded model responses and tool outcomes, into an
 * in-memory ledger, and reports where the new entries diverge from the recorded ones.
 */
export async function replayRun(
  base: ReplayBase,
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
  const ledger = new MemoryLedger(runId, base.runtime.clock, `replay:${runId}`, getBlob);
  const built = firstOf(recorded, 'CONTEXT_BUILT')?.data;
  const packet = built ? (JSON.parse((await getBlob(built.packetRef)).toString('utf8')) as ContextPacket) : null;
  // The model id the run sent, as recorded in its first request (a script names its own model).
  const firstCall = firstOf(recorded, 'LLM_CALL')?.data;
  const sentModel = firstCall ? (JSON.parse((await getBlob(firstCall.requestHash)).toString('utf8')) as { model?: string }).model : undefined;
  // Memory pages as the run found them: before each recorded update, the page it replaced; otherwise
  // the page as the context packet captured it. Nothing is written.
  const memoryUpdates = dataOf(recorded, 'MEMORY_UPDATED');
  const memoryPages: StoreDeps['memoryPages'] = {
    read: async (_repo, page) => {
      const i = memoryUpdates.findIndex((u) => u.page === page);
      if (i !== -1) {
        const [update] = memoryUpdates.splice(i, 1);
        return update!.beforeRef ? getBlob(update!.beforeRef) : null;
      }
      const seen = packet ? memoryFromPacket(packet).find((m) => m.page === page) : undefined;
      return seen ? Buffer.from(seen.content, 'utf8') : null;
    },
    write: () => Promise.resolve(),
  };
  // MCP tools as the run saw them, from its recorded catalogs: no server starts during a replay.
  const catalogs: McpCatalog[] = [];
  for (const { catalogRef } of dataOf(recorded, 'MCP_TOOLS')) catalogs.push(McpCatalog.parse(JSON.parse((await getBlob(catalogRef)).toString('utf8'))));
  const mcpNames = catalogs.flatMap((c) => c.servers.flatMap((s) => s.tools.map((t) => t.name)));
  // The roles as the run recorded them (built-ins too: a later ACIA's prompts are not the run's), and the
  // model id each role's requests carried.
  const rolesLoaded = firstOf(recorded, 'ROLES_LOADED')?.data;
  const readDef = async (ref: string): Promise<unknown> => JSON.parse((await getBlob(ref)).toString('utf8'));
  const roles = rolesLoaded
    ? {
        roles: await Promise.all(rolesLoaded.roles.map(async (r) => ({ def: (await readDef(r.ref)) as RoleDef, source: r.source }))),
        skills: await Promise.all(rolesLoaded.skills.map(async (s) => ({ def: (await readDef(s.ref)) as SkillDef, source: s.source }))),
      }
    : undefined;
  const roleModelIds = new Map((rolesLoaded?.roles ?? []).flatMap((r) => (r.model ? [[r.model.spec, r.model.id] as const] : [])));
  const deps: TeamDeps = {
    config: {
      ...base.config,
      ...(typeof packet?.facts.testCommand === 'string' ? { testCommand: packet.facts.testCommand } : {}),
      parallel: started.settings.parallel,
      maxIterations: started.settings.maxIterations,
      budget: started.settings.budget,
      ...(started.settings.memoryLessons === undefined ? {} : { memoryLessons: started.settings.memoryLessons }),
      roleModels: started.settings.roleModels ?? {},
      approvePlan: started.settings.approvePlan ?? false,
    },
    ...(roles ? { roles } : {}),
    model: {
      ...base.model,
      id: sentModel ?? modelIdOf(started.model),
      spec: started.model,
      client: new ReplayLlm(recorded, getBlob),
      forSpec: (spec, id) => Promise.resolve({ ...base.model, client: new ReplayLlm(recorded, getBlob), spec, id: id ?? roleModelIds.get(spec) ?? modelIdOf(spec) }),
    },
    tools: {
      runnerFor: base.tools.runnerFor,
      fs: base.tools.fs,
      builtin: base.tools.builtin,
      toSpec: base.tools.toSpec,
      call: replayCallTool(recorded, new Set([...base.tools.builtin.map((t) => t.name), ...mcpNames, 'load_skill']), getBlob),
      // No live MCP server during a replay: the recorded catalogs.
      ...(catalogs.length > 0 ? { mcp: new RecordedMcp(catalogs) } : {}),
    },
    store: {
      openLedger: () => Promise.resolve(ledger),
      writeManifest: () => Promise.resolve(),
      renderWiki: () => Promise.resolve(),
      memoryPages,
      workspace: () => new ReplayWorkspace(recorded, repo, runId),
      // The packet as recorded: the replay needs no repository when the packet can rebuild itself.
      ...(packet && packetReader(packet) ? { repoReader: () => packetReader(packet)! } : {}),
      // The memory the run saw, not what the wiki holds now.
      readMemory: () => Promise.resolve(packet ? memoryFromPacket(packet) : []),
    },
    // The hooks' recorded decisions: no hook runs during a replay.
    governance: { ...base.governance, escalator: replayEscalator(recorded), hooks: new RecordedHooks(recorded) },
    runtime: { clock: base.runtime.clock, aciaVersion: base.runtime.aciaVersion, ids: { runId: () => asRunId(runId) }, sleep: () => Promise.resolve(), mailbox: () => new ReplayMailbox(recorded) },
  };
  let failure: string | null = null;
  try {
    await rerunRecorded(deps, repo, runId, ledger, started);
  } catch (e) {
    failure = errorMessage(e);
  }
  const report = { ...compare(recorded, ledger.entries(), runId), error: failure };
  if (failure !== null && report.divergence === null) {
    return { ...report, identical: false, divergence: { actor: 'team', index: 0, recorded: null, replayed: null, reason: failure } };
  }
  return report;
}

export function compare(recorded: readonly LedgerEntry[], replayed: readonly LedgerEntry[], runId: string): Omit<ReplayReport, 'error'> {
  const a = byActor(recorded);
  const b = byActor(replayed);
  const actors = [...new Set([...a.keys(), ...b.keys()])].sort();
  let first: ReplayReport['divergence'] = null;
  for (const actor of actors) {
    const ra = a.get(actor) ?? [];
    const rb = b.get(actor) ?? [];
    for (let i = 0; i < Math.max(ra.length, rb.length); i++) {
      const x = ra[i];
      const y = rb[i];
      if (x && y && x.type === y.type && canonicalJson(normalise(x)) === canonicalJson(normalise(y))) continue;
      const reason = !x ? 'the replay made a decision the recording does not have' : !y ? 'the recording has a decision the replay did not make' : x.type !== y.type ? `${x.type} was recorded, ${y.type} replayed` : `${x.type} differs`;
      // Report the divergence earliest in the recording.
      if (first === null || (x?.seq ?? Infinity) < (first.recorded?.seq ?? Infinity)) {
        first = { actor, index: i, recorded: x ? summary(x) : null, replayed: y ? summary(y) : null, reason };
      }
      break;
    }
  }
  const endOf = (l: readonly LedgerEntry[]) => lastOf(l, 'RUN_COMPLETED')?.data;
  const [a0, b0] = [endOf(recorded), endOf(replayed)];
  if (first === null && a0?.reason !== b0?.reason) {
    first = { actor: 'team', index: 0, recorded: null, replayed: null, reason: `the run ended ${String(a0?.reason)} but the replay ended ${String(b0?.reason)}: ${b0?.message ?? ''}` };
  }
  return { runId, identical: first === null, recordedEntries: recorded.length, replayedEntries: replayed.length, divergence: first };
}

function byActor(entries: readonly LedgerEntry[]): Map<string, LedgerEntry[]> {
  const m = new Map<string, LedgerEntry[]>();
  for (const e of entries) {
    if (SESSION_TYPES.has(e.type)) continue;
    // A run.end hook reports on a session's end, as RUN_COMPLETED does: not a decision to replay.
    if (e.type === 'POLICY_DECISION' && e.data.hook === 'run.end') continue;
    // Parallel tasks interleave; within one actor and one task the order is the decision order.
    const taskId = taskIdOf(e);
    const key = taskId === undefined ? e.actor : `${e.actor} ${taskId}`;
    const list = m.get(key) ?? [];
    list.push(e);
    m.set(key, list);
  }
  for (const list of m.values()) sortConcurrentResults(list);
  return m;
}

/**
 * Results of calls that ran concurrently land in completion order: compare them in call order. A planner
 * read's CONTEXT_INTERNALIZED is appended right after its TOOL_RESULT and moves with it.
 */
function sortConcurrentResults(list: LedgerEntry[]): void {
  const useId = (e: LedgerEntry) => (e.type === 'TOOL_RESULT' ? e.data.toolUseId : '');
  const follows = (e: LedgerEntry | undefined, id: string) => e?.type === 'CONTEXT_INTERNALIZED' && e.data.artifacts[0]?.toolUseId === id;
  for (let i = 0; i < list.length; ) {
    const groups: LedgerEntry[][] = [];
    let j = i;
    while (j < list.length && list[j]!.type === 'TOOL_RESULT') {
      const group = [list[j]!];
      if (follows(list[j + 1], useId(list[j]!))) group.push(list[j + 1]!);
      groups.push(group);
      j += group.length;
    }
    if (groups.length > 1) {
      groups.sort((a, b) => (useId(a[0]!) < useId(b[0]!) ? -1 : useId(a[0]!) > useId(b[0]!) ? 1 : 0));
      list.splice(i, j - i, ...groups.flat());
    }
    i = Math.max(j, i + 1);
  }
}

/** Wall-clock facts (durations) and placement (the worker) are not decisions; everything else must match exactly. */
function normalise(e: LedgerEntry): unknown {
  const data: object = e.data;
  // Which fleet worker ran an attempt is where, not what: a replay runs every task in one process.
  const rest = Object.fromEntries(Object.entries(data).filter(([k]) => k !== 'durationMs' && k !== 'worker'));
  if (e.type === 'POLICY_DECISION') {
    const req = typeof e.data.request === 'object' && e.data.request !== null ? Object.fromEntries(Object.entries(e.data.request).filter(([k]) => k !== 'metrics')) : e.data.request;
    return { type: e.type, data: { ...rest, request: req } };
  }
  return { type: e.type, data: rest };
}

function summary(e: LedgerEntry): EntrySummary {
  return { seq: e.seq, actor: e.actor, type: e.type, data: e.data };
}
