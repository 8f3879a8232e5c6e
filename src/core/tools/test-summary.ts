// Parsers for test-runner summaries: vitest, jest, mocha, node --test, TAP (tape, tap), pytest, go test,
// cargo test -> counts. Each parser keys on its runner's own summary lines; the fixtures in
// tests/fixtures/test-output are real runs of each.

export interface TestSummary {
  framework: 'vitest' | 'jest' | 'mocha' | 'node' | 'tap' | 'pytest' | 'go' | 'cargo';
  passed: number;
  failed: number;
  skipped?: number;
}

// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*[A-Za-z]/g;

/** The first parser that recognises the output wins; null when none does (the exit code still decides). */
export function parseTestSummary(rawOutput: string): TestSummary | null {
  const out = rawOutput.replace(ANSI, '');
  // TAP before go: TAP's `ok 1 name` lines look like go's `ok  pkg` package lines.
  return parseVitest(out) ?? parseJest(out) ?? parseMocha(out) ?? parseNodeTest(out) ?? parseTap(out) ?? parsePytest(out) ?? parseCargo(out) ?? parseGo(out);
}

function count(text: string, re: RegExp): number {
  const m = re.exec(text);
  return m?.[1] ? Number(m[1]) : 0;
}

/** `Tests  2 failed | 10 passed | 1 skipped (13)` (the last such line: watch mode may print several). */
export function parseVitest(out: string): TestSummary | null {
  const lines = [...out.matchAll(/^\s*Tests\s{2,}(.+\(\d+\))\s*$/gm)];
  const line = lines[lines.length - 1]?.[1];
  if (line === undefined) return null;
  const skipped = count(line, /(\d+) skipped/) + count(line, /(\d+) todo/);
  return { framework: 'vitest', passed: count(line, /(\d+) passed/), failed: count(line, /(\d+) failed/), ...(skipped ? { skipped } : {}) };
}

/** `Tests:       1 failed, 1 skipped, 10 passed, 12 total` */
export function parseJest(out: string): TestSummary | null {
  const m = /^Tests:\s+(.+total)\s*$/m.exec(out);
  if (!m?.[1]) return null;
  const line = m[1];
  const skipped = count(line, /(\d+) skipped/) + count(line, /(\d+) todo/);
  return { framework: 'jest', passed: count(line, /(\d+) passed/), failed: count(line, /(\d+) failed/), ...(skipped ? { skipped } : {}) };
}

/** mocha's spec reporter: `  2 passing (12ms)`, `  1 failing`, `  1 pending`. */
export function parseMocha(out: string): TestSummary | null {
  const pass = /^\s*(\d+) passing \(\d+(?:\.\d+)?m?s\)\s*$/m.exec(out);
  if (!pass) return null;
  const skipped = count(out, /^\s*(\d+) pending\s*$/m);
  return { framework: 'mocha', passed: Number(pass[1]), failed: count(out, /^\s*(\d+) failing\s*$/m), ...(skipped ? { skipped } : {}) };
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
  const pass = new RegExp(`^${mark} pass (\\d+)\\s*$`, 'm').exec(out);
  if (!pass) return null;
  const n = (name: string): number => count(out, new RegExp(`^${mark} ${name} (\\d+)\\s*$`, 'm'));
  const failed = n('fail') + n('cancelled');
  const skipped = n('skipped') + n('todo');
  return { framework: 'node', passed: Number(pass[1]), failed, ...(skipped ? { skipped } : {}) };
}

/**
 * TAP (tape, tap, any producer): the `# pass  N` / `# fail  N` trailer (tape pads with two spaces and
 * leaves `# fail` out when nothing failed), else the `ok` / `not ok` lines under a `1..N` plan.
 */
export function parseTap(out: string): TestSummary | null {
  const hasPlan = /^\s*1\.\.\d+\s*$/m.test(out) || /^TAP version \d+/m.test(out);
  if (!hasPlan) return null;
  const pass = /^# pass\s+(\d+)\s*$/m.exec(out);
  const skipped = count(out, /^# skip\s+(\d+)\s*$/m) + count(out, /^# todo\s+(\d+)\s*$/m);
  if (pass) return { framework: 'tap', passed: Number(pass[1]), failed: count(out, /^# fail\s+(\d+)\s*$/m), ...(skipped ? { skipped } : {}) };
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
