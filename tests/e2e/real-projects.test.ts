// Real projects of every common layout under the DEFAULT sandbox, through the built CLI with the real
// Anthropic SDK against the fake server (issues 12 and 28): npm flat, npm and pnpm workspaces whose
// packages depend on each other, Yarn 1, Yarn 4 Plug'n'Play with its cache in the home, Bun, a Python
// .venv holding a test-only dependency, a src/ layout with an editable install, and Poetry with an
// in-project .venv (tests/e2e/real-projects/projects.ts says how each is built and installed).
//
// One run per project, as lean as the suite's time allows: the scripted Dev's first attempt (a change and
// a test with a wrong expectation) fails QA on the detected test command, the fix task is given the failing
// assertion and repairs it, and the re-verification passes, so the run also proves a good change succeeds.
// Where the project has packages, the change is in one package and the test in another (or the change is
// in src/ of an editable install): it passes only if the environment resolves into the task's tree. Then:
// the summary counted every package, nothing installed in the checkout changed, no test byproduct reached
// the branch, and the project's own test command passes on the run branch, checked out as the user would.
import { execFileSync, spawnSync } from 'node:child_process';
import { lstatSync, readdirSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LedgerEntry } from '../../src/core/ledger/entry.js';
import { sandboxAvailable } from '../helpers/sandbox-available.js';
import { git, ledgerOf } from './helpers.js';
import { blobText, brokenThenFixed, devThenQa, runWithScript, treeDigest } from './real-projects/harness.js';
import { MATRIX, type MatrixProject } from './real-projects/projects.js';
import { toolHome, type ToolHome } from './real-projects/tool-home.js';

/** One `acia run` with real test runs in the sandbox (seconds each on 2 cores; minutes when loaded). */
const RUN_TIMEOUT_MS = 240_000;
const BYPRODUCTS = /(^|\/)(node_modules|\.venv|\.nyc_output|coverage|__pycache__|\.pytest_cache|\.pnp\.c?js|\.yarn\/(cache|unplugged|install-state\.gz)|[^/]+\.egg-info)(\/|$)/;

function entriesOfType(entries: LedgerEntry[], type: string): Array<Record<string, unknown>> {
  return entries.filter((e) => e.type === type).map((e) => e.data as Record<string, unknown>);
}

/** Skips with the reason; CI (.ci/run sets ACIA_TEST_REQUIRE_REAL_PROJECTS=1) has the registry and Debian's packages, so there it fails. */
function skipUnless(name: string, why: string | null, ctx: { skip: () => void }): void {
  if (why === null) return;
  if (process.env.ACIA_TEST_REQUIRE_REAL_PROJECTS === '1') throw new Error(`ACIA_TEST_REQUIRE_REAL_PROJECTS=1 but ${name} cannot run: ${why}`);
  console.warn(`SKIPPED ${name}: ${why}`);
  ctx.skip();
}

/** A digest of each installed path (absent ones count as absent): any change to the user's install shows. */
function installedDigest(repo: string, paths: string[]): string[] {
  return paths.map((p) => {
    const abs = isAbsolute(p) ? p : join(repo, p);
    try {
      lstatSync(abs);
    } catch {
      return `${p}: absent`;
    }
    const d = treeDigest(abs);
    return `${p}: ${d.files} ${d.digest}`;
  });
}

describe.skipIf(!sandboxAvailable())('real projects under the default sandbox', () => {
  const started = Date.now();
  let home: ToolHome | null = null;
  let homeWhy: string | null = null;
  const why = new Map<string, string | null>();
  const repos = new Map<string, Promise<string>>();

  beforeAll(async () => {
    for (const p of MATRIX) why.set(p.name, await p.unavailable());
    try {
      home = await toolHome();
    } catch (e) {
      homeWhy = `the package managers could not be installed (${(e as Error).message.split('\n')[0]})`;
    }
    // Every project installs at once (and runs its tests once on the host, as the user did).
    for (const p of MATRIX) {
      if (why.get(p.name) !== null || home === null) continue;
      const repo = p.prepare(home);
      repo.catch(() => undefined);
      repos.set(p.name, repo);
    }
    await Promise.allSettled(repos.values());
  }, 900_000);

  for (const p of MATRIX) {
    it(p.name, async (ctx) => {
      skipUnless(p.name, why.get(p.name) ?? homeWhy, ctx);
      skipUnless(p.name, homeWhy, ctx);
      const repo = await repos.get(p.name)!;
      await oneRun(p, repo, home!);
    }, RUN_TIMEOUT_MS);
  }

  // The matrix's cost, for the suite's time budget (docs/sandbox.md).
  afterAll(() => console.log(`real-project matrix: ${MATRIX.length} projects, ${((Date.now() - started) / 1000).toFixed(1)} s wall (installs from the cache and one acia run each)`));
});

async function oneRun(p: MatrixProject, repo: string, home: ToolHome): Promise<void> {
  const before = installedDigest(repo, p.installed);
  const statusBefore = git(repo, 'status', '--porcelain');
  const written = [...new Set([...p.first.flatMap((f) => ('path' in f ? [f.path] : [])), p.fix.path])].sort();
  const files = [...written, ...(p.changedAlso ?? [])].sort();
  const goal = `Add ${written.join(' and ')}`;
  const r = await runWithScript(repo, goal, brokenThenFixed(devThenQa(`Write ${written.join(', ')}.`, written), p.first, p.fix), { ...home.env, ...p.env }, p.userConfig);
  expect(r.code, r.stderr).toBe(0);
  const runId = readdirSync(join(repo, '.acia', 'runs')).sort().at(-1)!;
  const entries = ledgerOf(repo, runId);

  // The detected (or configured) command ran in the sandbox: it failed on the broken test, then passed,
  // counting every package's tests.
  const verdicts = entriesOfType(entries, 'VERIFICATION').filter((d) => d.source === 'qa_run');
  expect(verdicts.map((d) => d.passed), r.stderr).toEqual([false, true]);
  expect(verdicts.map((d) => d.command)).toEqual([p.command, p.command]);
  expect(verdicts[0]!.failedCount).toBeGreaterThan(0);
  expect(verdicts[0]).not.toHaveProperty('cannotRun');
  expect(verdicts[1]).toMatchObject({ exitCode: 0, failedCount: 0, passedCount: p.passed });
  expect(r.stderr).toMatch(/t2 verification FAILED \(qa_run: .*, exit [1-9]\d*, \d+ passed, [1-9]\d* failed\)/);

  // The fix task's input, and its agent's model request, hold the failing assertion; so does the wiki.
  const fix = entriesOfType(entries, 'TASK_ADDED').find((d) => d.reason === 'fix')!;
  const failure = (fix.task as { input: { failure: string } }).input.failure;
  const call = entries.find((e) => e.type === 'LLM_CALL' && (e.data as { caller: string }).caller === 'dev:t2-fix1')!;
  const request = blobText(repo, runId, (call.data as { requestHash: string }).requestHash);
  for (const re of p.failureShows) {
    expect(failure, failure).toMatch(re);
    expect(request).toMatch(re);
  }

  // The branch holds the change and nothing a tool left behind.
  expect(git(repo, 'diff', '--name-only', 'main', `acia/${runId}`).split('\n').sort()).toEqual(files);
  expect(git(repo, 'ls-tree', '-r', '--name-only', `acia/${runId}`).split('\n').filter((f) => BYPRODUCTS.test(f))).toEqual([]);
  // The user's installed dependencies, and the checkout, are as they were.
  expect(installedDigest(repo, p.installed)).toEqual(before);
  expect(git(repo, 'status', '--porcelain')).toBe(statusBefore);

  // The project's own tests pass on the run branch, checked out in the checkout as the user would.
  git(repo, 'checkout', '-q', `acia/${runId}`);
  try {
    const suite = spawnSync(p.suite[0]!, p.suite.slice(1), { cwd: repo, encoding: 'utf8', env: { ...process.env, ...home.env }, timeout: 120_000 });
    expect(suite.status, `${suite.stdout}\n${suite.stderr}`).toBe(0);
  } finally {
    execFileSync('git', ['checkout', '-q', '-f', 'main'], { cwd: repo });
  }
}
