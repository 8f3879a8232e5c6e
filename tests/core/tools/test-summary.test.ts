import { describe, expect, it } from 'vitest';
import { parseTestSummary } from '../../../src/core/tools/test-summary.js';

describe('parseTestSummary', () => {
  it('parses vitest', () => {
    const out = ` ❯ tests/a.test.ts (3 tests | 1 failed) 12ms\n\n Test Files  1 failed | 2 passed (3)\n      Tests  1 failed | 10 passed | 2 skipped (13)\n   Start at  10:00:00\n`;
    expect(parseTestSummary(out)).toEqual({ framework: 'vitest', passed: 10, failed: 1, skipped: 2 });
  });
  it('parses vitest with ANSI colours', () => {
    const out = '\u001b[2m      Tests \u001b[22m \u001b[1m\u001b[32m12 passed\u001b[39m\u001b[22m\u001b[90m (12)\u001b[39m\n';
    expect(parseTestSummary(out)).toEqual({ framework: 'vitest', passed: 12, failed: 0 });
  });
  it('parses jest', () => {
    const out = `FAIL src/sum.test.js\n  ● sum › adds\n\nTest Suites: 1 failed, 3 passed, 4 total\nTests:       2 failed, 1 skipped, 17 passed, 20 total\nSnapshots:   0 total\nTime:        1.2 s\n`;
    expect(parseTestSummary(out)).toEqual({ framework: 'jest', passed: 17, failed: 2, skipped: 1 });
  });
  it('parses node --test (spec reporter and TAP)', () => {
    const spec = `✔ adds (0.5ms)\n✖ subtracts (1.1ms)\nℹ tests 5\nℹ suites 0\nℹ pass 4\nℹ fail 1\nℹ cancelled 0\nℹ skipped 0\nℹ todo 0\nℹ duration_ms 45.2\n`;
    expect(parseTestSummary(spec)).toEqual({ framework: 'node', passed: 4, failed: 1 });
    const tap = `TAP version 13\n# Subtest: a\nok 1 - a\n1..3\n# tests 3\n# suites 0\n# pass 2\n# fail 0\n# cancelled 0\n# skipped 1\n`;
    expect(parseTestSummary(tap)).toEqual({ framework: 'node', passed: 2, failed: 0, skipped: 1 });
  });
  it('parses pytest, counting errors as failures', () => {
    const out = `collected 14 items\n\ntests/test_a.py ..F.s\n\n=========================== short test summary info ============================\nFAILED tests/test_a.py::test_x - assert 1 == 2\n============= 1 failed, 11 passed, 1 skipped, 1 error in 0.42s =============\n`;
    expect(parseTestSummary(out)).toEqual({ framework: 'pytest', passed: 11, failed: 2, skipped: 1 });
  });
  it('parses go test -v and package-only output', () => {
    const v = `=== RUN   TestAdd\n--- PASS: TestAdd (0.00s)\n=== RUN   TestSub\n--- FAIL: TestSub (0.00s)\n    sub_test.go:9: got 1\n=== RUN   TestMul\n--- SKIP: TestMul (0.00s)\nFAIL\nFAIL\texample.com/m\t0.003s\n`;
    expect(parseTestSummary(v)).toEqual({ framework: 'go', passed: 1, failed: 1, skipped: 1 });
    const quiet = `ok  \texample.com/m/a\t0.002s\nFAIL\texample.com/m/b\t0.004s\n`;
    expect(parseTestSummary(quiet)).toEqual({ framework: 'go', passed: 1, failed: 1 });
  });
  it('parses cargo test, summing every test binary', () => {
    const out = `running 3 tests\ntest a ... ok\ntest b ... FAILED\ntest c ... ignored\n\ntest result: FAILED. 1 passed; 1 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.01s\n\n   Doc-tests m\n\nrunning 2 tests\ntest result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.20s\n`;
    expect(parseTestSummary(out)).toEqual({ framework: 'cargo', passed: 3, failed: 1, skipped: 1 });
  });
  it('returns null for output it does not recognise', () => {
    expect(parseTestSummary('make: *** [all] Error 1')).toBeNull();
  });
});
