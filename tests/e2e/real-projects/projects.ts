// The real-project matrix: one project per layout a user's checkout may have, each built from real
// packages of the npm registry (or Debian, for Python) and installed the way the project's README says,
// with the package manager the project pins. Where a layout needs packages that depend on each other
// (workspaces), real registry packages are assembled into a workspace with a small package of our own
// that depends on them; where the published package ships no tests, the tests are ours. PyPI is not
// reachable here: Python projects use Debian's python3, pytest, setuptools and Poetry, and a test-only
// dependency is built from local source into the venv alone.
//
// Each project's template (files, lockfile, and installed dependencies where they can be copied) is
// cached under the test cache; `prepare` makes a fresh git checkout from it, installs what cannot be
// copied (pnpm from its store, Yarn PnP from its global cache, venvs), and runs the tests once on the
// host, as the user would have before calling ACIA.
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../helpers.js';
import { CACHE, npmUnpack, shAsync } from './harness.js';
import { PINNED, type ToolHome } from './tool-home.js';

export interface Change {
  path: string;
  content: string;
}

export interface MatrixProject {
  /** The user's config for the run (allowedHosts, for a task that adds a dependency). */
  userConfig?: Record<string, unknown>;
  name: string;
  /** Why it could not be built here (no registry, no Debian package), or null. */
  unavailable: () => Promise<string | null>;
  /** A fresh checkout with its dependencies installed and its tests run once on the host. */
  prepare: (home: ToolHome) => Promise<string>;
  /** Paths of installed state to digest before and after the run (relative to the checkout, or absolute). */
  installed: string[];
  /** The Dev's first attempt: a change (a command such as `npm install x`, or files) and a test whose expectation is wrong. */
  first: Array<Change | { command: string }>;
  /** Files the first attempt's commands change besides the written ones (a lockfile). */
  changedAlso?: string[];
  /** The fix task's corrected test. */
  fix: Change;
  /** Lines of the failing assertion the fix task must be given. */
  failureShows: RegExp[];
  /** The test command ACIA detects (or is configured with, via env). */
  command: string;
  /** Tests counted on the passing run: every package's. */
  passed: number;
  /** The project's own test command, run on the run branch afterwards as the user would. */
  suite: string[];
  env?: Record<string, string>;
}

const NPM_CACHE = () => `--cache=${join(CACHE, 'npm')}`;

/** A template built once into the cache (complete or absent: a failed build leaves nothing). */
async function template(key: string, build: (dir: string) => Promise<void>): Promise<string> {
  const dir = join(CACHE, key);
  if (existsSync(join(dir, '.complete'))) return dir;
  const tmp = `${dir}.tmp-${process.pid}`;
  await shAsync('rm', ['-rf', tmp, dir], CACHE);
  mkdirSync(tmp, { recursive: true });
  await build(tmp);
  writeFileSync(join(tmp, '.complete'), '');
  await shAsync('mv', [tmp, dir], CACHE);
  return dir;
}

/** A git checkout of `files` (tracked), with `untracked` copied in afterwards as the installed state. */
async function checkout(name: string, from: string, gitignore: string, untracked: string[]): Promise<string> {
  const repo = join(tempDir(`rp-${name}`), 'repo');
  mkdirSync(repo);
  await shAsync('sh', ['-c', `tar -C "$0" --exclude=.complete ${untracked.map((u) => `--exclude=./${u}`).join(' ')} -cf - . | tar -C "$1" -xf -`, from, repo], repo);
  writeFileSync(join(repo, '.gitignore'), gitignore);
  const git = (...a: string[]) => shAsync('git', a, repo);
  await git('init', '-q', '-b', 'main');
  await git('add', '-A');
  await git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', `${name} as published`);
  for (const u of untracked) if (existsSync(join(from, u))) cpSync(join(from, u), join(repo, u), { recursive: true, verbatimSymlinks: true });
  return repo;
}

const json = (o: unknown): string => `${JSON.stringify(o, null, 2)}\n`;
function edit(file: string, change: (o: Record<string, unknown>) => void): void {
  const o = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  change(o);
  writeFileSync(file, json(o));
}
function write(file: string, text: string): void {
  mkdirSync(join(file, '..'), { recursive: true });
  writeFileSync(file, text);
}

async function registryWhy(): Promise<string | null> {
  try {
    await shAsync('npm', ['view', 'tape@5.10.2', 'version', '--fetch-retries=1', NPM_CACHE()], CACHE, process.env, 60_000);
    return null;
  } catch (e) {
    return `the npm registry cannot be reached (${(e as Error).message.split('\n')[0]})`;
  }
}

async function pythonWhy(extra: string[] = []): Promise<string | null> {
  try {
    await shAsync('/usr/bin/python3', ['-c', 'import pytest, venv, setuptools, pip'], CACHE);
  } catch {
    return 'needs Debian python3-pytest, python3-venv, python3-setuptools and python3-pip';
  }
  for (const tool of extra) {
    try {
      await shAsync('sh', ['-c', `command -v ${tool}`], CACHE);
    } catch {
      return `needs ${tool} (Debian python3-${tool})`;
    }
  }
  return null;
}

const tapeTest = (file: string, requireLine: string, call: string, expected: string) => ({
  path: file,
  content: `'use strict';\n\nvar test = require('tape');\n${requireLine}\n\ntest('acia case', function (t) {\n\tt.deepEqual(${call}, ${expected});\n\tt.end();\n});\n`,
});
const tapeFailure = [/not ok \d+ should be deeply equivalent/, /operator: deepEqual/, /expected: /, /actual: /];

// ---- npm, flat: minimist 1.2.8 with its own tape + nyc + eslint suite ----
const minimistTest = (x: string) => ({
  path: 'test/acia_numbers.js',
  content: `'use strict';\n\nvar test = require('tape');\nvar parse = require('../');\n\ntest('numbers after short and long flags', function (t) {\n\tt.deepEqual(parse(['-n', '5', '--x', '3']), { _: [], n: 5, x: ${x} });\n\tt.end();\n});\n`,
});
const minimist: MatrixProject = {
  name: 'npm flat: minimist 1.2.8 (tape + nyc + eslint)',
  unavailable: registryWhy,
  prepare: async () => {
    const t = await template('minimist-1.2.8', async (dir) => {
      npmUnpack('minimist@1.2.8', dir);
      await shAsync('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', '--no-package-lock', NPM_CACHE()], dir);
    });
    const repo = await checkout('minimist', t, 'node_modules/\n', ['node_modules']);
    await shAsync('npm', ['run', 'tests-only'], repo); // as the user did: nyc leaves node_modules/.cache/nyc
    return repo;
  },
  installed: ['node_modules'],
  first: [minimistTest("'3'")],
  fix: minimistTest('3'),
  failureShows: [...tapeFailure, /x: '3'/],
  // `npm test` lints, then runs the tests, then `aud` (an online audit): the user configured the tests.
  command: 'npm run tests-only',
  passed: 154,
  suite: ['npm', 'run', 'tests-only'],
  env: { ACIA_TEST_COMMAND: 'npm run tests-only' },
};

// ---- npm workspaces: ms 2.1.3 (real) and `duration` (ours) that depends on it; mocha + chai ----
const mochaTest = (requireLine: string, call: string, expected: string) =>
  `'use strict';\n\nconst { expect } = require('chai');\n${requireLine}\n\ndescribe('weeks', () => {\n  it('counts a fortnight', () => {\n    expect(${call}).to.equal(${expected});\n  });\n});\n`;
const npmWorkspaces: MatrixProject = {
  name: 'npm workspaces: ms 2.1.3 + a package depending on it (mocha + chai)',
  unavailable: registryWhy,
  prepare: async () => {
    const t = await template('npm-ws-ms-2.1.3-v1', async (dir) => {
      const ms = join(dir, 'packages', 'ms');
      mkdirSync(ms, { recursive: true });
      npmUnpack('ms@2.1.3', ms);
      edit(join(ms, 'package.json'), (p) => {
        p.scripts = { test: 'mocha' };
        delete p.devDependencies;
        delete p.eslintConfig;
        delete p['lint-staged'];
      });
      write(join(ms, 'test', 'ms.test.js'), `'use strict';\n\nconst { expect } = require('chai');\nconst ms = require('..');\n\ndescribe('ms', () => {\n  it('parses', () => expect(ms('2h')).to.equal(7200000));\n  it('formats', () => expect(ms(60000)).to.equal('1m'));\n});\n`);
      const duration = join(dir, 'packages', 'duration');
      write(join(duration, 'package.json'), json({ name: 'duration', version: '1.0.0', main: 'index.js', scripts: { test: 'mocha' }, dependencies: { ms: '2.1.3' } }));
      write(join(duration, 'index.js'), `'use strict';\n\nconst ms = require('ms');\n\nexports.humanize = (millis) => ms(millis, { long: true });\n`);
      write(join(duration, 'test', 'duration.test.js'), `'use strict';\n\nconst { expect } = require('chai');\nconst { humanize } = require('..');\n\ndescribe('humanize', () => {\n  it('says minutes', () => expect(humanize(120000)).to.equal('2 minutes'));\n});\n`);
      write(join(dir, 'package.json'), json({ name: 'durations', private: true, workspaces: ['packages/*'], devDependencies: { mocha: '10.8.2', chai: '4.5.0' } }));
      await shAsync('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', NPM_CACHE()], dir);
    });
    const repo = await checkout('npm-ws', t, 'node_modules/\n', ['node_modules']);
    await shAsync('npm', ['test', '--workspaces', '--if-present'], repo);
    return repo;
  },
  installed: ['node_modules'],
  // The task adds a dependency to `duration` (the registry is in the user's allowedHosts): npm installs it
  // in the task's own node_modules, and the manifest and lockfile go onto the branch with the code; each
  // later task's worktree installs it too. A new module in the workspace package `ms`, used by a test of
  // `duration` through its workspace link, exists only in the task's tree.
  userConfig: { allowedHosts: ['registry.npmjs.org'] },
  first: [
    { command: 'npm install --no-audit --no-fund kleur@4.1.5 --workspace duration' },
    { path: 'packages/ms/weeks.js', content: `'use strict';\n\nmodule.exports = (n) => n * 7 * 24 * 60 * 60 * 1000;\n` },
    { path: 'packages/duration/test/weeks.test.js', content: mochaTest("const weeks = require('ms/weeks');\nconst kleur = require('kleur');\n\nkleur.enabled = false;", 'weeks(Number(kleur.bold("2")))', '1209600001') },
  ],
  changedAlso: ['package-lock.json', 'packages/duration/package.json'],
  fix: { path: 'packages/duration/test/weeks.test.js', content: mochaTest("const weeks = require('ms/weeks');\nconst kleur = require('kleur');\n\nkleur.enabled = false;", 'weeks(Number(kleur.bold("2")))', '1209600000') },
  failureShows: [/1\) weeks/, /AssertionError: expected 1209600000 to equal 1209600001/, /weeks\.test\.js:\d+/],
  command: 'npm test --workspaces --if-present --',
  passed: 4,
  // After merging a dependency change the user installs it, then tests.
  suite: ['sh', '-c', `npm install --no-audit --no-fund --ignore-scripts ${NPM_CACHE()} && npm test --workspaces --if-present`],
};

// ---- pnpm workspaces (pnpm pinned by packageManager): escape-string-regexp 5 (real) and `search` ----
const vitestTest = (importLine: string, call: string, expected: string) =>
  `import { expect, it } from 'vitest';\n${importLine}\n\nit('escapes every needle', () => {\n  expect(${call}).toEqual(${expected});\n});\n`;
let escapeIndex = '';
const pnpmWorkspaces: MatrixProject = {
  name: `pnpm ${PINNED.pnpm} workspaces: escape-string-regexp 5.0.0 + a package depending on it (vitest 3)`,
  unavailable: registryWhy,
  prepare: async (home) => {
    const t = await template('pnpm-ws-escape-5.0.0-v1', async (dir) => {
      const esc = join(dir, 'packages', 'escape');
      mkdirSync(esc, { recursive: true });
      npmUnpack('escape-string-regexp@5.0.0', esc);
      edit(join(esc, 'package.json'), (p) => {
        p.scripts = { test: 'vitest run' };
        p.devDependencies = { vitest: '3.2.4' };
      });
      const search = join(dir, 'packages', 'search');
      write(join(search, 'package.json'), json({ name: 'search', version: '1.0.0', type: 'module', exports: './index.js', scripts: { test: 'vitest run' }, dependencies: { 'escape-string-regexp': 'workspace:*' }, devDependencies: { vitest: '3.2.4' } }));
      write(join(search, 'index.js'), `import escapeStringRegexp from 'escape-string-regexp';\n\nexport function findAll(text, needle) {\n  return [...text.matchAll(new RegExp(escapeStringRegexp(needle), 'g'))].map((m) => m.index);\n}\n`);
      // A TypeScript config: vitest bundles it through node_modules/.vite-temp, a cache inside the dependencies.
      for (const d of [esc, search]) write(join(d, 'vitest.config.ts'), `import { defineConfig } from 'vitest/config';\n\nexport default defineConfig({ test: { include: ['test/**/*.test.js'] } });\n`);
      write(join(esc, 'test', 'escape.test.js'), vitestTest("import escapeStringRegexp from '../index.js';", "escapeStringRegexp('a.b')", "'a\\\\.b'"));
      write(join(search, 'test', 'search.test.js'), `import { expect, it } from 'vitest';\nimport { findAll } from '../index.js';\n\nit('finds a needle with special characters', () => {\n  expect(findAll('a.b a.b', 'a.b')).toEqual([0, 4]);\n});\n`);
      write(join(dir, 'package.json'), json({ name: 'search-workspace', private: true, packageManager: `pnpm@${PINNED.pnpm}`, scripts: { test: 'pnpm -r test' } }));
      write(join(dir, 'pnpm-workspace.yaml'), 'packages:\n  - "packages/*"\n');
      await shAsync('pnpm', ['install'], dir, { ...process.env, ...home.installEnv });
      await shAsync('rm', ['-rf', 'node_modules', 'packages/escape/node_modules', 'packages/search/node_modules'], dir);
    });
    escapeIndex = readFileSync(join(t, 'packages', 'escape', 'index.js'), 'utf8');
    const repo = await checkout('pnpm-ws', t, 'node_modules/\n', []);
    const env = { ...process.env, ...home.env };
    await shAsync('pnpm', ['install', '--offline', '--frozen-lockfile'], repo, env);
    await shAsync('pnpm', ['test'], repo, env); // leaves .vite and .vite-temp in each package's node_modules
    return repo;
  },
  installed: ['node_modules', 'packages/escape/node_modules', 'packages/search/node_modules'],
  get first() {
    return [
      { path: 'packages/escape/index.js', content: `${escapeIndex}\nexport function escapeAll(needles) {\n\treturn needles.map((n) => escapeStringRegexp(n));\n}\n` },
      { path: 'packages/search/test/all.test.js', content: vitestTest("import { escapeAll } from 'escape-string-regexp';", "escapeAll(['a.b', '$'])", "['a.b', '\\\\$']") },
    ];
  },
  fix: { path: 'packages/search/test/all.test.js', content: vitestTest("import { escapeAll } from 'escape-string-regexp';", "escapeAll(['a.b', '$'])", "['a\\\\.b', '\\\\$']") },
  // (vitest shows the strings' backslashes; the model request is JSON, which doubles them)
  failureShows: [/FAIL\s+test\/all\.test\.js > escapes every needle/, /AssertionError: expected \[ 'a\\+\.b', '\\+\$' \] to deeply equal \[ 'a\.b', '\\+\$' \]/, /test\/all\.test\.js:5:\d+/],
  command: 'pnpm test',
  passed: 3,
  suite: ['pnpm', 'test'],
};

// ---- Yarn 1 (pinned): camelcase 6.3.0 with tape tests of ours ----
const yarnClassic: MatrixProject = {
  name: `yarn ${PINNED.yarnClassic}: camelcase 6.3.0 (tape)`,
  unavailable: registryWhy,
  prepare: async (home) => {
    const t = await template('yarn1-camelcase-6.3.0-v1', async (dir) => {
      npmUnpack('camelcase@6.3.0', dir);
      edit(join(dir, 'package.json'), (p) => {
        p.scripts = { test: 'tape test/*.js' };
        p.devDependencies = { tape: '5.10.2' };
        p.packageManager = `yarn@${PINNED.yarnClassic}`;
      });
      write(join(dir, 'test', 'camelcase.js'), `'use strict';\n\nvar test = require('tape');\nvar camelCase = require('..');\n\ntest('dashes', function (t) {\n\tt.equal(camelCase('foo-bar'), 'fooBar');\n\tt.end();\n});\n`);
      await shAsync('yarn', ['install', '--non-interactive', '--cache-folder', join(CACHE, 'yarn1')], dir, { ...process.env, ...home.installEnv });
    });
    const repo = await checkout('yarn1', t, 'node_modules/\n', ['node_modules']);
    await shAsync('yarn', ['test'], repo, { ...process.env, ...home.env });
    return repo;
  },
  installed: ['node_modules'],
  first: [tapeTest('test/acia.js', "var camelCase = require('..');", "camelCase(['foo', 'bar-baz'])", "'foo-barBaz'")],
  fix: tapeTest('test/acia.js', "var camelCase = require('..');", "camelCase(['foo', 'bar-baz'])", "'fooBarBaz'"),
  failureShows: [...tapeFailure, /'foo-barBaz'/],
  command: 'yarn test',
  passed: 2,
  suite: ['yarn', 'test'],
};

// ---- Yarn 4 (pinned), Plug'n'Play with the global cache in the home: decamelize 4.0.0 ----
const yarnBerry: MatrixProject = {
  name: `yarn ${PINNED.yarnBerry} Plug'n'Play: decamelize 4.0.0 (tape, cache in ~/.yarn/berry)`,
  unavailable: registryWhy,
  prepare: async (home) => {
    const t = await template('yarn4-decamelize-4.0.0-v1', async (dir) => {
      npmUnpack('decamelize@4.0.0', dir);
      edit(join(dir, 'package.json'), (p) => {
        p.scripts = { test: 'tape test/*.js' };
        p.devDependencies = { tape: '5.10.2' };
        p.packageManager = `yarn@${PINNED.yarnBerry}`;
      });
      write(join(dir, 'test', 'decamelize.js'), `'use strict';\n\nvar test = require('tape');\nvar decamelize = require('..');\n\ntest('underscores', function (t) {\n\tt.equal(decamelize('fooBar'), 'foo_bar');\n\tt.end();\n});\n`);
      await shAsync('yarn', ['install'], dir, { ...process.env, ...home.installEnv });
      await shAsync('rm', ['-rf', '.pnp.cjs', '.pnp.loader.mjs', '.yarn'], dir);
    });
    const repo = await checkout('yarn4', t, '.yarn/*\n!.yarn/releases\n!.yarn/plugins\n.pnp.*\n', []);
    const env = { ...process.env, ...home.env };
    await shAsync('yarn', ['install', '--immutable'], repo, env);
    await shAsync('yarn', ['test'], repo, env);
    return repo;
  },
  get installed() {
    return ['.pnp.cjs', '.pnp.loader.mjs', '.yarn'];
  },
  first: [tapeTest('test/acia.js', "var decamelize = require('..');", "decamelize('unicornRainbow', '-')", "'unicorn_rainbow'")],
  fix: tapeTest('test/acia.js', "var decamelize = require('..');", "decamelize('unicornRainbow', '-')", "'unicorn-rainbow'"),
  failureShows: [...tapeFailure, /'unicorn_rainbow'/],
  command: 'yarn test',
  passed: 2,
  suite: ['yarn', 'test'],
};

// ---- Bun (installed in ~/.bun from npm), no test script: leven 3.0.0 with bun:test tests ----
const bunTest = (expected: string) => `import { expect, test } from 'bun:test';\nimport leven from '../index.js';\n\ntest('counts edits', () => {\n  expect(leven('kitten', 'sitting')).toBe(${expected});\n});\n`;
const bun: MatrixProject = {
  name: `bun ${PINNED.bun}: leven 3.0.0 (bun test, no test script)`,
  installed: ['node_modules'],
  unavailable: registryWhy,
  prepare: async (home) => {
    const t = await template('bun-leven-3.0.0-v2', async (dir) => {
      npmUnpack('leven@3.0.0', dir);
      // As `bun init` leaves a project: Bun's types as the one devDependency, a bun.lock, no test script.
      edit(join(dir, 'package.json'), (p) => {
        delete p.scripts;
        p.devDependencies = { '@types/bun': 'latest' };
      });
      write(join(dir, 'test', 'leven.test.js'), `import { expect, test } from 'bun:test';\nimport leven from '../index.js';\n\ntest('same', () => {\n  expect(leven('a', 'a')).toBe(0);\n});\n`);
      await shAsync('bun', ['install'], dir, { ...process.env, ...home.installEnv });
    });
    const repo = await checkout('bun', t, 'node_modules/\n', ['node_modules']);
    await shAsync('bun', ['test'], repo, { ...process.env, ...home.env });
    return repo;
  },
  first: [{ path: 'test/acia.test.js', content: bunTest('2') }],
  fix: { path: 'test/acia.test.js', content: bunTest('3') },
  failureShows: [/error: expect\(received\)\.toBe\(expected\)/, /Expected: 2/, /Received: 3/, /\(fail\) counts edits/],
  command: 'bun test',
  passed: 2,
  suite: ['bun', 'test'],
};

// ---- Python: a .venv holding a test dependency the system Python lacks ----
const slugHelper = async (): Promise<string> =>
  template('py-slugcheck-v1', async (dir) => {
    write(join(dir, 'pyproject.toml'), '[project]\nname = "slugcheck"\nversion = "1.0.0"\n\n[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n');
    write(join(dir, 'slugcheck', '__init__.py'), 'import re\n\n\ndef is_slug(text):\n    """True for lower-case words joined by single hyphens."""\n    return re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", text) is not None\n');
    await Promise.resolve();
  });
const pyTest = (importLine: string, ...body: string[]) => `${importLine}\n\n\ndef test_acia():\n${body.map((l) => `    ${l}\n`).join('')}`;
async function venv(repo: string): Promise<void> {
  await shAsync('/usr/bin/python3', ['-m', 'venv', '--system-site-packages', '--without-pip', join(repo, '.venv')], repo);
}
/** pip of Debian's python3 installing into the venv, offline (`--no-index`), with Debian's setuptools. */
function pipInto(repo: string, args: string[]): Promise<string> {
  return shAsync('/usr/bin/python3', ['-m', 'pip', '--python', join(repo, '.venv', 'bin', 'python'), 'install', '--no-index', '--no-build-isolation', '--no-deps', '--quiet', ...args], repo, {
    ...process.env,
    PIP_DISABLE_PIP_VERSION_CHECK: '1',
  });
}
const pythonVenv: MatrixProject = {
  name: 'python .venv with a test dependency only in the venv (pytest)',
  unavailable: () => pythonWhy(),
  prepare: async () => {
    const helper = await slugHelper();
    const src = join(tempDir('py-venv-src'), 'p');
    write(join(src, 'pyproject.toml'), '[project]\nname = "slugs"\nversion = "0.1.0"\ndependencies = ["slugcheck"]\n\n[tool.pytest.ini_options]\npythonpath = ["."]\n');
    write(join(src, 'slugs', '__init__.py'), 'import re\n\n\ndef slugify(text):\n    """Lower-case words joined by hyphens."""\n    return "-".join(re.findall(r"[a-z0-9]+", text.lower()))\n');
    write(join(src, 'tests', 'test_slugify.py'), 'from slugcheck import is_slug\nfrom slugs import slugify\n\n\ndef test_words():\n    assert slugify("Hello, World") == "hello-world"\n    assert is_slug(slugify("Hello, World"))\n');
    const repo = await checkout('py-venv', src, '.venv/\n__pycache__/\n.pytest_cache/\n', []);
    await venv(repo);
    await pipInto(repo, [helper]);
    await shAsync(join(repo, '.venv', 'bin', 'python'), ['-m', 'pytest', '-q'], repo);
    return repo;
  },
  installed: ['.venv'],
  first: [{ path: 'tests/test_numbers.py', content: pyTest('from slugcheck import is_slug\nfrom slugs import slugify', 'assert is_slug(slugify("Top 10 Tips"))', 'assert slugify("Top 10 Tips") == "top-tips"') }],
  fix: { path: 'tests/test_numbers.py', content: pyTest('from slugcheck import is_slug\nfrom slugs import slugify', 'assert is_slug(slugify("Top 10 Tips"))', 'assert slugify("Top 10 Tips") == "top-10-tips"') },
  failureShows: [/_+ test_acia _+/, /E\s+AssertionError: assert 'top-10-tips' == 'top-tips'/, /FAILED tests\/test_numbers\.py::test_acia/],
  command: '.venv/bin/python -m pytest',
  passed: 2,
  suite: ['.venv/bin/python', '-m', 'pytest', '-q', '-p', 'no:cacheprovider'],
};

// ---- Python: src/ layout with an editable install (pip install -e .) ----
const pythonEditable: MatrixProject = {
  name: 'python src/ layout with an editable install (pip install -e .)',
  unavailable: () => pythonWhy(),
  prepare: async () => {
    const src = join(tempDir('py-src-src'), 'p');
    write(join(src, 'pyproject.toml'), '[project]\nname = "textkit"\nversion = "0.1.0"\n\n[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n\n[tool.setuptools.packages.find]\nwhere = ["src"]\n');
    write(join(src, 'src', 'textkit', '__init__.py'), 'def shout(text):\n    return text.upper() + "!"\n');
    write(join(src, 'tests', 'test_shout.py'), 'from textkit import shout\n\n\ndef test_shout():\n    assert shout("hi") == "HI!"\n');
    const repo = await checkout('py-src', src, '.venv/\n__pycache__/\n.pytest_cache/\n*.egg-info/\n', []);
    await venv(repo);
    await pipInto(repo, ['--editable', '.']);
    await shAsync(join(repo, '.venv', 'bin', 'python'), ['-m', 'pytest', '-q'], repo);
    return repo;
  },
  installed: ['.venv'],
  // A new module in src/: only the task's tree has it, so the editable install must resolve there.
  first: [
    { path: 'src/textkit/words.py', content: 'def count_words(text):\n    return len(text.split())\n' },
    { path: 'tests/test_words.py', content: pyTest('from textkit.words import count_words', 'assert count_words("one two three") == 2') },
  ],
  fix: { path: 'tests/test_words.py', content: pyTest('from textkit.words import count_words', 'assert count_words("one two three") == 3') },
  failureShows: [/E\s+AssertionError: assert 3 == 2/, /FAILED tests\/test_words\.py::test_acia/],
  command: '.venv/bin/python -m pytest',
  passed: 2,
  suite: ['.venv/bin/python', '-m', 'pytest', '-q', '-p', 'no:cacheprovider'],
};

// ---- Poetry (Debian's python3-poetry) with an in-project .venv and a path dependency ----
const poetry: MatrixProject = {
  name: 'poetry with an in-project .venv (src layout, a path dependency)',
  unavailable: () => pythonWhy(['poetry']),
  prepare: async (home) => {
    const src = join(tempDir('py-poetry-src'), 'p');
    const meta = (name: string, extra = '') =>
      `[tool.poetry]\nname = "${name}"\nversion = "0.1.0"\ndescription = "${name}"\nauthors = ["ACIA tests <tests@example.com>"]\n${extra}\n[build-system]\nrequires = ["poetry-core"]\nbuild-backend = "poetry.core.masonry.api"\n`;
    write(
      join(src, 'pyproject.toml'),
      meta('tally', 'packages = [{ include = "tally", from = "src" }]\n\n[tool.poetry.dependencies]\npython = "^3.11"\n\n[tool.poetry.group.dev.dependencies]\ntallyhelp = { path = "helpers", develop = true }\n\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'),
    );
    // Poetry's own settings for the project: the venv inside it, over Debian's pytest (PyPI is unreachable here).
    write(join(src, 'poetry.toml'), '[virtualenvs]\nin-project = true\n\n[virtualenvs.options]\nsystem-site-packages = true\n');
    write(join(src, 'src', 'tally', '__init__.py'), 'def add(a, b):\n    return a + b\n');
    write(join(src, 'helpers', 'pyproject.toml'), meta('tallyhelp'));
    write(join(src, 'helpers', 'tallyhelp', '__init__.py'), 'def twice(x):\n    return 2 * x\n');
    write(join(src, 'tests', 'test_add.py'), 'from tally import add\nfrom tallyhelp import twice\n\n\ndef test_add():\n    assert add(1, 2) == 3 == twice(1.5)\n');
    const repo = await checkout('poetry', src, '.venv/\n__pycache__/\n.pytest_cache/\n', []);
    const env = { ...process.env, ...home.env, POETRY_VIRTUALENVS_PREFER_ACTIVE_PYTHON: 'false' };
    await shAsync('poetry', ['install', '--no-interaction'], repo, env);
    await shAsync('poetry', ['run', 'python', '-m', 'pytest', '-q'], repo, env);
    return repo;
  },
  installed: ['.venv'],
  first: [
    { path: 'src/tally/stats.py', content: 'def mean(values):\n    return sum(values) / len(values)\n' },
    { path: 'tests/test_stats.py', content: pyTest('from tally.stats import mean', 'assert mean([1, 2, 6]) == 2') },
  ],
  fix: { path: 'tests/test_stats.py', content: pyTest('from tally.stats import mean', 'assert mean([1, 2, 6]) == 3') },
  failureShows: [/E\s+assert 3\.0 == 2/, /FAILED tests\/test_stats\.py::test_acia/],
  command: '.venv/bin/python -m pytest',
  passed: 2,
  suite: ['.venv/bin/python', '-m', 'pytest', '-q', '-p', 'no:cacheprovider'],
};

export const MATRIX: readonly MatrixProject[] = [minimist, npmWorkspaces, pnpmWorkspaces, yarnClassic, yarnBerry, bun, pythonVenv, pythonEditable, poetry];
