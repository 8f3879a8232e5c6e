// Parsers for test-runner summaries: vitest, jest, node --test, pytest, go test, cargo test -> counts.

export interface TestSummary {
  framework: 'vitest' | 'jest' | 'node' | 'pytest' | 'go' | 'cargo';
  passed: number;
  failed: number;
  skipped?: number;
}

// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*[A-Za-z]/g;

/** The first parser that recognises the output wins; null when none does (the exit code still decides). */
export function parseTestSummary(rawOutput: string): TestSummary | null {
  const out = rawOutput.replace(ANSI, '');
  return parseVitest(out) ?? parseJest(out) ?? parseNodeTest(out) ?? parsePytest(out) ?? parseCargo(out) ?? parseGo(out);
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

/** node --test: spec reporter `ℹ pass 4` / TAP `# pass 4`. */
export function parseNodeTest(out: string): TestSummary | null {
  const pass = /^(?:ℹ|#) pass (\d+)\s*$/m.exec(out);
  const fail = /^(?:ℹ|#) fail (\d+)\s*$/m.exec(out);
  if (!pass || !fail) return null;
  const skipped = count(out, /^(?:ℹ|#) skipped (\d+)\s*$/m) + count(out, /^(?:ℹ|#) todo (\d+)\s*$/m);
  return { framework: 'node', passed: Number(pass[1]), failed: Number(fail[1]), ...(skipped ? { skipped } : {}) };
}

/** `==== 2 failed, 10 passed, 1 skipped in 0.12s ====` (errors count as failed). */
export function parsePytest(out: string): TestSummary | null {
  const lines = [...out.matchAll(/^=+ (.*\b(?:passed|failed|error|errors|skipped|no tests ran)\b.*) in [\d.]+s(?: \([^)]*\))? =+\s*$/gm)];
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
    const okPkgs = (out.match(/^ok\s+\S+/gm) ?? []).length;
    const failPkgs = (out.match(/^FAIL\s+\S+\s/gm) ?? []).length;
    if (okPkgs + failPkgs === 0) return null;
    return { framework: 'go', passed: okPkgs, failed: failPkgs };
  }
  return { framework: 'go', passed, failed, ...(skipped ? { skipped } : {}) };
}
