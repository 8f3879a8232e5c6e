// The files of a replay bundle in the ACM v0.5 layout (spec §5.10, §10) as the reference implementation's
// reader (ddse-foundation/acm ReplayBundleExporter.load/validate) reads them: metadata.json, the Goal Card,
// the Context Packet as context/context.json, one Plan per file in plans/, Task Specs, policy records,
// verification results and sheet, the Memory Ledger in the spec's entry schema, the engine trace, per-task
// input and output, the planner's calls and internal context. bundle.ts adds ACIA's own files beside them
// (the hash-chained ledger, blobs, checksums) and writes the lot. Everything here is derived from the
// ledger (and its blobs), so building a bundle twice gives the same bytes.
import { ACM_VERSION } from '../acm/acm-version.js';
import { defaultCapabilityMap } from '../acm/capabilities.js';
import { ContextPacket, type TaskSpec } from '../acm/contracts.js';
import { capabilityMapDocument, goalCardDocument, packetDocument, planDocument, specRef, taskSpecDocument, verificationSheetDocument } from '../acm/spec-export.js';
import type { RunState, TaskState } from '../run/state.js';
import { hexOf } from './blob-store.js';
import { lastOf, type LedgerEntry } from './entry.js';
import { specLedgerLine } from './spec-ledger.js';

/** Where a task spec's verificationRefs point: the bundle's sheet, relative to task-specs/ and plans/. */
const SHEET = 'verification/sheet.json';
const SHEET_REF = `../${SHEET}`;

export interface SpecFiles {
  /** Path -> JSON value (written pretty-printed) or text. */
  json: Map<string, unknown>;
  text: Map<string, string>;
  /** Path -> the run blob to copy there. */
  blobs: Map<string, string>;
}

/** Task ids are identifiers by contract, plan ids need not be: anything else is neutralised. */
export function safeName(id: string): string {
  return id.replace(/[^A-Za-z0-9_.-]/g, '_').replace(/^\.+/, '_');
}

const lines = (values: readonly unknown[]): string => values.map((v) => `${JSON.stringify(v)}\n`).join('');

export function specFiles(entries: readonly LedgerEntry[], s: RunState, readBlob: (ref: string) => Buffer | null): SpecFiles {
  const out: SpecFiles = { json: new Map(), text: new Map(), blobs: new Map() };
  const runId = s.runId ?? entries[0]?.runId ?? '';
  const goal = s.started?.goal ?? null;
  const contextRef = s.contextRef;
  const ran = new Map<string, TaskState>([...s.retired, ...s.tasks].filter(([, t]) => t.attempts > 0));
  const specs: TaskSpec[] = [...ran.values()].map((t) => t.spec);
  const startedTs = new Map<string, string>();
  const endedTs = new Map<string, string>();
  for (const e of entries) {
    if (e.type === 'TASK_STARTED' && !startedTs.has(e.data.taskId)) startedTs.set(e.data.taskId, e.ts);
    if (e.type === 'TASK_COMPLETED' || e.type === 'TASK_FAILED' || e.type === 'TASK_SKIPPED') endedTs.set(e.data.taskId, e.ts);
  }

  out.json.set('metadata.json', {
    version: '0.5',
    acmVersion: ACM_VERSION,
    engine: 'acia',
    aciaVersion: s.started?.aciaVersion ?? null,
    createdAt: entries.at(-1)?.ts ?? null,
    runId,
    goalId: goal?.id ?? null,
    contextRef: contextRef === null ? null : specRef(contextRef),
    planId: s.plan?.id ?? null,
    status: s.completed?.reason ?? 'running',
  });
  out.json.set('goal/goal.json', goal === null ? null : goalCardDocument(goal, contextRef));

  const packet = s.packetRef === null ? null : parsePacket(readBlob(s.packetRef));
  out.json.set('context/context.json', packet === null || contextRef === null ? null : packetDocument(packet, contextRef));

  // Plans: each plan of the adopted set, one file each, as planned; how they were chosen and what ran beside them.
  for (const plan of s.planSet?.plans ?? []) {
    const alternatives = (s.planSet?.plans ?? []).filter((p) => p.id !== plan.id).map((p) => p.id);
    out.json.set(`plans/${safeName(plan.id)}.json`, planDocument(plan, { alternatives, sheet: SHEET_REF }));
  }
  // JSON is YAML: the spec names YAML or JSON, and the reference reads every plans/*.json as a Plan.
  out.text.set(
    'plans/selection.yaml',
    `# How the plan was chosen, re-plans, and the plan in force at the end with the tasks added while it ran.\n${JSON.stringify(
      {
        selection: s.selection === null ? null : { method: s.selection.method, chosenPlanId: s.selection.planId, rationale: s.selection.rationale, alternatives: s.selection.alternatives },
        replans: s.replanned,
        executed: s.plan === null ? null : planDocument(s.plan, { alternatives: [], sheet: SHEET_REF }),
      },
      null,
      2,
    )}\n`,
  );
  const mapVersion = s.plan?.capabilityMapVersion ?? null;
  out.json.set(
    'capability-map/capability-map.json',
    mapVersion === defaultCapabilityMap.version ? capabilityMapDocument(defaultCapabilityMap) : { version: mapVersion, capabilities: null, note: `capability map ${String(mapVersion)} is not the one this acia ships (${defaultCapabilityMap.version})` },
  );
  for (const t of specs) {
    out.json.set(`task-specs/${safeName(t.id)}.json`, taskSpecDocument(t, { goalId: goal?.id ?? '', planId: planOf(s, t.id), mapVersion: mapVersion ?? '', sheet: SHEET_REF }));
  }

  const policy: unknown[] = [];
  const results: unknown[] = [];
  for (const e of entries) {
    if (e.type === 'POLICY_DECISION') {
      const d = e.data;
      policy.push({ id: `${e.runId}:${e.seq}`, ts: e.ts, action: d.hook, ...(d.taskId === undefined ? {} : { taskId: d.taskId }), input: d.request, decision: d.response.allow, response: d.response });
    }
    if (e.type === 'VERIFICATION') {
      const d = e.data;
      results.push({
        taskId: d.taskId,
        ts: e.ts,
        expressions: [d.command],
        results: [d.passed],
        passed: d.passed,
        source: d.source,
        exitCode: d.exitCode,
        ...(d.commit === undefined ? {} : { commit: d.commit }),
        ...(d.cannotRun === undefined ? {} : { cannotRun: d.cannotRun }),
        outputRef: specRef(d.outputRef),
      });
    }
  }
  out.text.set('policy/requests.jsonl', lines(policy));
  // The Policy Sheet (ACM v0.5 §5.7) the run's decisions were made under, as its Goal Card's policy context names it.
  const pc = goal?.policyContext ?? {};
  out.json.set('policy/policy-sheet.json', {
    apiVersion: 'acm.ddse.ai/v0.5',
    kind: 'PolicySheet',
    metadata: { id: 'acia-default-policy', engine: pc.engine ?? null },
    hooks: pc.hooks ?? ['plan.admit', 'task.pre', 'task.post'],
    rules: [
      { hook: 'plan.admit', rule: 'deny a plan with more tasks than maxTasksPerPlan', maxTasksPerPlan: pc.maxTasksPerPlan ?? null },
      { hook: 'task.pre', rule: 'allow' },
      { hook: 'task.post', rule: 'deny a result that changed a protected path (a path prefix or glob)', protectedPaths: pc.protectedPaths ?? null },
    ],
    decisions: 'policy/requests.jsonl',
  });
  out.json.set('verification/results.json', results);
  out.json.set(SHEET, verificationSheetDocument(SHEET, specs));

  out.text.set('memory-ledger/ledger.jsonl', lines(entries.filter((e) => e.type !== 'TOOL_CALL' && e.type !== 'TOOL_RESULT').map(specLedgerLine)));

  out.json.set('engine-trace/run.json', {
    runId,
    engine: 'acia',
    startedAt: s.startedAt,
    completedAt: lastOf(entries, 'RUN_COMPLETED')?.ts ?? null,
    status: s.completed === null || s.completed.reason === 'awaiting_human' ? 'partial' : s.completed.reason === 'succeeded' ? 'success' : 'failed',
    reason: s.completed?.reason ?? null,
    tasks: [...ran].map(([id, t]) => ({
      taskId: id,
      capability: t.spec.capability,
      status: t.status,
      attempts: t.attempts,
      startedAt: startedTs.get(id) ?? null,
      ...(endedTs.has(id) ? { completedAt: endedTs.get(id) } : {}),
      ...(t.lastError === null ? {} : { error: `${t.lastError.kind}: ${t.lastError.message}` }),
    })),
    // Stream metadata per model call (ACM 000 §8): what each streamed call was, how it ended, what it cost.
    streams: entries.flatMap((e) =>
      e.type === 'LLM_CALL'
        ? [{ ts: e.ts, caller: e.data.caller, taskId: e.data.taskId ?? null, model: e.data.model, stopReason: e.data.stopReason, durationMs: e.data.durationMs, usage: e.data.usage, requestHash: specRef(e.data.requestHash), responseRef: specRef(e.data.responseRef) }]
        : [],
    ),
  });

  for (const [id, t] of ran) {
    out.json.set(`task-io/${safeName(id)}.input.json`, { taskId: id, capability: t.spec.capability, input: t.spec.input });
    out.json.set(`task-io/${safeName(id)}.output.json`, t.output ?? (t.lastError ? { error: t.lastError } : t.status === 'skipped' ? { skipped: t.summary } : null));
  }

  const provider = (s.started?.model ?? '').split(':')[0] ?? '';
  out.text.set(
    'planner/llm-calls.jsonl',
    lines(
      entries.flatMap((e) =>
        e.type === 'LLM_CALL' && (e.actor === 'pm' || e.actor.startsWith('pm:'))
          ? [{ id: `${e.runId}:${e.seq}`, ts: Date.parse(e.ts), type: 'planner', promptDigest: specRef(e.data.requestHash), model: e.data.model, provider, seed: null, stopReason: e.data.stopReason, usage: e.data.usage, responseRef: specRef(e.data.responseRef) }]
          : [],
      ),
    ),
  );
  const internal: unknown[] = [];
  for (const e of entries) {
    if (e.type !== 'CONTEXT_INTERNALIZED') continue;
    e.data.artifacts.forEach((a, i) => {
      internal.push({ id: `${e.runId}:${e.seq}:${i}`, type: a.tool, digest: specRef(a.digest), uri: a.uri, provenance: { taskId: e.data.taskId, tool: a.tool, toolUseId: a.toolUseId, input: a.input, retrievedAt: e.ts, rationale: e.data.rationale, artifact: `planner/internal-context/${hexOf(a.digest)}` } });
      out.blobs.set(`planner/internal-context/${hexOf(a.digest)}`, a.digest);
    });
  }
  out.json.set('planner/internal-context/manifest.json', internal);
  return out;
}

function parsePacket(bytes: Buffer | null): ContextPacket | null {
  if (bytes === null) return null;
  try {
    const parsed = ContextPacket.safeParse(JSON.parse(bytes.toString('utf8')));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** The plan a task belongs to: the plan in force, or the plan a re-plan abandoned with it. */
function planOf(s: RunState, taskId: string): string {
  if (s.tasks.has(taskId)) return s.plan?.id ?? '';
  return s.replanned.find((r) => s.planSet?.plans.find((p) => p.id === r.fromPlanId)?.tasks.some((t) => t.id === taskId))?.fromPlanId ?? '';
}
