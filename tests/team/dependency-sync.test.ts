// What a later task's worktree installs once the run's merged work changed a manifest: npm's or Yarn 1's
// install for the package manager the checkout uses, pip's for changed requirements files into the venv.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NPM_SYNC_COMMAND, PNPM_SYNC_COMMAND, syncCommand, YARN_SYNC_COMMAND } from '../../src/team/dependency-sync.js';

function project(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'acia-sync-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

describe('syncCommand', () => {
  it('installs with the package manager the checkout uses, only when a manifest it reads changed', () => {
    const npm = project({ 'package.json': '{"name":"a"}', 'package-lock.json': '{}' });
    expect(syncCommand(npm, ['src/a.js', 'packages/b/package.json'], null)).toBe(NPM_SYNC_COMMAND);
    expect(syncCommand(npm, ['src/a.js', 'README.md'], null)).toBeNull();
    const yarn = project({ 'package.json': '{"name":"a","packageManager":"yarn@1.22.22"}', 'yarn.lock': '# yarn lockfile v1\n' });
    expect(syncCommand(yarn, ['yarn.lock'], null)).toBe(YARN_SYNC_COMMAND);
    expect(syncCommand(project({ 'package.json': '{"packageManager":"pnpm@9.15.9"}' }), ['pnpm-lock.yaml'], null)).toBe(PNPM_SYNC_COMMAND);
    // Yarn 2+ keeps its cache and PnP files read-only in the sandbox: no sync (docs/sandbox.md).
    expect(syncCommand(project({ 'package.json': '{"packageManager":"yarn@4.5.3"}' }), ['package.json'], null)).toBeNull();
  });

  it("installs changed requirements files with the venv's own Python, and nothing without a venv", () => {
    const py = project({ 'pyproject.toml': '[project]\nname = "a"\n' });
    expect(syncCommand(py, ['requirements.txt', 'requirements/dev.txt', 'src/a.py'], '.venv')).toBe('.venv/bin/python -m pip install --quiet -r requirements.txt -r requirements/dev.txt');
    expect(syncCommand(py, ['pyproject.toml'], '.venv')).toBeNull();
    expect(syncCommand(py, ['requirements.txt'], null)).toBeNull();
  });
});
