// Checks ACIA's replay bundles against the ACM reference implementation's bundle reader and writer
// (ddse-foundation/acm, framework/node/packages/acm-replay/src/exporter.ts), out of tree: the reference is
// not on npm and its code is not copied into this repository. Given a checkout (or bare clone) of it, this
// transpiles that one file as is (its imports are type-only) into a scratch directory, then:
//   1. runs `acia demo --scenario plan-b` (a re-plan, 4 tasks) and has the reference's
//      ReplayBundleExporter.validate and .load read its bundle; checks what load recovered, and each ledger
//      entry's digest by the reference runtime's own rule (MemoryLedger: sha256 of {id, ts, type, details});
//   2. writes a bundle with ReplayBundleExporter.export from SDK-shaped inputs and runs `acia verify`
//      (must say it cannot vouch for another implementation's bundle, exit 1) and `acia replay` (exit 2).
// Needs the built CLI (npm run build). Prints a JSON report; exit 0 when every check holds, 1 otherwise.
//
//   node scripts/acm-reference-check.mjs <ddse-foundation/acm checkout or git dir> [commit, default HEAD]
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const [refRepo, commit = 'HEAD'] = process.argv.slice(2);
if (!refRepo) {
  process.stderr.write('usage: node scripts/acm-reference-check.mjs <ddse-foundation/acm checkout or git dir> [commit]\n');
  process.exit(2);
}
const EXPORTER = 'framework/node/packages/acm-replay/src/exporter.ts';
// The file as checked when docs/acm-conformance.md was written (ddse-foundation/acm @ 70f33f7).
const CHECKED_SHA256 = 'ec39036b0d6e40f8259287dc0c7f3613a6cf3812f52bc026cbec540fda634db5';

const shown = spawnSync('git', ['-C', refRepo, 'show', `${commit}:${EXPORTER}`], { encoding: 'utf8' });
if (shown.status !== 0) {
  process.stderr.write(`cannot read ${EXPORTER} at ${commit} in ${refRepo}: ${shown.stderr.trim()}\n`);
  process.exit(2);
}
const scratch = mkdtempSync(join(tmpdir(), 'acm-ref-check-'));
const ts = createRequire(import.meta.url)('typescript');
const js = ts.transpileModule(shown.stdout, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText;
writeFileSync(join(scratch, 'exporter.mjs'), js);
const { ReplayBundleExporter } = await import(pathToFileURL(join(scratch, 'exporter.mjs')).href);

const acia = (...args) => spawnSync(process.execPath, [join(root, 'dist', 'bin', 'acia.js'), ...args], { encoding: 'utf8', cwd: scratch });
/** The reference runtime's per-entry digest (MemoryLedger.computeDigest). */
const refDigest = (e) => createHash('sha256').update(JSON.stringify({ id: e.id, ts: e.ts, type: e.type, details: e.details })).digest('hex').slice(0, 32);
const checks = [];
const check = (name, ok, detail) => checks.push({ name, ok: Boolean(ok), ...(detail === undefined ? {} : { detail }) });

// 1. An ACIA bundle read by the reference.
const demo = acia('demo', '--scenario', 'plan-b', '--dir', join(scratch, 'demo'), '--quiet');
check('acia demo plan-b succeeds', demo.status === 0, demo.stderr.trim() || undefined);
const bundles = join(scratch, 'demo', '.acia', 'bundles');
const bundle = join(bundles, readdirSync(bundles)[0] ?? 'none');
const validation = await ReplayBundleExporter.validate(bundle);
check('reference validate accepts the ACIA bundle', validation.valid, validation.errors);
const b = await ReplayBundleExporter.load(bundle);
check('metadata names run, goal, context and plan', b.metadata?.runId && b.metadata?.goalId && b.metadata?.contextRef && b.metadata?.planId, b.metadata);
check('the Goal Card has the spec fields', ['id', 'intent', 'actors', 'acceptance', 'policy_context', 'context_required'].every((k) => k in (b.goal ?? {})), Object.keys(b.goal ?? {}));
check('the Context Packet has id, version, facts, augmentations', b.context?.id && b.context?.version && Object.keys(b.context?.facts ?? {}).length > 0 && (b.context?.augmentations?.length ?? 0) > 0);
check('both plans load with contextRef, capabilityMapVersion, tasks, alternatives', b.plans.length === 2 && b.plans.every((p) => p.contextRef === b.metadata.contextRef && p.capabilityMapVersion && p.tasks?.length > 0 && Array.isArray(p.alternatives)), b.plans.map((p) => p.id));
check('every ledger entry has id, numeric ts, type, details, digest', b.ledger.length > 0 && b.ledger.every((e) => e.id && typeof e.ts === 'number' && e.type && e.details !== undefined && e.digest), b.ledger.length);
check("every ledger digest is valid by the reference runtime's rule", b.ledger.every((e) => refDigest(e) === e.digest));
check('task I/O for the 4 tasks that ran', b.taskIO.length === 4 && b.taskIO.every((t) => t.input !== undefined && t.output !== null), b.taskIO.map((t) => t.taskId));
check('policy records with boolean decisions, pre and post', b.policyRecords.length > 0 && b.policyRecords.every((r) => typeof r.decision === 'boolean') && ['task.pre', 'task.post'].every((a) => b.policyRecords.some((r) => r.action === a)), b.policyRecords.length);
check('verification results in the reference shape', b.verificationResults.length > 0 && b.verificationResults.every((v) => Array.isArray(v.expressions) && Array.isArray(v.results) && typeof v.passed === 'boolean'), b.verificationResults.length);
check('an engine trace with the tasks', b.engineTrace?.tasks?.length === 4, b.engineTrace?.tasks?.length);

// 2. A reference bundle read by ACIA.
const ledger = [
  { id: 'ledger-1', ts: 1759449961000, type: 'PLAN_SELECTED', details: { selected: 'plan-A', alternatives: ['plan-B'] } },
  { id: 'ledger-2', ts: 1759449962000, type: 'TASK_START', details: { taskId: 't1' } },
].map((e) => ({ ...e, digest: refDigest(e) }));
const ref = join(scratch, 'refbundle');
const contextRef = `sha256-${'c'.repeat(64)}`;
await ReplayBundleExporter.export({
  outputDir: ref,
  goal: { id: 'REFUND-001', intent: 'Refund order O123', context_required: true },
  context: { id: contextRef, facts: { orderId: 'O123' } },
  plans: [{ id: 'plan-A', contextRef, capabilityMapVersion: 'v1', tasks: [{ id: 't1', capabilityRef: 'compute_refund@v1', input: { orderId: 'O123' } }], edges: [], join: 'all', alternatives: [] }],
  selectedPlanId: 'plan-A',
  ledger,
  taskIO: [{ taskId: 't1', capability: 'compute_refund', input: { orderId: 'O123' }, output: { amount: 10 }, ts: '2025-10-03T00:06:03Z' }],
  policyRecords: [{ id: 'p1', ts: '2025-10-03T00:06:02Z', action: 'task.pre', input: {}, decision: true }],
  verificationResults: [{ taskId: 't1', ts: '2025-10-03T00:06:04Z', expressions: ['exists(output.amount)'], results: [true], passed: true }],
  engineTrace: { runId: 'run-ref-1', engine: 'acm-runtime', startedAt: '2025-10-03T00:06:00Z', completedAt: '2025-10-03T00:06:05Z', status: 'success', tasks: [{ taskId: 't1', status: 'succeeded', startedAt: '2025-10-03T00:06:01Z' }] },
});
const verify = acia('verify', ref);
check('acia verify: exit 1, cannot vouch for another implementation, checked the entry digests', verify.status === 1 && verify.stdout.includes('written by another implementation') && verify.stdout.includes('2 of 2 ledger entries'), verify.stdout.trim());
const replay = acia('replay', ref);
check('acia replay: exit 2, saying why and what to run instead', replay.status === 2 && replay.stderr.includes('written by another implementation'), replay.stderr.trim());
const goal = acia('validate', join(ref, 'goal', 'goal.json'));
check("acia validate reads the reference's Goal Card", goal.status === 0, goal.stdout.trim());

const sha = createHash('sha256').update(shown.stdout).digest('hex');
const failed = checks.filter((c) => !c.ok);
process.stdout.write(`${JSON.stringify({ reference: { repo: refRepo, commit, exporterSha256: sha, sameAsChecked: sha === CHECKED_SHA256 }, scratch, checks }, null, 2)}\n`);
process.stdout.write(`${checks.length - failed.length} of ${checks.length} checks hold${failed.length > 0 ? `; failed: ${failed.map((c) => c.name).join('; ')}` : ''}\n`);
process.exit(failed.length === 0 ? 0 : 1);
