// The replay bundle follows the ACM v0.5 layout (spec §5.10.2, §10) in files other ACM tools read: checked
// here by a reader written against the spec's table and the reference implementation's reader contract
// (ddse-foundation/acm ReplayBundleExporter.load/validate: metadata.json, goal/goal.json,
// context/context.json, plans/*.json, memory-ledger/ledger.jsonl, task-io/<id>.input|output.json,
// policy/requests.jsonl, verification/results.json, engine-trace/run.json), not by ACIA's own code. The
// reference itself was run out of tree (docs/acm-conformance.md, "Interoperability").
import { createHash, randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseDocumentText } from '../../src/core/acm/json-text.js';
import { validateDocument } from '../../src/core/acm/validate-document.js';
import { verifyBundle } from '../../src/core/ledger/bundle.js';
import { SPEC_BUNDLE_DIRS, verifyForeignBundle } from '../../src/core/ledger/spec-bundle.js';
import { replayCommand } from '../../src/cli/replay-action.js';
import { cleanCommand } from '../../src/cli/clean-action.js';
import { commitBundle } from '../../src/app/bundle-commit.js';
import { git, tempDir } from '../e2e/helpers.js';
import { runsTests, savedPlanSet, teamRig, writes } from './team-rig.js';

const plan = {
  plans: [
    {
      id: 'plan-A',
      rationale: 'implement, then verify',
      tasks: [
        { id: 't1', capability: 'dev.implement', input: { instructions: 'add docs' }, verification: ['$t1.filesChanged >= 1'] },
        { id: 't2', capability: 'qa.verify', input: {} },
      ],
      edges: [{ from: 't1', to: 't2' }],
    },
    { id: 'plan-B', rationale: 'the same in one task', tasks: [{ id: 'b1', capability: 'dev.implement', input: { instructions: 'add docs' } }], edges: [] },
  ],
  chosenPlanId: 'plan-A',
  selectionRationale: 'smallest',
};

/** A run with planning reads, policy, verification and a QA verdict, bundled as every run is when it ends. */
async function bundledRun(): Promise<{ repo: string; runId: string; dir: string }> {
  const rig = teamRig({ ledger: 'file' });
  const script = [
    { caller: 'pm', toolCalls: [{ name: 'read_file', input: { path: 'README.md' } }] },
    { caller: 'pm', toolCalls: [{ name: 'return_result', input: plan }] },
    ...writes('dev:t1', 'docs/t1.md', 'one\n'),
    ...runsTests('qa:t2'),
  ];
  const { result, exitCode } = await rig.start({ goal: 'document the project' }, { script });
  expect(exitCode, result.message).toBe(0);
  return { repo: rig.repo, runId: result.runId, dir: join(rig.repo, '.acia', 'bundles', result.runId) };
}

const readJson = (dir: string, path: string): unknown => JSON.parse(readFileSync(join(dir, path), 'utf8'));
const jsonLines = (dir: string, path: string): Record<string, unknown>[] =>
  readFileSync(join(dir, path), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
/** The reference's ledger digest: sha256 of JSON {id, ts, type, details}, first 32 hex digits. */
const refDigest = (e: Record<string, unknown>) => createHash('sha256').update(JSON.stringify({ id: e.id, ts: e.ts, type: e.type, details: e.details })).digest('hex').slice(0, 32);

describe('the replay bundle in the ACM v0.5 layout', () => {
  it('has every directory and file the spec and the reference reader require, in the shapes they read', async () => {
    const { runId, dir } = await bundledRun();
    for (const d of SPEC_BUNDLE_DIRS) expect(existsSync(join(dir, d)), d).toBe(true);
    for (const f of ['metadata.json', 'manifest.yaml', 'goal/goal.json', 'context/context.json', 'plans/plan-A.json', 'plans/plan-B.json', 'plans/selection.yaml', 'policy/requests.jsonl', 'policy/policy-sheet.json', 'verification/results.json', 'verification/sheet.json', 'engine-trace/run.json', 'planner/llm-calls.jsonl', 'planner/internal-context/manifest.json', 'memory-ledger/ledger.jsonl']) {
      expect(existsSync(join(dir, f)), f).toBe(true);
    }
    // The reference reads every plans/*.json as a Plan: nothing else may sit there.
    expect(readdirSync(join(dir, 'plans')).filter((f) => f.endsWith('.json')).sort()).toEqual(['plan-A.json', 'plan-B.json']);

    const metadata = readJson(dir, 'metadata.json') as Record<string, unknown>;
    expect(metadata).toMatchObject({ version: '0.5', acmVersion: 'v0.5', runId, planId: 'plan-A', contextRef: expect.stringMatching(/^sha256-[0-9a-f]{64}$/) as unknown });
    const goal = readJson(dir, 'goal/goal.json') as Record<string, unknown>;
    expect(goal).toMatchObject({ kind: 'GoalCard', id: metadata.goalId, intent: 'document the project', context_required: true, contextRef: metadata.contextRef });
    for (const field of ['actors', 'acceptance', 'policy_context', 'metadata', 'constraints']) expect(goal[field], field).toBeDefined();
    const context = readJson(dir, 'context/context.json') as Record<string, unknown>;
    expect(context).toMatchObject({ kind: 'ContextPacket', id: metadata.contextRef, metadata: { id: metadata.contextRef }, facts: expect.any(Object) as unknown });
    expect((context.augmentations as unknown[]).length).toBeGreaterThan(0);
    // The packet as recorded, content-addressed: its file is named by, and hashes to, the plans' contextRef (002 §9).
    const hex = String(metadata.contextRef).slice('sha256-'.length);
    expect(createHash('sha256').update(readFileSync(join(dir, 'context', `${hex}.json`))).digest('hex')).toBe(hex);

    for (const id of ['plan-A', 'plan-B']) {
      const p = readJson(dir, `plans/${id}.json`) as { id: string; contextRef: string; capabilityMapVersion: string; tasks: { id: string; capabilityRef: string }[]; edges: unknown[]; alternatives: string[]; join?: string };
      expect(p).toMatchObject({ id, contextRef: metadata.contextRef, capabilityMapVersion: 'acia-caps@1' });
      expect(p.alternatives).toEqual([id === 'plan-A' ? 'plan-B' : 'plan-A']);
      for (const t of p.tasks) expect(t.capabilityRef).toMatch(/^[a-z_.]+@/);
      expect(p.join === undefined || p.join === 'all' || p.join === 'any').toBe(true);
    }
    expect((readJson(dir, 'plans/plan-A.json') as { promptDigest?: string }).promptDigest).toMatch(/^sha256-/);

    // The Memory Ledger in the spec's entry schema, each line with the reference's digest and the spec's hash.
    const ledger = jsonLines(dir, 'memory-ledger/ledger.jsonl');
    expect(ledger.length).toBeGreaterThan(10);
    for (const e of ledger) {
      expect(Object.keys(e)).toEqual(expect.arrayContaining(['id', 'timestamp', 'ts', 'type', 'actor', 'details', 'hash', 'digest']));
      expect(['human', 'llm', 'policy', 'engine']).toContain(e.actor);
      expect(typeof e.ts).toBe('number');
      expect(e.digest).toBe(refDigest(e));
    }
    expect(ledger.map((e) => e.type)).toEqual(expect.arrayContaining(['PLAN_SELECTED', 'POLICY_DECISION', 'CONTEXT_INTERNALIZED', 'VERIFICATION', 'RUN_COMPLETED']));
    expect(ledger.some((e) => e.type === 'TOOL_CALL')).toBe(false);

    // Task I/O, policy records, verification results and the engine trace, as the reference reader takes them.
    for (const id of ['t1', 't2']) {
      expect(readJson(dir, `task-io/${id}.input.json`)).toMatchObject({ taskId: id });
      expect(readJson(dir, `task-io/${id}.output.json`)).toEqual(expect.any(Object));
    }
    const policy = jsonLines(dir, 'policy/requests.jsonl');
    expect(policy.filter((r) => r.taskId === 't2').map((r) => r.action)).toEqual(['task.pre', 'task.post']);
    for (const r of policy) expect(typeof r.decision).toBe('boolean');
    expect(readJson(dir, 'policy/policy-sheet.json')).toMatchObject({ kind: 'PolicySheet', rules: expect.arrayContaining([expect.objectContaining({ hook: 'task.post', protectedPaths: expect.any(Array) as unknown })]) as unknown });
    const results = readJson(dir, 'verification/results.json') as { taskId: string; expressions: string[]; results: boolean[]; passed: boolean }[];
    expect(results).toContainEqual(expect.objectContaining({ taskId: 't1', expressions: ['$t1.filesChanged >= 1'], results: [true], passed: true }));
    expect(results).toContainEqual(expect.objectContaining({ taskId: 't2', passed: true }));
    const trace = readJson(dir, 'engine-trace/run.json') as { runId: string; status: string; tasks: { taskId: string }[]; streams: unknown[] };
    expect(trace).toMatchObject({ runId, engine: 'acia', status: 'success' });
    expect(trace.tasks.map((t) => t.taskId)).toEqual(['t1', 't2']);
    expect(trace.streams.length).toBeGreaterThan(0);
    // The capability map the plans name (K4), the specs of exactly the tasks that ran (R5), and each planner
    // call with its model and its prompt stored under the prompt's digest (R4).
    expect(readJson(dir, 'capability-map/capability-map.json')).toMatchObject({ kind: 'CapabilityMap', version: 'acia-caps@1', capabilities: expect.arrayContaining([expect.objectContaining({ name: 'qa.write_tests', version: expect.any(String) as unknown })]) as unknown });
    expect(readdirSync(join(dir, 'task-specs')).sort()).toEqual(['t1.json', 't2.json']);
    const calls = jsonLines(dir, 'planner/llm-calls.jsonl');
    expect(calls.length).toBe(2);
    for (const c of calls) {
      expect(c).toMatchObject({ type: 'planner', model: expect.any(String) as unknown, promptDigest: expect.stringMatching(/^sha256-[0-9a-f]{64}$/) as unknown });
      expect(existsSync(join(dir, 'planner', 'prompts', String(c.promptDigest).slice('sha256-'.length))), String(c.promptDigest)).toBe(true);
    }
    const internal = readJson(dir, 'planner/internal-context/manifest.json') as { digest: string; uri: string; provenance: { artifact: string } }[];
    expect(internal.map((a) => a.uri)).toEqual(['read_file:README.md']);
    expect(existsSync(join(dir, internal[0]!.provenance.artifact))).toBe(true);
    const manifest = parseDocumentText(readFileSync(join(dir, 'manifest.yaml'), 'utf8'), 'manifest.yaml');
    expect(manifest.ok && manifest.value).toMatchObject({ apiVersion: 'acm.ddse.ai/v0.5', kind: 'ReplayBundleManifest', metadata: { runId }, checksum: { algorithm: 'sha256' } });
  });

  it("its artifacts validate as ACIA reads the spec's documents, it verifies, it replays, and an edited ledger line is caught", async () => {
    const { dir } = await bundledRun();
    const read = (file: string) => (ref: string) => {
      const parsed = parseDocumentText(readFileSync(join(dirname(join(dir, file)), ref), 'utf8'), ref);
      return parsed.ok ? parsed.value : null;
    };
    for (const [file, kind] of [['goal/goal.json', 'goal'], ['context/context.json', 'context-packet'], ['plans/plan-A.json', 'plan'], ['task-specs/t1.json', 'task'], ['capability-map/capability-map.json', 'capability-map'], ['memory-ledger/ledger.jsonl', 'acm-ledger']] as const) {
      const r = validateDocument(readFileSync(join(dir, file), 'utf8'), file, { readSheet: read(file) });
      expect(r, `${file}: ${JSON.stringify(r)}`).toMatchObject({ status: "checked", kind, ok: true });
    }
    expect((await verifyBundle(dir)).problems).toEqual([]);
    const copy = join(tempDir('bundle-copy'), 'b');
    cpSync(dir, copy, { recursive: true });
    expect(await replayCommand(tempDir('elsewhere'), copy, false)).toBe(0);

    // A line edited, with the manifest's checksums recomputed to match: the line's own hash still catches it.
    const path = join(copy, 'memory-ledger', 'ledger.jsonl');
    const lines = readFileSync(path, 'utf8').split('\n');
    lines[2] = lines[2]!.replace('"type":"', '"type":"X');
    writeFileSync(path, lines.join('\n'));
    const m = readJson(copy, 'manifest.json') as { files: Record<string, string> };
    m.files['memory-ledger/ledger.jsonl'] = createHash('sha256').update(readFileSync(path)).digest('hex');
    writeFileSync(join(copy, 'manifest.json'), JSON.stringify(m));
    const problems = (await verifyBundle(copy)).problems.map((p) => p.message);
    expect(problems).toContain('memory-ledger/ledger.jsonl:3: digest does not match {id, ts, type, details}');
    expect(problems).toContain('memory-ledger/ledger.jsonl:3: hash does not match the line');
  });
});

describe('a bundle another ACM implementation wrote', () => {
  /** The reference exporter's layout and shapes (ReplayBundleExporter.export), written by hand. */
  function referenceBundle(): string {
    const dir = tempDir('ref-bundle');
    const put = (path: string, value: unknown, jsonl = false) => {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), jsonl ? (value as unknown[]).map((v) => JSON.stringify(v)).join('\n') : JSON.stringify(value, null, 2));
    };
    put('metadata.json', { version: '0.5', createdAt: '2025-10-03T00:10:45Z', runId: 'run-1', goalId: 'REFUND-001', contextRef: 'ctx-1', planId: 'plan-A' });
    put('goal/goal.json', { id: 'REFUND-001', intent: 'Refund order O123' });
    put('context/context.json', { id: 'ctx-1', facts: { orderId: 'O123' } });
    put('plans/planA.json', { id: 'plan-A', contextRef: `sha256-${'c'.repeat(64)}`, capabilityMapVersion: 'v1', tasks: [{ id: 't1', capabilityRef: 'compute_refund@v1' }], edges: [] });
    const entries = [1, 2].map((n) => ({ id: `ledger-${n}`, ts: 1759449961000 + n, type: n === 1 ? 'PLAN_SELECTED' : 'TASK_START', details: { n } }));
    put('memory-ledger/ledger.jsonl', entries.map((e) => ({ ...e, digest: refDigest(e) })), true);
    put('task-io/t1.input.json', { orderId: 'O123' });
    put('task-io/t1.output.json', { amount: 10 });
    return dir;
  }

  it('acia verify says it cannot vouch for it, and what it did check: layout, artifacts, the entries\' own digests', async () => {
    const dir = referenceBundle();
    const report = await verifyForeignBundle(dir);
    expect(report.ok).toBe(false);
    expect(report.problems[0]).toMatchObject({ code: 'NOT_ACIA_BUNDLE', message: expect.stringContaining('its integrity cannot be verified') as unknown });
    expect(report.problems[0]!.message).toContain("2 of 2 ledger entries' own digests");
    expect(report.problems.slice(1).map((p) => p.message)).toEqual(expect.arrayContaining(['capability-map/ is missing (ACM v0.5 bundle layout)', 'policy/requests/ is missing (ACM v0.5 bundle layout)']));
    // An entry edited after the fact no longer matches its digest.
    const path = join(dir, 'memory-ledger', 'ledger.jsonl');
    writeFileSync(path, readFileSync(path, 'utf8').replace('"n":2', '"n":3'));
    expect((await verifyForeignBundle(dir)).problems.map((p) => p.message)).toContain('memory-ledger/ledger.jsonl:2: digest does not match {id, ts, type, details}');
    // acia validate reads its ledger as the spec's Memory Ledger and names what the spec's schema (§5.9.2) wants of it.
    const v = validateDocument(readFileSync(path, 'utf8'), 'ledger.jsonl');
    expect(v).toMatchObject({ status: 'checked', kind: 'acm-ledger', ok: false });
    expect(v.status === 'checked' && v.errors.map((e) => `${e.path} ${e.code}`)).toEqual(expect.arrayContaining(['$[0].timestamp SCHEMA', '$[0].actor SCHEMA', '$[0].hash SCHEMA', '$[1] LEDGER_DIGEST']));
  });

  it('acia replay refuses it with one clear line naming why and what to run instead', async () => {
    await expect(replayCommand(tempDir('elsewhere'), referenceBundle(), false)).rejects.toMatchObject({ code: 'USAGE', message: expect.stringContaining('written by another implementation, not by acia') as unknown });
  });
});

describe('a bundle that cannot be written', () => {
  it('ends the session in error, not with a warning; resume writes it and finishes the run', async () => {
    let failing = true;
    const rig = teamRig({
      ledger: 'file',
      tweak: (deps) => {
        const write = deps.store.writeBundle;
        deps.store.writeBundle = (repo, runId, manifest, ledger) => (failing ? Promise.reject(new Error('ENOSPC: no space left on device')) : write(repo, runId, manifest, ledger));
      },
    });
    const script = [...writes('dev:t1', 'docs/t1.md', 'one\n')];
    const planSet = savedPlanSet([{ id: 't1', capability: 'dev.implement' }], []);
    const first = await rig.start({ goal: 'execute the saved plan', planSet, rebindContext: true }, { script });
    expect(first.exitCode).toBe(1);
    expect(first.result).toMatchObject({ reason: 'error', message: expect.stringContaining('its replay bundle could not be written: ENOSPC') as unknown });
    // The verdict stays recorded; the error comes after it, and the run is not marked finished as a success.
    expect(first.entries.filter((e) => e.type === 'RUN_COMPLETED').map((e) => (e.data as { reason: string }).reason)).toEqual(['succeeded', 'error']);
    expect(existsSync(join(rig.repo, '.acia', 'bundles', first.result.runId, 'manifest.json'))).toBe(false);
    failing = false;
    const second = await rig.resume(first.result.runId, undefined, { script: [] });
    expect(second.exitCode, second.result.message).toBe(0);
    expect((await verifyBundle(join(rig.repo, '.acia', 'bundles', first.result.runId))).ok).toBe(true);
  });
});

describe('bundles under version control', () => {
  it('every bundle written is committed, exactly its files, to refs/acia/bundles/<run>; no branch or checkout changes', async () => {
    const { repo, runId, dir } = await bundledRun();
    const ref = `refs/acia/bundles/${runId}`;
    const files = git(repo, 'ls-tree', '-r', '--name-only', ref).split('\n').filter((f) => f !== '').sort();
    const manifest = readJson(dir, 'manifest.json') as { files: Record<string, string> };
    expect(files).toEqual([...Object.keys(manifest.files), 'manifest.json'].sort());
    expect(git(repo, 'show', `${ref}:metadata.json`)).toBe(readFileSync(join(dir, 'metadata.json'), 'utf8').trimEnd());
    expect(git(repo, 'status', '--porcelain')).toBe('');
    expect(git(repo, 'for-each-ref', '--format=%(refname)', 'refs/heads/').split('\n')).not.toContain(ref);
    expect(git(repo, 'cat-file', '-e', `${ref}:metadata.json`)).toBe('');
    git(repo, 'fsck', '--strict', '--no-dangling');
  });

  it('a bundle\'s model requests, each the conversation so far, shrink to their deltas at the next `git gc`', async () => {
    const repo = tempDir('bundle-pack');
    git(repo, 'init', '-q');
    const dir = tempDir('bundle-dir');
    // Twenty requests of a growing conversation; random text, so deflate alone saves little and deltas must.
    const turns = Array.from({ length: 40 }, (_, i) => ({ role: i % 2 ? 'user' : 'assistant', content: [{ type: 'text', text: randomBytes(600).toString('base64') }] }));
    let raw = 0;
    for (let n = 1; n <= 20; n++) {
      const request = JSON.stringify({ model: 'm', messages: turns.slice(0, n * 2) });
      raw += Buffer.byteLength(request);
      writeFileSync(join(dir, `request-${n}.json`), request);
    }
    await commitBundle(repo, 'r1', dir, new Date('2026-11-27T12:00:00Z'));
    git(repo, 'gc', '-q');
    const packDir = join(repo, '.git', 'objects', 'pack');
    const packed = readdirSync(packDir).filter((f) => f.endsWith('.pack')).reduce((sum, f) => sum + statSync(join(packDir, f)).size, 0);
    // Without deltas the pack is about the raw size (random text deflates little); with them, about the last request.
    expect(packed).toBeLessThan(raw / 6);
    git(repo, 'fsck', '--strict', '--no-dangling');
  });

  it('retention: acia clean removes a finished run\'s branches and worktrees, never its ledger, blobs, bundle or bundle ref', async () => {
    const { repo, runId, dir } = await bundledRun();
    const before = readFileSync(join(dir, 'manifest.json'), 'utf8');
    expect(git(repo, 'for-each-ref', '--format=%(refname)', `refs/heads/acia/${runId}`)).not.toBe('');
    expect(await cleanCommand({ repo })).toBe(0);
    expect(git(repo, 'for-each-ref', '--format=%(refname)', `refs/heads/acia/${runId}`)).toBe('');
    expect(readFileSync(join(dir, 'manifest.json'), 'utf8')).toBe(before);
    expect((await verifyBundle(dir)).ok).toBe(true);
    expect(existsSync(join(repo, '.acia', 'runs', runId, 'ledger.jsonl'))).toBe(true);
    expect(git(repo, 'rev-parse', '--verify', `refs/acia/bundles/${runId}`)).toMatch(/^[0-9a-f]{40}$/);
  });
});
