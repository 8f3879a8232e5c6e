// Test command detection: the project's package manager runs its tests its own way, Bun's runner where
// there is no script, every workspace's tests where only packages have scripts, the venv's interpreter for pytest.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findProjectVenv } from '../../../src/core/sandbox/python-env.js';
import { packageManagerOf, testCommandFor } from '../../../src/core/tools/test-command.js';

function files(map: Record<string, string>) {
  return { has: (p: string) => p in map, read: (p: string) => map[p] ?? null };
}
const pkg = (o: Record<string, unknown>) => JSON.stringify(o);
const withTest = { scripts: { test: 'tape test/*.js' } };

describe('testCommandFor', () => {
  it('runs the test script with the package manager the project names or left a lockfile of', () => {
    const cmd = (f: Record<string, string>) => testCommandFor(files(f))?.command;
    expect(cmd({ 'package.json': pkg(withTest) })).toBe('npm test --');
    expect(cmd({ 'package.json': pkg({ ...withTest, packageManager: 'pnpm@9.15.9' }) })).toBe('pnpm test');
    expect(cmd({ 'package.json': pkg(withTest), 'pnpm-lock.yaml': '' })).toBe('pnpm test');
    expect(cmd({ 'package.json': pkg({ ...withTest, packageManager: 'yarn@1.22.22' }) })).toBe('yarn test');
    expect(cmd({ 'package.json': pkg({ ...withTest, packageManager: 'yarn@4.5.3' }) })).toBe('yarn test');
    expect(cmd({ 'package.json': pkg(withTest), 'yarn.lock': '# yarn lockfile v1\n' })).toBe('yarn test');
    expect(cmd({ 'package.json': pkg(withTest), 'bun.lock': '' })).toBe('bun run test');
    // packageManager wins over a stray lockfile.
    expect(cmd({ 'package.json': pkg({ ...withTest, packageManager: 'pnpm@10.0.0' }), 'package-lock.json': '' })).toBe('pnpm test');
  });

  it("uses Bun's own runner where a Bun project has no test script", () => {
    const d = testCommandFor(files({ 'package.json': pkg({ name: 'b' }), 'bun.lockb': '' }));
    expect(d).toMatchObject({ command: 'bun test' });
    expect(d?.why).toContain("Bun's own runner");
    expect(testCommandFor(files({ 'package.json': pkg({ name: 'b' }), 'bunfig.toml': '' }))?.command).toBe('bun test');
  });

  it("runs every workspace's tests when only the packages have test scripts", () => {
    const ws = { workspaces: ['packages/*'] };
    expect(testCommandFor(files({ 'package.json': pkg(ws) }))?.command).toBe('npm test --workspaces --if-present --');
    expect(testCommandFor(files({ 'package.json': pkg({}), 'pnpm-workspace.yaml': '', 'pnpm-lock.yaml': '' }))?.command).toBe('pnpm -r test');
    expect(testCommandFor(files({ 'package.json': pkg({ ...ws, packageManager: 'yarn@4.1.0' }) }))?.command).toBe('yarn workspaces foreach -A run test');
    expect(testCommandFor(files({ 'package.json': pkg(ws), 'yarn.lock': '' }))?.command).toBe('yarn workspaces run test');
    expect(testCommandFor(files({ 'package.json': pkg({ name: 'plain' }) }))).toBeNull();
  });

  it("tells Yarn 2+ from Yarn 1 by its lockfile's metadata or .yarnrc.yml", () => {
    expect(packageManagerOf({}, files({ 'yarn.lock': '__metadata:\n  version: 8\n' })).name).toBe('yarn-berry');
    expect(packageManagerOf({}, files({ 'yarn.lock': '', '.yarnrc.yml': '' })).name).toBe('yarn-berry');
    expect(packageManagerOf({}, files({ 'yarn.lock': '# yarn lockfile v1\n' })).name).toBe('yarn');
  });

  it("runs pytest with the virtualenv's interpreter when there is one, and says why", () => {
    const py = files({ 'pyproject.toml': '[tool.pytest.ini_options]\n' });
    expect(testCommandFor(py)).toMatchObject({ command: 'python3 -m pytest', source: 'pyproject.toml' });
    expect(testCommandFor(py)?.why).toContain('no virtualenv found');
    const d = testCommandFor(py, { venv: { path: '.venv', why: '.venv (pyvenv.cfg, Python 3.11.2)' } });
    expect(d).toMatchObject({ command: '.venv/bin/python -m pytest', why: "the virtualenv's interpreter: .venv (pyvenv.cfg, Python 3.11.2)" });
    expect(testCommandFor(py, { venv: { path: '/home/u/.virtualenvs/my env', why: '$VIRTUAL_ENV' } })?.command).toBe("'/home/u/.virtualenvs/my env/bin/python' -m pytest");
  });
});

describe('findProjectVenv', () => {
  const base = mkdtempSync(join(tmpdir(), 'acia-venv-'));
  afterAll(() => rmSync(base, { recursive: true, force: true }));

  it('finds .venv or venv with a pyvenv.cfg, an activated $VIRTUAL_ENV first, and names the layout', () => {
    const repo = join(base, 'repo');
    mkdirSync(join(repo, 'venv'), { recursive: true });
    writeFileSync(join(repo, 'venv', 'pyvenv.cfg'), 'home = /usr/bin\nversion = 3.11.2\n');
    expect(findProjectVenv(repo, {})).toEqual({ path: 'venv', why: 'venv (pyvenv.cfg, Python 3.11.2)' });
    mkdirSync(join(repo, '.venv'));
    expect(findProjectVenv(repo, {})?.path).toBe('venv'); // no pyvenv.cfg: not a venv
    writeFileSync(join(repo, '.venv', 'pyvenv.cfg'), 'version_info = 3.12.1.final.0\n');
    writeFileSync(join(repo, 'poetry.toml'), '[virtualenvs]\nin-project = true\n');
    expect(findProjectVenv(repo, {})).toEqual({ path: '.venv', why: '.venv (pyvenv.cfg, Python 3.12.1; Poetry in-project)' });
    const outside = join(base, 'elsewhere');
    execFileSync('mkdir', ['-p', outside]);
    writeFileSync(join(outside, 'pyvenv.cfg'), 'version = 3.10.4\n');
    expect(findProjectVenv(repo, { VIRTUAL_ENV: outside })).toEqual({ path: outside, why: `$VIRTUAL_ENV (${outside}, Python 3.10.4)` });
    expect(findProjectVenv(repo, { VIRTUAL_ENV: join(repo, 'venv') })?.path).toBe('venv');
    expect(findProjectVenv(join(base, 'none'), {})).toBeNull();
  });
});
