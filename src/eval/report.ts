// The eval's outputs: predictions.jsonl in SWE-bench's format, report.json and report.md (resolve rate,
// cost, tokens and wall time per task, exits by terminal reason, a row per instance), and the
// side-by-side comparison of two eval directories.
import { existsSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { AciaError } from '../core/errors.js';
import { TERMINAL_REASONS } from '../core/ledger/run-vocabulary.js';
import type { EvalInstance } from './instances.js';
import { readResults, writeFileAtomic, type InstanceResult } from './results.js';

export interface Distribution {
  mean: number | null;
  median: number | null;
  p90: number | null;
  total: number;
}

/** One test list's outcome as SWE-bench's harness reports it: the tests that passed and those that did not. */
export interface TestsOutcome {
  success: string[];
  failure: string[];
}

/**
 * The lists SWE-bench's harness reports (`make_run_report`, schema_version 2), so tools that read its
 * report read ACIA's: submitted = has a prediction; empty patch = its prediction changes nothing (not
 * graded, as the harness does); completed = graded (the tests ran); error = graded but the tests could
 * not run (the test patch did not apply, setup failed); incomplete = never ran.
 */
export interface SwebenchLists {
  total_instances: number;
  submitted_instances: number;
  completed_instances: number;
  resolved_instances: number;
  unresolved_instances: number;
  empty_patch_instances: number;
  error_instances: number;
  completed_ids: string[];
  incomplete_ids: string[];
  empty_patch_ids: string[];
  submitted_ids: string[];
  resolved_ids: string[];
  unresolved_ids: string[];
  error_ids: string[];
  schema_version: 2;
}

export interface EvalReport extends SwebenchLists {
  total: number;
  finished: number;
  resolved: number;
  /** resolved / total instances in the set, in percent (unfinished ones count as unresolved). */
  resolvedPct: number;
  /** Finished instances whose model patch changed files that decide how tests run. */
  tampered: number;
  costUsd: Distribution & { unknown: number };
  tokens: Distribution;
  wallSeconds: Distribution;
  exits: Record<string, number>;
  models: string[];
  instances: {
    instance_id: string;
    finished: boolean;
    resolved: boolean;
    reason: string | null;
    costUsd: number | null;
    tokens: number | null;
    wallSeconds: number | null;
    failToPass: string;
    passToPass: string;
    runId: string | null;
    wiki: string | null;
    ledger: string | null;
    gradeError?: string;
    tampered_files?: string[];
    /** SWE-bench's per-instance report fields. */
    patch_is_None: boolean;
    patch_exists: boolean;
    patch_successfully_applied: boolean;
    tests_status: { FAIL_TO_PASS: TestsOutcome; PASS_TO_PASS: TestsOutcome; FAIL_TO_FAIL: TestsOutcome; PASS_TO_FAIL: TestsOutcome };
  }[];
}

/** Nearest-rank percentile of sorted values. */
function percentile(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1] ?? null;
}

export function distribution(values: number[]): Distribution {
  const sorted = [...values].sort((a, b) => a - b);
  const total = sorted.reduce((s, v) => s + v, 0);
  const round = (n: number | null) => (n === null ? null : Math.round(n * 1e6) / 1e6);
  return { mean: round(sorted.length === 0 ? null : total / sorted.length), median: round(percentile(sorted, 50)), p90: round(percentile(sorted, 90)), total: round(total) ?? 0 };
}

function tally(s: Record<string, string>): string {
  const names = Object.keys(s);
  if (names.length === 0) return '-';
  return `${names.filter((n) => s[n] === 'passed').length}/${names.length}`;
}

const outcome = (statuses: Record<string, string>): TestsOutcome => ({
  success: Object.keys(statuses).filter((t) => statuses[t] === 'passed'),
  failure: Object.keys(statuses).filter((t) => statuses[t] !== 'passed'),
});
const NONE: TestsOutcome = { success: [], failure: [] };

/** SWE-bench's lists over the set: `results` holds the instances that finished. */
export function swebenchLists(instances: readonly Pick<EvalInstance, 'instance_id'>[], results: Map<string, InstanceResult>): SwebenchLists {
  const sorted = (xs: string[]) => [...xs].sort();
  const done = instances.flatMap((i) => results.get(i.instance_id) ?? []);
  const empty = done.filter((r) => r.model_patch.trim() === '');
  const graded = done.filter((r) => r.model_patch.trim() !== '');
  const errors = graded.filter((r) => r.gradeError !== undefined);
  const completed = graded.filter((r) => r.gradeError === undefined);
  const ids = (rs: InstanceResult[]) => sorted(rs.map((r) => r.instance_id));
  const resolved = completed.filter((r) => r.resolved);
  const unresolved = completed.filter((r) => !r.resolved);
  return {
    total_instances: instances.length,
    submitted_instances: done.length,
    completed_instances: completed.length,
    resolved_instances: resolved.length,
    unresolved_instances: unresolved.length,
    empty_patch_instances: empty.length,
    error_instances: errors.length,
    completed_ids: ids(completed),
    incomplete_ids: sorted(instances.filter((i) => !results.has(i.instance_id)).map((i) => i.instance_id)),
    empty_patch_ids: ids(empty),
    submitted_ids: ids(done),
    resolved_ids: ids(resolved),
    unresolved_ids: ids(unresolved),
    error_ids: ids(errors),
    schema_version: 2,
  };
}

export function buildReport(instances: readonly Pick<EvalInstance, 'instance_id'>[], results: Map<string, InstanceResult>): EvalReport {
  const done = instances.flatMap((i) => results.get(i.instance_id) ?? []);
  const exits: Record<string, number> = Object.fromEntries(TERMINAL_REASONS.map((r) => [r, 0]));
  for (const r of done) exits[r.reason] = (exits[r.reason] ?? 0) + 1;
  const resolved = done.filter((r) => r.resolved).length;
  const known = done.flatMap((r) => (r.costUsd === null ? [] : [r.costUsd]));
  return {
    ...swebenchLists(instances, results),
    total: instances.length,
    finished: done.length,
    resolved,
    resolvedPct: instances.length === 0 ? 0 : Math.round((resolved / instances.length) * 10000) / 100,
    tampered: done.filter((r) => (r.tampered_files ?? []).length > 0).length,
    costUsd: { ...distribution(known), unknown: done.length - known.length },
    tokens: distribution(done.map((r) => r.tokens)),
    wallSeconds: distribution(done.map((r) => r.wallMs / 1000)),
    exits,
    models: [...new Set(done.map((r) => r.model_name_or_path))],
    instances: instances.map((i) => {
      const r = results.get(i.instance_id);
      return {
        instance_id: i.instance_id,
        finished: r !== undefined,
        resolved: r?.resolved ?? false,
        reason: r?.reason ?? null,
        costUsd: r?.costUsd ?? null,
        tokens: r?.tokens ?? null,
        wallSeconds: r ? Math.round(r.wallMs / 100) / 10 : null,
        failToPass: r ? tally(r.failToPass) : '-',
        passToPass: r ? tally(r.passToPass) : '-',
        runId: r?.runId ?? null,
        wiki: r?.wiki ?? null,
        ledger: r?.ledger ?? null,
        ...(r?.gradeError === undefined ? {} : { gradeError: r.gradeError }),
        ...(r?.tampered_files === undefined ? {} : { tampered_files: r.tampered_files }),
        patch_is_None: r === undefined,
        patch_exists: r !== undefined && r.model_patch.trim() !== '',
        patch_successfully_applied: r !== undefined && r.model_patch.trim() !== '' && r.gradeError === undefined,
        tests_status: { FAIL_TO_PASS: r ? outcome(r.failToPass) : NONE, PASS_TO_PASS: r ? outcome(r.passToPass) : NONE, FAIL_TO_FAIL: NONE, PASS_TO_FAIL: NONE },
      };
    }),
  };
}

const usd = (n: number | null) => (n === null ? 'n/a' : `$${n.toFixed(4)}`);
const num = (n: number | null, digits = 1) => (n === null ? 'n/a' : n.toFixed(digits));

export function renderMarkdown(report: EvalReport, out: string): string {
  const link = (label: string, path: string | null) => (path === null ? '-' : `[${label}](${relative(out, path)})`);
  const lines = [
    '# ACIA eval report',
    '',
    `Model: ${report.models.join(', ') || 'n/a'}`,
    '',
    `**Resolved: ${report.resolved}/${report.total} (${report.resolvedPct}%)**, ${report.finished} of ${report.total} instances finished.`,
    report.tampered > 0 ? `\n**${report.tampered} model patch(es) changed files that decide how tests run**: those files were graded as the base and the test patch have them (see the notes below).` : '',
    '',
    '| per task | mean | median | p90 | total |',
    '| --- | --- | --- | --- | --- |',
    `| cost (USD) | ${usd(report.costUsd.mean)} | ${usd(report.costUsd.median)} | ${usd(report.costUsd.p90)} | ${usd(report.costUsd.total)} |`,
    `| tokens | ${num(report.tokens.mean, 0)} | ${num(report.tokens.median, 0)} | ${num(report.tokens.p90, 0)} | ${report.tokens.total} |`,
    `| wall time (s) | ${num(report.wallSeconds.mean)} | ${num(report.wallSeconds.median)} | ${num(report.wallSeconds.p90)} | ${num(report.wallSeconds.total)} |`,
    '',
    report.costUsd.unknown > 0 ? `${report.costUsd.unknown} run(s) used an unpriced model; their cost is left out of the cost figures.\n` : '',
    'Exits by terminal reason: ' + Object.entries(report.exits).map(([k, v]) => `${k} ${v}`).join(', '),
    '',
    '| instance | resolved | exit | FAIL_TO_PASS | PASS_TO_PASS | cost | tokens | wall (s) | wiki | ledger |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...report.instances.map(
      (i) =>
        `| ${i.instance_id} | ${!i.finished ? 'not run' : i.resolved ? 'yes' : 'no'} | ${i.reason ?? '-'} | ${i.failToPass} | ${i.passToPass} | ${usd(i.costUsd)} | ${i.tokens ?? '-'} | ${num(i.wallSeconds)} | ${link('page', i.wiki)} | ${link(i.runId ?? 'ledger', i.ledger)} |`,
    ),
    '',
  ];
  const notes = report.instances.flatMap((i) => [
    ...(i.tampered_files ? [`- ${i.instance_id}: the model patch changed files that decide how tests run, not graded from it: ${i.tampered_files.map((f) => `\`${f}\``).join(', ')}`] : []),
    ...(i.gradeError !== undefined ? [`- ${i.instance_id}: ${i.gradeError}`] : []),
  ]);
  if (notes.length > 0) lines.push('Grading notes:', '', ...notes, '');
  return lines.filter((l, i, all) => !(l === '' && all[i - 1] === '')).join('\n');
}

/** predictions.jsonl, report.json and report.md, each replaced atomically. */
export function writeOutputs(out: string, instances: readonly Pick<EvalInstance, 'instance_id'>[], results: Map<string, InstanceResult>): EvalReport {
  const done = instances.flatMap((i) => results.get(i.instance_id) ?? []);
  const predictions = done.map((r) => JSON.stringify({ instance_id: r.instance_id, model_name_or_path: r.model_name_or_path, model_patch: r.model_patch }));
  writeFileAtomic(join(out, 'predictions.jsonl'), predictions.length === 0 ? '' : `${predictions.join('\n')}\n`);
  const report = buildReport(instances, results);
  writeFileAtomic(join(out, 'report.json'), `${JSON.stringify(report, null, 2)}\n`);
  writeFileAtomic(join(out, 'report.md'), renderMarkdown(report, out));
  return report;
}

function readReport(dir: string): EvalReport {
  const file = join(dir, 'report.json');
  if (!existsSync(file)) throw new AciaError('FILE_NOT_FOUND', `${dir} has no report.json (is it an \`acia eval --out\` directory?)`);
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as EvalReport;
  } catch (e) {
    throw new AciaError('JSON_PARSE', `${file} is not valid JSON: ${(e as Error).message}`);
  }
}

/** `acia eval compare a/ b/`: the summary figures and each instance side by side. */
export function compareEvals(a: string, b: string): string {
  const ra = readReport(a);
  const rb = readReport(b);
  // The per-instance files are the truth when present (report.json may be from before a crash).
  const fresh = (dir: string, r: EvalReport) => (readResults(dir).size > 0 ? buildReport(r.instances, readResults(dir)) : r);
  const [x, y] = [fresh(a, ra), fresh(b, rb)];
  const rows: string[][] = [
    ['', a, b],
    ['model', x.models.join(', ') || 'n/a', y.models.join(', ') || 'n/a'],
    ['resolved', `${x.resolved}/${x.total} (${x.resolvedPct}%)`, `${y.resolved}/${y.total} (${y.resolvedPct}%)`],
    ['cost mean', usd(x.costUsd.mean), usd(y.costUsd.mean)],
    ['cost median', usd(x.costUsd.median), usd(y.costUsd.median)],
    ['cost p90', usd(x.costUsd.p90), usd(y.costUsd.p90)],
    ['tokens mean', num(x.tokens.mean, 0), num(y.tokens.mean, 0)],
    ['wall mean (s)', num(x.wallSeconds.mean), num(y.wallSeconds.mean)],
    ['exits', exitsOf(x), exitsOf(y)],
    ['', '', ''],
  ];
  const ids = [...new Set([...x.instances.map((i) => i.instance_id), ...y.instances.map((i) => i.instance_id)])];
  const cell = (r: EvalReport, id: string) => {
    const i = r.instances.find((v) => v.instance_id === id);
    if (!i) return 'absent';
    if (!i.finished) return 'not run';
    return `${i.resolved ? 'resolved' : 'unresolved'} ${i.reason ?? ''} ${usd(i.costUsd)}`;
  };
  for (const id of ids) rows.push([id, cell(x, id), cell(y, id)]);
  const widths = [0, 1, 2].map((c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  return `${rows.map((r) => r.map((v, c) => v.padEnd(widths[c] ?? 0)).join('  ').trimEnd()).join('\n')}\n`;
}

function exitsOf(r: EvalReport): string {
  return Object.entries(r.exits)
    .filter(([, v]) => v > 0)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ') || '-';
}
