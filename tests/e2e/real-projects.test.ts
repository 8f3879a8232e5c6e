// Real projects under the DEFAULT sandbox, through the built CLI (issue 12): minimist 1.2.8 (tape + nyc,
// its own suite, devDependencies installed with npm), ms 2.1.3 with a vitest suite, and a Python project
// with a .venv and pytest. For each: a good change succeeds and its run branch passes its tests; a broken
// first attempt is fixed, the fix task having been shown the failing assertion; nothing under
// node_modules / .venv changes, and no test byproduct reaches the run branch.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { LedgerEntry } from '../../src/core/ledger/entry.js';
import { linkDependencies } from '../../src/core/sandbox/deps.js';
import { sandboxAvailable } from '../helpers/sandbox-available.js';
import { git, ledgerOf, tempDir } from './helpers.js';
import { blobText, brokenThenFixedScript, cached, devThenQa, goodScript, makeRepo, npmInstall, npmUnpack, runWithScript, treeDigest } from './real-projects/harness.js';

interface Project {
  name: string;
  /** Where installed dependencies live in the checkout (untracked). */
  deps: string;
  repo: () => string;
  testFile: string;
  good: string;
  broken: string;
  fixed: string;
  /** Words of the failing assertion the fix task must be shown. */
  failureShows: RegExp[];
  /** Runs the suite on a checked-out run branch outside ACIA; exit 0 when it passes. */
  suiteOn: (wt: string, repo: string) => number;
  env?: Record<string, string>;
  /** The environment of the broken-first run (default: env). */
  brokenEnv?: Record<string, string>;
}

/** Each test makes one `acia run` with real test runs in the sandbox (seconds each on 2 cores). */
const RUN_TIMEOUT_MS = 240_000;

const BYPRODUCTS = /(^|\/)(node_modules|\.venv|\.nyc_output|coverage|__pycache__|\.pytest_cache)(\/|$)/;

function runIdsOf(repo: string): string[] {
  return execFileSync('ls', [join(repo, '.acia', 'runs')], { encoding: 'utf8' }).split('\n').filter((l) => l !== '');
}

/**
 * The run branch checked out in a throwaway worktree, with the checkout's dependencies linked in the way
 * ACIA links them (so a runner's cache, e.g. vitest's node_modules/.vite, lands in the worktree).
 */
function suitePasses(p: Project, repo: string, branch: string): number {
  const wt = join(tempDir('branch'), 'wt');
  git(repo, 'worktree', 'add', '-q', '--detach', wt, branch);
  linkDependencies(repo, wt);
  try {
    return p.suiteOn(wt, repo);
  } finally {
    git(repo, 'worktree', 'remove', '--force', wt);
  }
}

function entriesOfType(entries: LedgerEntry[], type: string): Array<Record<string, unknown>> {
  return entries.filter((e) => e.type === type).map((e) => e.data as Record<string, unknown>);
}

/** Skips with the reason; CI (.ci/run sets ACIA_TEST_REQUIRE_REAL_PROJECTS=1) has the registry, so there it fails. */
function skipUnless(name: string, why: string | null, ctx: { skip: () => void }): void {
  if (why === null) return;
  if (process.env.ACIA_TEST_REQUIRE_REAL_PROJECTS === '1') throw new Error(`ACIA_TEST_REQUIRE_REAL_PROJECTS=1 but ${name} cannot run: ${why}`);
  console.warn(`SKIPPED ${name}: ${why}`);
  ctx.skip();
}

function projectSuite(p: Project, unavailable: () => string | null): void {
  describe.skipIf(!sandboxAvailable())(`${p.name} (default sandbox)`, () => {
    let repo = '';
    let before = { files: 0, digest: '' };
    beforeAll(() => {
      if (unavailable() !== null) return;
      repo = p.repo();
      before = treeDigest(join(repo, p.deps));
    });

    it('a good change succeeds and its run branch passes its tests', async (ctx) => {
      skipUnless(p.name, unavailable(), ctx);
      const r = await runWithScript(repo, `Add a test in ${p.testFile}`, goodScript(devThenQa(`Write ${p.testFile}.`, [p.testFile]), p.testFile, p.good), p.env);
      expect(r.code, r.stderr).toBe(0);
      const runId = runIdsOf(repo).at(-1)!;
      const entries = ledgerOf(repo, runId);
      const v = entriesOfType(entries, 'VERIFICATION').find((d) => d.source === 'qa_run')!;
      expect(v, r.stderr).toMatchObject({ passed: true, exitCode: 0, failedCount: 0 });
      expect(v.passedCount).toBeGreaterThan(0);
      const files = git(repo, 'diff', '--name-only', 'main', `acia/${runId}`).split('\n');
      expect(files).toEqual([p.testFile]);
      expect(git(repo, 'ls-tree', '-r', '--name-only', `acia/${runId}`).split('\n').filter((f) => BYPRODUCTS.test(f))).toEqual([]);
      expect(suitePasses(p, repo, `acia/${runId}`)).toBe(0);
      expect(treeDigest(join(repo, p.deps))).toEqual(before);
    }, RUN_TIMEOUT_MS);

    it('a broken first attempt is fixed, with the failing assertion shown to the fix task', async (ctx) => {
      skipUnless(p.name, unavailable(), ctx);
      const file = p.testFile.replace(/^(.*\/[^./]+)(\..*)$/, '$1_second$2');
      const r = await runWithScript(repo, `Add a test in ${file}`, brokenThenFixedScript(devThenQa(`Write ${file}.`, [file]), file, p.broken, p.fixed), p.brokenEnv ?? p.env);
      expect(r.code, r.stderr).toBe(0);
      const runId = runIdsOf(repo).at(-1)!;
      const entries = ledgerOf(repo, runId);
      const verdicts = entriesOfType(entries, 'VERIFICATION').filter((d) => d.source === 'qa_run');
      expect(verdicts.map((d) => d.passed)).toEqual([false, true]);
      expect(verdicts[0]!.failedCount).toBeGreaterThan(0);
      // The fix task's input, and the model request its agent made, hold the failing assertion.
      const fix = entriesOfType(entries, 'TASK_ADDED').find((d) => d.reason === 'fix')!;
      const failure = (fix.task as { input: { failure: string } }).input.failure;
      for (const re of p.failureShows) expect(failure, failure).toMatch(re);
      const call = entries.find((e) => e.type === 'LLM_CALL' && (e.data as { caller: string }).caller === 'dev:t2-fix1')!;
      const request = blobText(repo, runId, (call.data as { requestHash: string }).requestHash);
      for (const re of p.failureShows) expect(request).toMatch(re);
      // The wiki's run page shows the failure the fix task was given.
      const page = readFileSync(join(repo, '.acia', 'wiki', 'runs', `${runId}.md`), 'utf8');
      expect(page).toContain('## Failures given to fix tasks');
      expect(page).toMatch(p.failureShows[0]!);
      // The progress line named the failure counts.
      expect(r.stderr).toMatch(/t2 verification FAILED \(qa_run: .*, exit [1-9]\d*, \d+ passed, [1-9]\d* failed\)/);
      expect(git(repo, 'ls-tree', '-r', '--name-only', `acia/${runId}`).split('\n').filter((f) => BYPRODUCTS.test(f))).toEqual([]);
      expect(suitePasses(p, repo, `acia/${runId}`)).toBe(0);
      expect(treeDigest(join(repo, p.deps))).toEqual(before);
      // The user's checkout is as it was.
      expect(git(repo, 'status', '--porcelain')).toBe('');
    }, RUN_TIMEOUT_MS);
  });
}

// ---- (a) minimist 1.2.8: tape + nyc + eslint, devDependencies from the registry ----
let minimistWhy: string | null = null;
let minimistDir = '';
const minimist = cached('minimist-1.2.8', (dir) => {
  npmUnpack('minimist@1.2.8', dir);
  npmInstall(dir);
});
if ('unavailable' in minimist) minimistWhy = minimist.unavailable;
else minimistDir = minimist.dir;

const tapeTest = (expected: string) => `'use strict';

var parse = require('../');
var test = require('tape');

test('numbers after short and long flags', function (t) {
\tt.deepEqual(parse(['-n', '5', '--x', '3']), { _: [], n: 5, x: ${expected} });
\tt.end();
});
`;

projectSuite(
  {
    name: 'minimist 1.2.8 (tape + nyc)',
    deps: 'node_modules',
    repo: () => makeRepo('minimist', minimistDir, { gitignore: 'node_modules/\n', ignored: ['node_modules'] }),
    testFile: 'test/acia_numbers.js',
    good: tapeTest('3'),
    broken: tapeTest("'3'"),
    fixed: tapeTest('3'),
    failureShows: [/not ok \d+ should be deeply equivalent/, /operator: deepEqual/, /expected: \|-/, /x: '3'/],
    suiteOn: (wt) => spawnSync('node_modules/.bin/tape', ['test/**/*.js'], { cwd: wt }).status ?? 1,
    // `npm test` also runs `aud` (an online audit) after the tests: no network in the sandbox, so lint + tests.
    env: { ACIA_TEST_COMMAND: 'npm run lint && npm run tests-only' },
    brokenEnv: { ACIA_TEST_COMMAND: 'npm run tests-only' },
  },
  () => minimistWhy,
);

// ---- (b) ms 2.1.3 with a vitest suite ----
let msWhy: string | null = null;
let msDir = '';
const ms = cached('ms-2.1.3-vitest-3.2.4', (dir) => {
  npmUnpack('ms@2.1.3', dir);
  // The published package has no tests: a vitest suite for it, and vitest from the registry.
  const pkg = JSON.parse(execFileSync('cat', [join(dir, 'package.json')], { encoding: 'utf8' })) as Record<string, unknown>;
  pkg.scripts = { test: 'vitest run' };
  pkg.devDependencies = { vitest: '3.2.4' };
  delete pkg.eslintConfig;
  delete pkg['lint-staged'];
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
  mkdirSync(join(dir, 'test'), { recursive: true });
  writeFileSync(
    join(dir, 'test', 'ms.test.js'),
    `import { describe, expect, it } from 'vitest';\nimport ms from '../index.js';\n\ndescribe('ms', () => {\n  it('parses', () => {\n    expect(ms('2h')).toBe(7200000);\n    expect(ms('1d')).toBe(86400000);\n  });\n  it('formats', () => {\n    expect(ms(60000)).toBe('1m');\n    expect(ms(2 * 60000, { long: true })).toBe('2 minutes');\n  });\n});\n`,
  );
  npmInstall(dir);
});
if ('unavailable' in ms) msWhy = ms.unavailable;
else msDir = ms.dir;

const vitestTest = (expected: string) => `import { expect, it } from 'vitest';
import ms from '../index.js';

it('round-trips a week', () => {
  expect(ms(ms('1w'), { long: true })).toBe(${expected});
});
`;

projectSuite(
  {
    name: 'ms 2.1.3 (vitest)',
    deps: 'node_modules',
    repo: () => makeRepo('ms', msDir, { gitignore: 'node_modules/\n', ignored: ['node_modules'] }),
    testFile: 'test/week.test.js',
    good: vitestTest("'7 days'"),
    broken: vitestTest("'1 week'"),
    fixed: vitestTest("'7 days'"),
    failureShows: [/FAIL\s+test\/week_second\.test\.js/, /expected '7 days' to be '1 week'/, /week_second\.test\.js:5/],
    suiteOn: (wt) => spawnSync('node_modules/.bin/vitest', ['run'], { cwd: wt }).status ?? 1,
  },
  () => msWhy,
);

// ---- (c) Python: a .venv (Debian's python3 with its system pytest) and pytest ----
function pythonWhy(): string | null {
  const r = spawnSync('/usr/bin/python3', ['-c', 'import pytest, venv'], { encoding: 'utf8' });
  return r.status === 0 ? null : 'needs Debian python3-pytest and python3-venv (/usr/bin/python3 -c "import pytest, venv" failed)';
}

function pythonRepo(): string {
  const src = join(tempDir('py-src'), 'p');
  mkdirSync(join(src, 'slugs'), { recursive: true });
  mkdirSync(join(src, 'tests'), { recursive: true });
  writeFileSync(join(src, 'pyproject.toml'), '[project]\nname = "slugs"\nversion = "0.1.0"\n\n[tool.pytest.ini_options]\npythonpath = ["."]\n');
  writeFileSync(join(src, 'slugs', '__init__.py'), 'import re\n\n\ndef slugify(text):\n    """Lower-case words joined by hyphens."""\n    return "-".join(re.findall(r"[a-z0-9]+", text.lower()))\n');
  writeFileSync(join(src, 'tests', 'test_slugify.py'), 'from slugs import slugify\n\n\ndef test_words():\n    assert slugify("Hello, World") == "hello-world"\n');
  execFileSync('/usr/bin/python3', ['-m', 'venv', '--system-site-packages', '--without-pip', join(src, '.venv')]);
  return makeRepo('python', src, { gitignore: '.venv/\n', ignored: ['.venv'] });
}

const pyTest = (expected: string) => `from slugs import slugify


def test_numbers_are_kept():
    assert slugify("Top 10 Tips") == ${expected}
`;

projectSuite(
  {
    name: 'python (.venv + pytest)',
    deps: '.venv',
    repo: pythonRepo,
    testFile: 'tests/test_numbers.py',
    good: pyTest('"top-10-tips"'),
    broken: pyTest('"top-tips"'),
    fixed: pyTest('"top-10-tips"'),
    failureShows: [/_+ test_numbers_are_kept _+/, /E\s+AssertionError: assert 'top-10-tips' == 'top-tips'/, /FAILED tests\/test_numbers_second\.py::test_numbers_are_kept/],
    suiteOn: (wt) => spawnSync(join(wt, '.venv', 'bin', 'python'), ['-m', 'pytest', '-q', '-p', 'no:cacheprovider'], { cwd: wt, env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' } }).status ?? 1,
    env: { ACIA_TEST_COMMAND: '.venv/bin/python -m pytest' },
  },
  pythonWhy,
);
