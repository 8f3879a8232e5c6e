// Parsers for test-runner summaries: vitest, jest, mocha, node --test, TAP (tape, tap), bun test, pytest,
// go test, cargo test -> counts. Each parser keys on its runner's own summary lines; the fixtures in
// tests/fixtures/test-output are real runs of each. A workspace run (`pnpm -r test`, `npm test
// --workspaces`, `yarn workspaces foreach`) prints one summary per package, often behind a per-line
// prefix: the prefixes are stripped and every package's summary counted.
import { stripWorkspacePrefixes } from './workspace-output.js';

export interface TestSummary {
  framework: 'vitest' | 'jest' | 'mocha' | 'node' | 'tap' | 'bun' | 'pytest' | 'go' | 'cargo';
  passed: number;
  failed: number;
  skipped?: number;
}

// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*[A-Za-z]/g;

/** Runners whose summary lines cannot be mistaken for another's: counted too when packages mix runners. */
const DISTINCT: ReadonlyArray<(out: string) => TestSummary | null> = [parseVitest, parseJest, parseMocha, parseBun];

/**
 * The first parser that recognises the output decides the framework; null when none does (the exit code
 * still decides). Packages of a workspace that use another runner with distinct summary lines add theirs.
 */
export function parseTestSummary(rawOutput: string): TestSummary | null {
  const out = stripWorkspacePrefixes(rawOutput.replace(ANSI, ''));
  // TAP before go: TAP's `ok 1 name` lines look like go's `ok  pkg` package lines.
  const first = parseVitest(out) ?? parseJest(out) ?? parseMocha(out) ?? parseBun(out) ?? parseNodeTest(out) ?? parseTap(out) ?? parsePytest(out) ?? parseCargo(out) ?? parseGo(out);
  if (first === null) return null;
  const total = { ...first };
  for (const parse of DISTINCT) {
    const other = parse(out);
    if (other === null || other.framework === first.framework) continue;
    total.passed += other.passed;
    total.failed += other.failed;
    if (other.skipped) total.skipped = (total.skipped ?? 0) + other.skipped;
  }
  return total;
}

function count(text: string, re: RegExp): number {
  const m = re.exec(text);
  return m?.[1] ? Number(m[1]) : 0;
}

/** The sum over every match of `re` (global) of its first group. */
function sumAll(text: string, re: RegExp): number {
  let n = 0;
  for (const m of text.matchAll(re)) n += Number(m[1] ?? 0);
  return n;
}

/** Counts from summary lines, one per package: `(\d+) passed` etc. summed over `lines`. */
function fromLines(framework: TestSummary['framework'], lines: string[]): TestSummary | null {
  if (lines.length === 0) return null;
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  for (const line of lines) {
    passed += count(line, /(\d+) passed/);
    failed += count(line, /(\d+) failed/);
    skipped += count(line, /(\d+) skipped/) + count(line, /(\d+) todo/);
  }
  return { framework, passed, failed, ...(skipped ? { skipped } : {}) };
}

/** `Tests  2 failed | 10 passed | 1 skipped (13)`, once per vitest process (a workspace run prints several). */
export function parseVitest(out: string): TestSummary | null {
  return fromLines('vitest', [...out.matchAll(/^\s*Tests\s{2,}(.+\(\d+\))\s*$/gm)].map((m) => m[1]!));
}

/** `Tests:       1 failed, 1 skipped, 10 passed, 12 total`, once per jest process. */
export function parseJest(out: string): TestSummary | null {
  return fromLines('jest', [...out.matchAll(/^Tests:\s+(.+total)\s*$/gm)].map((m) => m[1]!));
}

/** mocha's spec reporter: `  2 passing (12ms)`, `  1 failing`, `  1 pending`, once per mocha process. */
export function parseMocha(out: string): TestSummary | null {
  const passing = /^\s*(\d+) passing \(\d+(?:\.\d+)?m?s\)\s*$/gm;
  if (!/^\s*\d+ passing \(/m.test(out)) return null;
  const skipped = sumAll(out, /^\s*(\d+) pending\s*$/gm);
  return { framework: 'mocha', passed: sumAll(out, passing), failed: sumAll(out, /^\s*(\d+) failing\s*$/gm), ...(skipped ? { skipped } : {}) };
}

/** bun test: ` 2 pass`, ` 1 skip`, ` 1 fail` above `Ran 4 tests across 2 files.`, once per bun process. */
export function parseBun(out: string): TestSummary | null {
  if (!/^Ran \d+ tests? across \d+ files?\./m.test(out)) return null;
  const skipped = sumAll(out, /^\s*(\d+) skip\s*$/gm) + sumAll(out, /^\s*(\d+) todo\s*$/gm);
  return { framework: 'bun', passed: sumAll(out, /^\s*(\d+) pass\s*$/gm), failed: sumAll(out, /^\s*(\d+) fail\s*$/gm), ...(skipped ? { skipped } : {}) };
}

/**
 * node --test: the spec reporter's `ℹ pass 4` lines, or its TAP reporter (the default when stdout is not a
 * terminal), told from other TAP producers by node's own `# Subtest:`, `# suites` and `# cancelled` lines.
 */
export function parseNodeTest(out: string): TestSummary | null {
  const spec = /^ℹ pass (\d+)\s*$/m.exec(out);
  const nodeTap = /^# (?:Subtest: |suites \d|cancelled \d)/m.test(out);
  if (!spec && !nodeTap) return null;
  const mark = spec ? 'ℹ' : '#';
  const n = (name: string): number => sumAll(out, new RegExp(`^${mark} ${name} (\\d+)\\s*$`, 'gm'));
  if (!new RegExp(`^${mark} pass \\d+\\s*$`, 'm').test(out)) return null;
  const failed = n('fail') + n('cancelled');
  const skipped = n('skipped') + n('todo');
  return { framework: 'node', passed: n('pass'), failed, ...(skipped ? { skipped } : {}) };
}

/**
 * TAP (tape, tap, any producer): the `# pass  N` / `# fail  N` trailer (tape pads with two spaces and
 * leaves `# fail` out when nothing failed), else the `ok` / `not ok` lines under a `1..N` plan.
 */
export function parseTap(out: string): TestSummary | null {
  const hasPlan = /^\s*1\.\.\d+\s*$/m.test(out) || /^TAP version \d+/m.test(out);
  if (!hasPlan) return null;
  // One trailer per tape process: a workspace run has one per package.
  const skipped = sumAll(out, /^# skip\s+(\d+)\s*$/gm) + sumAll(out, /^# todo\s+(\d+)\s*$/gm);
  if (/^# pass\s+\d+\s*$/m.test(out)) return { framework: 'tap', passed: sumAll(out, /^# pass\s+(\d+)\s*$/gm), failed: sumAll(out, /^# fail\s+(\d+)\s*$/gm), ...(skipped ? { skipped } : {}) };
  // Top-level test points only (subtests are indented).
  const notOk = (out.match(/^not ok \d+/gm) ?? []).length;
  const ok = (out.match(/^ok \d+/gm) ?? []).length;
  if (ok + notOk === 0) return null;
  return { framework: 'tap', passed: ok, failed: notOk };
}

/** `==== 2 failed, 10 passed, 1 skipped in 0.12s ====`, or without the rules under -q (errors count as failed). */
export function parsePytest(out: string): TestSummary | null {
  const lines = [...out.matchAll(/^(?:=+ )?((?:\d+ (?:passed|failed|errors?|skipped|xfailed|xpassed|deselected|warnings?)(?:, )?)+|no tests ran) in [\d.]+s(?: \([^)]*\))?(?: =+)?\s*$/gm)];
  const line = lines[lines.length - 1]?.[1];
  if (line === undefined) return null;
  const failed = count(line, /(\d+) failed/) + count(line, /(\d+) errors?/);
  const skipped = count(line, /(\d+) skipped/) + count(line, /(\d+) xfailed/);
  return { framework: 'pytest', passed: count(line, /(\d+) passed/), failed, ...(skipped ? { skipped } : {}) };
}

/** `test result: FAILED. 3 passed; 1 failed; 2 ignored; ...`, summed over every test binary. */
export function parseCargo(out: string): TestSummary | null {
  const lines = [...out.matchAll(/^test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored/gm)];
  if (lines.length === 0) return null;
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  for (const m of lines) {
    passed += Number(m[1]);
    failed += Number(m[2]);
    skipped += Number(m[3]);
  }
  return { framework: 'cargo', passed, failed, ...(skipped ? { skipped } : {}) };
}

/** go test -v: `--- PASS: TestX`, `--- FAIL: TestY`, `--- SKIP: TestZ` (subtests included). */
export function parseGo(out: string): TestSummary | null {
  const passed = (out.match(/^\s*--- PASS: /gm) ?? []).length;
  const failed = (out.match(/^\s*--- FAIL: /gm) ?? []).length;
  const skipped = (out.match(/^\s*--- SKIP: /gm) ?? []).length;
  if (passed + failed + skipped === 0) {
    // Without -v go prints only package lines: count packages.
    const okPkgs = (out.match(/^ok\s+\S+\s+(?:[\d.]+s|\(cached\))/gm) ?? []).length;
    const failPkgs = (out.match(/^FAIL\s+\S+\s+(?:[\d.]+s|\[)/gm) ?? []).length;
    if (okPkgs + failPkgs === 0) return null;
    return { framework: 'go', passed: okPkgs, failed: failPkgs };
  }
  return { framework: 'go', passed, failed, ...(skipped ? { skipped } : {}) };
}
