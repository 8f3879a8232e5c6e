// Summaries and failure excerpts on real output, captured from the real runners (tests/fixtures/test-output:
// tape 5 with and without nyc 10 (minimist 1.2.8's suite), node 20 --test (spec and TAP reporters),
// vitest 3, jest 29, mocha 10, pytest 7 (Debian's), go 1.19 (Debian's), cargo 1.9x). Each failing sample
// fails one assertion.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { classifyEnvironmentProblem } from '../../../src/core/tools/environment-problem.js';
import { environmentProblem, failureExcerpt } from '../../../src/core/tools/test-failures.js';
import { parseTestSummary } from '../../../src/core/tools/test-summary.js';

const fixture = (name: string): string => readFileSync(join(import.meta.dirname, '../../fixtures/test-output', name), 'utf8');

describe('parseTestSummary on real runner output', () => {
  it.each([
    ['tape-pass.txt', { framework: 'tap', passed: 3, failed: 0 }],
    ['tape-fail.txt', { framework: 'tap', passed: 2, failed: 1 }],
    ['tape-nyc-pass.txt', { framework: 'tap', passed: 153, failed: 0 }],
    ['tape-nyc-fail.txt', { framework: 'tap', passed: 93, failed: 60 }],
    ['node-spec-fail.txt', { framework: 'node', passed: 2, failed: 1 }],
    ['node-tap-fail.txt', { framework: 'node', passed: 2, failed: 1 }],
    ['vitest-fail.txt', { framework: 'vitest', passed: 2, failed: 1 }],
    ['vitest-pass.txt', { framework: 'vitest', passed: 3, failed: 0 }],
    ['jest-fail.txt', { framework: 'jest', passed: 2, failed: 1 }],
    ['jest-pass.txt', { framework: 'jest', passed: 3, failed: 0 }],
    ['mocha-fail.txt', { framework: 'mocha', passed: 2, failed: 1 }],
    ['mocha-pass.txt', { framework: 'mocha', passed: 3, failed: 0 }],
    ['pytest-fail.txt', { framework: 'pytest', passed: 2, failed: 1 }],
    ['pytest-q-fail.txt', { framework: 'pytest', passed: 2, failed: 1 }],
    ['go-v-fail.txt', { framework: 'go', passed: 1, failed: 1, skipped: 1 }],
    // Without -v go names only failures; passes are not counted.
    ['go-fail.txt', { framework: 'go', passed: 0, failed: 1 }],
    ['go-pass.txt', { framework: 'go', passed: 1, failed: 0 }],
    ['cargo-fail.txt', { framework: 'cargo', passed: 2, failed: 1, skipped: 1 }],
    ['bun-fail.txt', { framework: 'bun', passed: 2, failed: 1, skipped: 1 }],
    // pnpm -r test over two vitest packages, each line behind pnpm's `packages/x test: ` prefix.
    ['pnpm-vitest-fail.txt', { framework: 'vitest', passed: 1, failed: 1 }],
  ])('%s', (name, expected) => {
    expect(parseTestSummary(fixture(name))).toEqual(expected);
  });
});

describe('failureExcerpt', () => {
  it('keeps the failed assertion of a long tape+nyc run, not its passing lines and coverage table', () => {
    const out = fixture('tape-nyc-fail.txt');
    expect(out.length).toBeGreaterThan(40_000);
    const ex = failureExcerpt(out, { maxBytes: 6000 });
    expect(Buffer.byteLength(ex)).toBeLessThanOrEqual(6000);
    expect(ex).toContain('not ok 1 should be deeply equivalent');
    expect(ex).toContain('operator: deepEqual');
    expect(ex).toMatch(/expected: \|-/);
    expect(ex).toMatch(/actual: \|-/);
    expect(ex).toContain('# fail  60'); // the tail
    expect(ex).toMatch(/more failure report\(s\)/);
    expect(out.slice(-4000)).not.toContain('not ok 1 '); // the old cut (the last 4,000 characters) lost the first failure
  });

  it.each([
    ['vitest-fail.txt', ['FAIL  t/vi.test.js > parses numbers', '- Expected', '+   "a": "1",', 't/vi.test.js:3:57']],
    ['jest-fail.txt', ['● parses numbers', '-   "a": 1,', 'at Object.toEqual (t/jest.test.js:3:57)']],
    ['mocha-fail.txt', ['1) parse', 'AssertionError [ERR_ASSERTION]', 't/mocha.spec.js:4:39']],
    ['node-spec-fail.txt', ['✖ parses numbers', 'AssertionError', 'node.test.js:3:39']],
    ['go-v-fail.txt', ['--- FAIL: TestCount', 'kv_test.go:13: len(Parse("a=1,b=2")) = 2, want 3']],
    ['cargo-fail.txt', ['---- tests::numbers stdout ----', "thread 'tests::numbers'", 'left: 2', 'right: 3']],
    ['pytest-fail.txt', ['_ test_numbers _', "E       AssertionError: assert {'a': '1', 'b': '2'} == {'a': 1, 'b': 2}", 'FAILED test_lib.py::test_numbers']],
  ])('keeps the failure of %s when the output is padded with passing noise', (name, wanted) => {
    const raw = fixture(name);
    const lines = raw.split('\n');
    // Bury the failure in the middle of a long run, as in a real suite.
    const noise = Array.from({ length: 2000 }, (_, i) => `  ✓ passing test number ${i} (1 ms)`);
    const padded = [...lines.slice(0, 2), ...noise, ...lines.slice(2), ...noise.slice(0, 50), 'done'].join('\n');
    const ex = failureExcerpt(padded, { maxBytes: 6000 });
    expect(Buffer.byteLength(ex)).toBeLessThanOrEqual(6000);
    for (const w of wanted) expect(ex).toContain(w);
  });

  it('keeps the failing assertions of a workspace run with many failing packages, and counts every package', () => {
    // Five packages' vitest runs behind pnpm prefixes, each failing, each with a long list of passing tests
    // before its failures; the assertion is in the last package only, after four reports without one.
    const pkg = (name: string, assertion: boolean) => [
      `packages/${name} test$ vitest run`,
      ...Array.from({ length: 80 }, (_, i) => `packages/${name} test:  ✓ test/t${i}.test.js (3 tests) 2ms`),
      `packages/${name} test:  FAIL  test/${name}.test.js > ${name} loads`,
      `packages/${name} test: Error: Worker exited unexpectedly`,
      ...Array.from({ length: 40 }, (_, i) => `packages/${name} test:     at frame${i} (node:internal/worker:${i})`),
      ...(assertion ? [`packages/${name} test:  FAIL  test/${name}.test.js > parses`, `packages/${name} test: AssertionError: expected 'top-10' to be 'top-ten'`, `packages/${name} test:  ❯ test/${name}.test.js:5:37`] : []),
      `packages/${name} test:       Tests  1 failed | 240 passed (241)`,
    ];
    const out = ['> pnpm -r test', 'Scope: 5 of 6 workspace projects', ...['a', 'b', 'c', 'd'].flatMap((n) => pkg(n, false)), ...pkg('e', true), ' ELIFECYCLE  Test failed.'].join('\n');
    expect(parseTestSummary(out)).toEqual({ framework: 'vitest', passed: 1200, failed: 5 });
    const ex = failureExcerpt(out, { maxBytes: 6000 });
    expect(Buffer.byteLength(ex)).toBeLessThanOrEqual(6000);
    expect(ex).toContain("AssertionError: expected 'top-10' to be 'top-ten'");
    expect(ex).toContain('test/e.test.js:5:37');
    expect(ex).not.toContain('packages/e test:'); // the prefixes are gone
  });

  it("keeps bun's failed assertion with its source line and diff", () => {
    const raw = fixture('bun-fail.txt');
    const noise = Array.from({ length: 1500 }, (_, i) => `(pass) suite > passing test ${i} [0.02ms]`);
    const lines = raw.split('\n');
    const ex = failureExcerpt([...lines.slice(0, 3), ...noise, ...lines.slice(3)].join('\n'), { maxBytes: 4000 });
    for (const w of ['error: expect(received).toEqual(expected)', '(fail) math > fails', 'a.test.ts:4:50', '+     2,']) expect(ex).toContain(w);
  });

  it('returns short output unchanged, without colour codes', () => {
    expect(failureExcerpt('\u001b[31mFAIL\u001b[39m x\n')).toBe('FAIL x\n');
  });
});

describe('classifyEnvironmentProblem', () => {
  const declared = (name: string) => ['@ws/core', 'slugs', 'requests'].includes(name);
  it.each([
    ['pytest usage error (exit 4)', 4, 'ERROR: usage: __main__.py [options] [file_or_dir] [file_or_dir] [...]\n__main__.py: error: unrecognized arguments: --bogus\n', 'test-runner-usage', 'ERROR: usage:'],
    ['pytest with no tests (exit 5)', 5, '============================= test session starts ==============================\ncollected 0 items\n\n============================ no tests ran in 0.01s =============================\n', 'no-tests', 'collected 0 items'],
    ['a declared workspace package that does not resolve', 1, "Error: Cannot find package '@ws/core' imported from /home/u/app/packages/web/index.js\n", 'missing-module', "Cannot find package '@ws/core'"],
    ['a declared Python package at collection', 2, "E   ModuleNotFoundError: No module named 'slugs'\n=========================== short test summary info ============================\nERROR tests/test_x.py\n", 'missing-module', "No module named 'slugs'"],
    ['a write into the read-only dependencies', 1, "Error: EROFS: read-only file system, mkdir '/home/u/app/node_modules/.vite-temp'\n", 'read-only', 'EROFS'],
    ['a registry lookup without network', 1, ' ERR_PNPM_META_FETCH_FAIL  GET https://registry.npmjs.org/pnpm: request to https://registry.npmjs.org/pnpm failed, reason: getaddrinfo EAI_AGAIN registry.npmjs.org\n', 'network', 'EAI_AGAIN'],
    ['a missing interpreter', 127, "/bin/sh: 1: .venv/bin/python: not found\n", 'missing-program', '.venv/bin/python: not found'],
    ['a venv whose base interpreter moved', 126, '/bin/sh: 1: .venv/bin/python: bad interpreter: No such file or directory\n', 'missing-program', 'bad interpreter'],
  ])('%s', (_, exit, output, kind, shows) => {
    const p = classifyEnvironmentProblem(exit, output, { isDeclared: declared });
    expect(p?.kind).toBe(kind);
    expect(p?.line).toContain(shows);
    expect(p?.advice).toMatch(/--test-command|setup|allowedHosts|install|read-only/);
  });

  it('leaves code failures to the fix loop: an undeclared module, an assertion, a submodule the code misnamed', () => {
    const declaredOnly = { isDeclared: (n: string) => n === 'slugs' };
    expect(classifyEnvironmentProblem(1, "Error: Cannot find module './helpers' from test/a.test.js\n", declaredOnly)).toBeNull();
    expect(classifyEnvironmentProblem(1, "Error: Cannot find module 'lodash'\n", declaredOnly)).toBeNull();
    expect(classifyEnvironmentProblem(2, "E   ModuleNotFoundError: No module named 'helpers'\n", declaredOnly)).toBeNull();
    expect(classifyEnvironmentProblem(1, fixture('vitest-fail.txt'), declaredOnly)).toBeNull();
    expect(classifyEnvironmentProblem(1, fixture('pytest-fail.txt'), declaredOnly)).toBeNull();
  });
});

describe('environmentProblem', () => {
  it('names the missing program of an exit 127', () => {
    const out = '\n> minimist@1.2.8 lint\n> eslint --ext=js,mjs .\n\nsh: 1: eslint: not found\n';
    expect(environmentProblem(127, out)).toBe('sh: 1: eslint: not found');
    expect(environmentProblem(127, '')).toMatch(/exit 127/);
  });
  it('recognises a missing pytest and a missing npm script, and nothing in an ordinary failure', () => {
    expect(environmentProblem(1, '/usr/bin/python3: No module named pytest\n')).toBe('/usr/bin/python3: No module named pytest');
    expect(environmentProblem(1, 'npm error Missing script: "test"\n')).toBe('npm error Missing script: "test"');
    expect(environmentProblem(1, fixture('tape-fail.txt'))).toBeNull();
    expect(environmentProblem(1, fixture('pytest-fail.txt'))).toBeNull();
    expect(environmentProblem(0, 'sh: 1: x: not found')).toBeNull();
  });
});
