// A task adds a dependency in its own tree under the DEFAULT sandbox (issue 28): `yarn add` (Yarn 1) from
// the registry, `pip install` into the task's copy of the venv from a package index served here (PyPI is
// not reachable; the index is a local HTTP server that allowedHosts lets through). For each: a scripted
// Dev adds the dependency and a test that uses it, QA's verdict passes only if the dependency is installed
// in QA's own worktree (the branch's manifest installed there), the branch holds the manifest/lockfile
// change, and the checkout's installed tree is byte-for-byte as it was. Then the same checkout without an
// allowed registry: the Dev task escalates once, saying the registry could not be reached and what to
// allow, with no fix attempt. npm is covered by the real-project matrix (its workspaces project).
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LedgerEntry } from '../../src/core/ledger/entry.js';
import { sandboxAvailable } from '../helpers/sandbox-available.js';
import { git, ledgerOf, tempDir } from './helpers.js';
import { blobText, CACHE, devThenQa, runWithScript, shAsync, treeDigest, turn } from './real-projects/harness.js';
import { MATRIX } from './real-projects/projects.js';
import { PINNED, toolHome, type ToolHome } from './real-projects/tool-home.js';

const hasSocat = spawnSync('socat', ['-V']).status === 0;
const RUN_TIMEOUT_MS = 240_000;

type Step = { command: string } | { path: string; content: string };

/** The Dev runs `steps`, QA runs the tests once (the verdict is that run's exit code). */
function addThenVerify(files: string[], steps: Step[]) {
  return {
    version: 1 as const,
    model: 'claude-sonnet-5-5',
    turns: [
      turn('pm', 'return_result', devThenQa(`Add a dependency and use it in ${files.join(', ')}.`, files)),
      ...steps.map((s) => ('command' in s ? turn('dev:t1', 'run_command', { ...s, timeout_s: 180 }) : turn('dev:t1', 'write_file', s))),
      turn('dev:t1', 'return_result', { summary: 'Added the dependency and a test using it.' }),
      turn('qa:t2', 'run_tests', {}),
      turn('qa:t2', 'return_result', { passed: true, summary: 'The suite passes.' }),
    ],
  };
}

function runIdOf(repo: string): string {
  return readdirSync(join(repo, '.acia', 'runs')).sort().at(-1)!;
}

function ofType(entries: LedgerEntry[], type: string): Array<Record<string, unknown>> {
  return entries.filter((e) => e.type === type).map((e) => e.data as Record<string, unknown>);
}

/** The sync before QA's agent (run_setup `deps-<task>-1`), as recorded. */
function syncOf(entries: LedgerEntry[], taskId: string): Record<string, unknown> | undefined {
  return entries.find((e) => e.type === 'TOOL_RESULT' && (e.data as { toolUseId: string }).toolUseId === `deps-${taskId}-1`)?.data;
}

/** The run escalated once, at the Dev task, naming the install and what to allow, with no verification or fix. */
function expectRegistryEscalation(repo: string, stderr: string, install: RegExp): void {
  const entries = ledgerOf(repo, runIdOf(repo));
  const escalations = ofType(entries, 'ESCALATION_REQUESTED');
  expect(escalations, stderr).toHaveLength(1);
  expect(escalations[0]).toMatchObject({ taskId: 't1', reason: 'environment_broken' });
  expect(escalations[0]!.message).toMatch(install);
  expect(escalations[0]!.message).toMatch(/could not reach a package registry: .+ — the environment, not the code: commands in the sandbox reach only the hosts in allowedHosts \(none is allowed now\)/);
  expect(stderr).toMatch(/needs a human \(environment_broken\): `.*` could not reach a package registry/);
  expect(ofType(entries, 'VERIFICATION')).toEqual([]);
  expect(ofType(entries, 'TASK_ADDED')).toEqual([]);
  expect(ofType(entries, 'LLM_CALL').some((d) => d.caller === 'qa:t2')).toBe(false);
}

describe.skipIf(!sandboxAvailable() || !hasSocat)('a task adds a dependency in its own tree', () => {
  describe('pip, into the task’s copy of the venv, from a local index', () => {
    let why: string | null = null;
    let repo = '';
    let home = '';
    let index: http.Server | null = null;
    let host = '';
    const requests: string[] = [];

    beforeAll(async () => {
      try {
        execFileSync('/usr/bin/python3', ['-c', 'import pytest, venv, pip'], { stdio: 'ignore' });
      } catch {
        why = 'needs Debian python3-pytest, python3-venv and python3-pip';
        return;
      }
      const wheel = buildWheel(tempDir('wheel'));
      index = http.createServer((req, res) => {
        requests.push(req.url ?? '');
        if (req.url === '/simple/slugcheck/') {
          res.writeHead(200, { 'content-type': 'text/html' }).end(`<a href="/files/${wheel.name}#sha256=${wheel.sha256}">${wheel.name}</a>\n`);
        } else if (req.url === `/files/${wheel.name}`) {
          res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(wheel.bytes);
        } else {
          res.writeHead(404).end();
        }
      });
      // Not 127.0.0.1: the sandbox reaches that one directly (NO_PROXY), on its own loopback.
      await new Promise<void>((resolve) => index!.listen(0, '127.0.0.2', resolve));
      host = `127.0.0.2:${(index.address() as AddressInfo).port}`;
      // The user's pip config names the index (a private index, as many teams have).
      home = tempDir('pip-home');
      mkdirSync(join(home, '.config', 'pip'), { recursive: true });
      writeFileSync(join(home, '.config', 'pip', 'pip.conf'), `[global]\nindex-url = http://${host}/simple\ndisable-pip-version-check = true\n`);
      repo = join(tempDir('pip-add'), 'repo');
      mkdirSync(join(repo, 'slugs'), { recursive: true });
      mkdirSync(join(repo, 'tests'));
      writeFileSync(join(repo, 'pyproject.toml'), '[project]\nname = "slugs"\nversion = "0.1.0"\n\n[tool.pytest.ini_options]\npythonpath = ["."]\n');
      writeFileSync(join(repo, 'requirements.txt'), '# runtime dependencies\n');
      writeFileSync(join(repo, 'slugs', '__init__.py'), 'import re\n\n\ndef slugify(text):\n    return "-".join(re.findall(r"[a-z0-9]+", text.lower()))\n');
      writeFileSync(join(repo, 'tests', 'test_slugify.py'), 'from slugs import slugify\n\n\ndef test_words():\n    assert slugify("Hello, World") == "hello-world"\n');
      writeFileSync(join(repo, '.gitignore'), '.venv/\n__pycache__/\n.pytest_cache/\n');
      git(repo, 'init', '-q', '-b', 'main');
      git(repo, 'add', '-A');
      git(repo, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'slugs');
      // As the user made it: a venv over Debian's pytest (and pip), the tests run once.
      execFileSync('/usr/bin/python3', ['-m', 'venv', '--system-site-packages', '--without-pip', join(repo, '.venv')]);
      execFileSync(join(repo, '.venv', 'bin', 'python'), ['-m', 'pytest', '-q', '-p', 'no:cacheprovider'], { cwd: repo, stdio: 'ignore' });
    }, 120_000);
    afterAll(() => index?.close());

    const testFile = { path: 'tests/test_check.py', content: 'from slugcheck import is_slug\nfrom slugs import slugify\n\n\ndef test_is_slug():\n    assert is_slug(slugify("Top 10 Tips"))\n' };

    it('installs from the allowed index into the task’s venv, commits requirements.txt, and QA uses it', async (ctx) => {
      if (why !== null) return ctx.skip();
      const before = treeDigest(join(repo, '.venv'));
      const status = git(repo, 'status', '--porcelain');
      const steps: Step[] = [{ command: '.venv/bin/python -m pip install slugcheck==1.0.0' }, { path: 'requirements.txt', content: '# runtime dependencies\nslugcheck==1.0.0\n' }, testFile];
      const r = await runWithScript(repo, 'Check slugs with slugcheck', addThenVerify(['requirements.txt', testFile.path], steps), { HOME: home }, { allowedHosts: [host] });
      expect(r.code, r.stderr).toBe(0);
      const runId = runIdOf(repo);
      const entries = ledgerOf(repo, runId);
      // The Dev's install reached the index through the egress proxy, and so did QA's sync.
      const install = entries.find((e) => e.type === 'TOOL_RESULT' && (e.data as { name: string }).name === 'run_command')!.data as { ok: boolean; outputRef: string };
      expect(install.ok, blobText(repo, runId, install.outputRef)).toBe(true);
      expect(syncOf(entries, 't2')).toMatchObject({ ok: true });
      expect(requests.filter((u) => u.startsWith('/files/')).length).toBeGreaterThanOrEqual(1);
      // QA's verdict: the new test imports slugcheck, which only the task's venv has.
      const verdicts = ofType(entries, 'VERIFICATION').filter((d) => d.source === 'qa_run');
      expect(verdicts.map((d) => [d.passed, d.command, d.passedCount])).toEqual([[true, '.venv/bin/python -m pytest', 2]]);
      expect(git(repo, 'diff', '--name-only', 'main', `acia/${runId}`).split('\n').sort()).toEqual(['requirements.txt', 'tests/test_check.py']);
      expect(git(repo, 'show', `acia/${runId}:requirements.txt`)).toContain('slugcheck==1.0.0');
      // The user's venv is as it was, and so is the checkout.
      expect(treeDigest(join(repo, '.venv'))).toEqual(before);
      expect(git(repo, 'status', '--porcelain')).toBe(status);
    }, RUN_TIMEOUT_MS);

    it('without an allowed index, the Dev task says so once instead of going into a fix loop', async (ctx) => {
      if (why !== null) return ctx.skip();
      const before = treeDigest(join(repo, '.venv'));
      const steps: Step[] = [{ command: '.venv/bin/python -m pip install --retries 0 slugcheck==1.0.0' }, { path: 'requirements.txt', content: 'slugcheck==1.0.0\n' }, testFile];
      const r = await runWithScript(repo, 'Check slugs with slugcheck', addThenVerify(['requirements.txt', testFile.path], steps), { HOME: home });
      expect(r.code, r.stderr).toBe(3);
      expectRegistryEscalation(repo, r.stderr, /`\.venv\/bin\/python -m pip install --retries 0 slugcheck==1\.0\.0` could not reach a package registry: \[sandbox: no network: allowedHosts is empty, so no package registry could be reached\]/);
      expect(treeDigest(join(repo, '.venv'))).toEqual(before);
    }, RUN_TIMEOUT_MS);
  });

  describe('yarn add (Yarn 1), from the registry', () => {
    let why: string | null = null;
    let repo = '';
    let home: ToolHome | null = null;

    beforeAll(async () => {
      // Small on purpose: Yarn 1 fetches every package of the project into the task's own cache.
      why = await MATRIX.find((p) => p.name.startsWith('yarn 1.'))!.unavailable();
      if (why !== null) return;
      home = await toolHome();
      repo = join(tempDir('yarn-add'), 'repo');
      mkdirSync(join(repo, 'test'), { recursive: true });
      writeFileSync(join(repo, 'package.json'), `${JSON.stringify({ name: 'durations', version: '1.0.0', main: 'index.js', packageManager: `yarn@${PINNED.yarnClassic}`, scripts: { test: 'node --test' }, dependencies: { ms: '2.1.3' } }, null, 2)}\n`);
      writeFileSync(join(repo, 'index.js'), `'use strict';\n\nconst ms = require('ms');\n\nexports.humanize = (millis) => ms(millis, { long: true });\n`);
      writeFileSync(join(repo, 'test', 'humanize.test.js'), `'use strict';\n\nconst test = require('node:test');\nconst assert = require('node:assert');\nconst { humanize } = require('..');\n\ntest('minutes', () => assert.strictEqual(humanize(120000), '2 minutes'));\n`);
      writeFileSync(join(repo, '.gitignore'), 'node_modules/\n');
      const env = { ...process.env, ...home.installEnv };
      await shAsync('yarn', ['install', '--non-interactive', '--cache-folder', join(CACHE, 'yarn1')], repo, env);
      git(repo, 'init', '-q', '-b', 'main');
      git(repo, 'add', '-A');
      git(repo, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'durations');
      await shAsync('yarn', ['test'], repo, { ...process.env, ...home.env });
    }, 600_000);

    const testFile = {
      path: 'test/colors.test.js',
      content: `'use strict';\n\nconst test = require('node:test');\nconst assert = require('node:assert');\nconst kleur = require('kleur');\nconst { humanize } = require('..');\n\nkleur.enabled = false;\n\ntest('plain colours', () => assert.strictEqual(kleur.red(humanize(1000)), '1 second'));\n`,
    };

    it('adds to the task’s copy of node_modules, commits package.json and yarn.lock, and QA uses it', async (ctx) => {
      if (why !== null) return ctx.skip();
      const before = treeDigest(join(repo, 'node_modules'));
      const status = git(repo, 'status', '--porcelain');
      const r = await runWithScript(repo, 'Colour durations', addThenVerify([testFile.path], [{ command: 'yarn add --non-interactive kleur@4.1.5' }, testFile]), home!.env, { allowedHosts: ['registry.yarnpkg.com'] });
      expect(r.code, r.stderr).toBe(0);
      const runId = runIdOf(repo);
      const entries = ledgerOf(repo, runId);
      expect(syncOf(entries, 't2')).toMatchObject({ ok: true });
      const verdicts = ofType(entries, 'VERIFICATION').filter((d) => d.source === 'qa_run');
      expect(verdicts.map((d) => [d.passed, d.command, d.passedCount])).toEqual([[true, 'yarn test', 2]]);
      expect(git(repo, 'diff', '--name-only', 'main', `acia/${runId}`).split('\n').sort()).toEqual(['package.json', testFile.path, 'yarn.lock']);
      expect(git(repo, 'show', `acia/${runId}:yarn.lock`)).toMatch(/^kleur@4\.1\.5:\n {2}version "4\.1\.5"/m);
      expect(JSON.parse(git(repo, 'show', `acia/${runId}:package.json`)).dependencies).toEqual({ kleur: '4.1.5', ms: '2.1.3' });
      expect(treeDigest(join(repo, 'node_modules'))).toEqual(before);
      expect(git(repo, 'status', '--porcelain')).toBe(status);
    }, RUN_TIMEOUT_MS);

    it('without an allowed registry, the Dev task says so once instead of going into a fix loop', async (ctx) => {
      if (why !== null) return ctx.skip();
      const before = treeDigest(join(repo, 'node_modules'));
      const r = await runWithScript(repo, 'Colour durations', addThenVerify([testFile.path], [{ command: 'yarn add --non-interactive kleur@4.1.5' }, testFile]), home!.env);
      expect(r.code, r.stderr).toBe(3);
      expectRegistryEscalation(repo, r.stderr, /`yarn add --non-interactive kleur@4\.1\.5` could not reach a package registry: /);
      expect(treeDigest(join(repo, 'node_modules'))).toEqual(before);
    }, RUN_TIMEOUT_MS);
  });
});

describe.skipIf(!sandboxAvailable() || !hasSocat)('pnpm add in a workspace, from the registry', () => {
  const project = MATRIX.find((p) => p.name.startsWith('pnpm '))!;
  let why: string | null = null;
  let repo = '';
  let home: ToolHome | null = null;
  const installed = () => [...project.installed.map((p) => join(repo, p)), join(home!.home, '.local', 'share', 'pnpm')];
  const digest = () => installed().map((p) => treeDigest(p).digest);

  beforeAll(async () => {
    why = await project.unavailable();
    if (why !== null) return;
    home = await toolHome();
    repo = await project.prepare(home);
  }, 600_000);

  const testFile = {
    path: 'packages/search/test/colors.test.js',
    content: `import { expect, it } from 'vitest';\nimport kleur from 'kleur';\nimport { findAll } from '../index.js';\n\nkleur.enabled = false;\n\nit('finds in plain colours', () => {\n  expect(findAll(kleur.red('a.b a.b'), 'a.b')).toEqual([0, 4]);\n});\n`,
  };

  it('adds to the task’s copy of node_modules from a store of its own, commits the lockfile, and QA uses it', async (ctx) => {
    if (why !== null) return ctx.skip();
    const before = digest();
    const status = git(repo, 'status', '--porcelain');
    const r = await runWithScript(repo, 'Colour-proof search', addThenVerify([testFile.path], [{ command: 'pnpm add kleur@4.1.5 --filter search' }, testFile]), home!.env, { allowedHosts: ['registry.npmjs.org'] });
    expect(r.code, r.stderr).toBe(0);
    const runId = runIdOf(repo);
    const entries = ledgerOf(repo, runId);
    expect(syncOf(entries, 't2')).toMatchObject({ ok: true });
    const verdicts = ofType(entries, 'VERIFICATION').filter((d) => d.source === 'qa_run');
    expect(verdicts.map((d) => [d.passed, d.command, d.passedCount])).toEqual([[true, 'pnpm test', 3]]);
    expect(git(repo, 'diff', '--name-only', 'main', `acia/${runId}`).split('\n').sort()).toEqual(['packages/search/package.json', testFile.path, 'pnpm-lock.yaml']);
    expect(git(repo, 'show', `acia/${runId}:pnpm-lock.yaml`)).toMatch(/^ {2}kleur@4\.1\.5:/m);
    expect(digest()).toEqual(before);
    expect(git(repo, 'status', '--porcelain')).toBe(status);
  }, RUN_TIMEOUT_MS);

  it('without an allowed registry, the Dev task says so once instead of going into a fix loop', async (ctx) => {
    if (why !== null) return ctx.skip();
    const before = digest();
    // Without fetch retries: pnpm's own (about 70 s of backoff) only delay the same answer.
    const r = await runWithScript(repo, 'Colour-proof search', addThenVerify([testFile.path], [{ command: 'pnpm add kleur@4.1.5 --filter search --config.fetch-retries=0' }, testFile]), home!.env);
    expect(r.code, r.stderr).toBe(3);
    expectRegistryEscalation(repo, r.stderr, /`pnpm add kleur@4\.1\.5 --filter search --config\.fetch-retries=0` could not reach a package registry: /);
    expect(digest()).toEqual(before);
  }, RUN_TIMEOUT_MS);
});


/** A pure-Python wheel of `slugcheck` 1.0.0, made by hand (a zip with its dist-info and RECORD). */
function buildWheel(dir: string): { name: string; bytes: Buffer; sha256: string } {
  const name = 'slugcheck-1.0.0-py3-none-any.whl';
  const script = `
import base64, hashlib, sys, zipfile
files = {
  'slugcheck/__init__.py': 'import re\\n\\n\\ndef is_slug(text):\\n    return re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", text) is not None\\n',
  'slugcheck-1.0.0.dist-info/METADATA': 'Metadata-Version: 2.1\\nName: slugcheck\\nVersion: 1.0.0\\n',
  'slugcheck-1.0.0.dist-info/WHEEL': 'Wheel-Version: 1.0\\nGenerator: acia-tests\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n',
}
record = []
with zipfile.ZipFile(sys.argv[1], 'w') as z:
    for path, text in files.items():
        data = text.encode()
        z.writestr(path, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()
        record.append(f'{path},sha256={digest},{len(data)}')
    record.append('slugcheck-1.0.0.dist-info/RECORD,,')
    z.writestr('slugcheck-1.0.0.dist-info/RECORD', '\\n'.join(record) + '\\n')
`;
  execFileSync('/usr/bin/python3', ['-c', script, join(dir, name)]);
  const bytes = readFileSync(join(dir, name));
  return { name, bytes, sha256: createHash('sha256').update(bytes).digest('hex') };
}
