// Reads a replay bundle by the ACM v0.5 layout alone (spec §5.10.2, and the files the reference
// implementation's reader requires), whoever wrote it: which required files and directories are there,
// whether each artifact reads as its kind, and whether the Memory Ledger's entries match their own
// digests. `acia verify` uses it for a bundle another implementation wrote (which has no ACIA manifest
// or hash chain to check) and on its own bundles to check the layout they promise.
import { readFile, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ContextPacket, Goal, Plan } from '../acm/contracts.js';
import { parseDocumentText } from '../acm/json-text.js';
import { goalFromSpec, packetFromSpec } from '../acm/spec-documents.js';
import { planFromSpec } from '../acm/spec-names.js';
import { zodProblems } from '../acm/zod-paths.js';
import { specLineProblems } from './spec-ledger.js';
import type { RunVerification, VerifyProblem } from './verify.js';

/** The directories the spec's Replay Bundle table requires (§5.10.2). */
export const SPEC_BUNDLE_DIRS = ['goal/', 'context/', 'plans/', 'capability-map/', 'task-specs/', 'policy/requests/', 'policy/responses/', 'verification/', 'memory-ledger/', 'engine-trace/', 'task-io/', 'planner/'] as const;

export interface SpecBundleReport {
  /** From metadata.json, when it says. */
  engine: string | null;
  version: string | null;
  runId: string | null;
  missingDirs: string[];
  missingFiles: string[];
  /** One per artifact that does not read as its kind, or a ledger line that does not match its digest. */
  problems: { path: string; message: string }[];
  plans: number;
  ledgerEntries: number;
  /** Ledger entries that carry a digest, each checked. */
  digests: number;
}

async function isDir(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.isDirectory(),
    () => false,
  );
}

async function readDoc(dir: string, path: string): Promise<{ ok: true; value: unknown } | { ok: false; message: string } | null> {
  const text = await readFile(join(dir, path), 'utf8').catch(() => null);
  if (text === null) return null;
  const parsed = parseDocumentText(text, path);
  return parsed.ok ? { ok: true, value: parsed.value } : { ok: false, message: `not JSON: ${parsed.message}` };
}

/** Whether a directory looks like an ACM replay bundle at all (its metadata, or the spec's ledger and goal). */
export async function looksLikeSpecBundle(dir: string): Promise<boolean> {
  const has = async (p: string) => stat(join(dir, p)).then(() => true, () => false);
  return (await has('metadata.json')) || (await has('manifest.yaml')) || ((await has('goal')) && (await has('memory-ledger')));
}

export async function inspectSpecBundle(dir: string): Promise<SpecBundleReport> {
  const report: SpecBundleReport = { engine: null, version: null, runId: null, missingDirs: [], missingFiles: [], problems: [], plans: 0, ledgerEntries: 0, digests: 0 };
  for (const d of SPEC_BUNDLE_DIRS) if (!(await isDir(join(dir, d)))) report.missingDirs.push(d);
  const problem = (path: string, message: string): void => void report.problems.push({ path, message });

  const metadata = await readDoc(dir, 'metadata.json');
  if (metadata === null) report.missingFiles.push('metadata.json');
  else if (!metadata.ok) problem('metadata.json', metadata.message);
  else {
    const m = metadata.value as { engine?: unknown; version?: unknown; runId?: unknown } | null;
    report.engine = typeof m?.engine === 'string' ? m.engine : null;
    report.version = typeof m?.version === 'string' ? m.version : null;
    report.runId = typeof m?.runId === 'string' ? m.runId : null;
  }
  const artifact = async (path: string, read: (v: unknown) => string[]): Promise<void> => {
    const doc = await readDoc(dir, path);
    if (doc === null) report.missingFiles.push(path);
    else if (!doc.ok) problem(path, doc.message);
    else if (doc.value !== null) for (const m of read(doc.value)) problem(path, m);
  };
  const schema = (parse: (v: unknown) => { success: true } | { success: false; error: Parameters<typeof zodProblems>[0] }) => (v: unknown) => {
    const r = parse(v);
    return r.success ? [] : zodProblems(r.error).slice(0, 3).map((p) => `${p.path}: ${p.message}`);
  };
  await artifact('goal/goal.json', (v) => schema((x) => Goal.safeParse(x))(goalFromSpec(v).value));
  await artifact('context/context.json', (v) => schema((x) => ContextPacket.safeParse(x))(packetFromSpec(v).value));

  const planFiles = (await readdir(join(dir, 'plans')).catch(() => [] as string[])).filter((f) => f.endsWith('.json')).sort();
  report.plans = planFiles.length;
  if (planFiles.length === 0) report.missingFiles.push('plans/*.json');
  for (const f of planFiles) await artifact(`plans/${f}`, (v) => schema((x) => Plan.safeParse(x))(planFromSpec(v).value));

  const ledger = await readFile(join(dir, 'memory-ledger', 'ledger.jsonl'), 'utf8').catch(() => null);
  if (ledger === null) report.missingFiles.push('memory-ledger/ledger.jsonl');
  else {
    ledger.split('\n').forEach((line, i) => {
      if (line.trim() === '') return;
      report.ledgerEntries++;
      const parsed = parseDocumentText(line, 'ledger.jsonl');
      if (!parsed.ok) return problem(`memory-ledger/ledger.jsonl:${i + 1}`, `not JSON: ${parsed.message}`);
      if (typeof (parsed.value as { digest?: unknown } | null)?.digest === 'string') report.digests++;
      for (const m of specLineProblems(parsed.value)) problem(`memory-ledger/ledger.jsonl:${i + 1}`, m);
    });
  }
  return report;
}

/** The layout a bundle promises, as verify problems: what is missing and what does not read. */
export function layoutProblems(r: SpecBundleReport): VerifyProblem[] {
  return [
    ...r.missingFiles.map((f) => ({ seq: null, code: 'BUNDLE_LAYOUT' as const, message: `${f} is missing (ACM v0.5 bundle layout)` })),
    ...r.missingDirs.map((d) => ({ seq: null, code: 'BUNDLE_LAYOUT' as const, message: `${d} is missing (ACM v0.5 bundle layout)` })),
    ...r.problems.map((p) => ({ seq: null, code: 'BUNDLE_LAYOUT' as const, message: `${p.path}: ${p.message}` })),
  ];
}

/**
 * A bundle another ACM implementation wrote: acia checks its layout, its artifacts and the digests its
 * ledger entries carry, and says plainly that this is all it can check: with no manifest of checksums
 * and no hash chain, tampering with the files cannot be detected, so the bundle is never reported intact.
 */
export async function verifyForeignBundle(dir: string): Promise<RunVerification> {
  const r = await inspectSpecBundle(dir);
  const who = `${r.engine ?? 'another implementation'}${r.version === null ? '' : `, ACM ${r.version}`}`;
  const layout = layoutProblems(r);
  const summary: VerifyProblem = {
    seq: null,
    code: 'NOT_ACIA_BUNDLE',
    message:
      `an ACM replay bundle written by ${who}, not by acia: it has no acia manifest of checksums and no hash-chained ledger, so its integrity cannot be verified. ` +
      `acia checked its layout and artifacts (${layout.length === 0 ? 'complete, every artifact reads' : `${layout.length} problem(s)`}) and ${r.digests} of ${r.ledgerEntries} ledger entries' own digests`,
  };
  return { runId: r.runId ?? dir, ok: false, entries: r.ledgerEntries, head: null, problems: [summary, ...layout] };
}
