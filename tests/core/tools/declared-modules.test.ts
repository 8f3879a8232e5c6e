// The modules a project declares: what a failed import must name for the failure to be the environment's.
import * as fs from 'node:fs';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { declaredModules } from '../../../src/core/tools/declared-modules.js';

const base = mkdtempSync(join(tmpdir(), 'acia-declared-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

function write(rel: string, text: string): void {
  mkdirSync(join(base, rel, '..'), { recursive: true });
  writeFileSync(join(base, rel), text);
}

describe('declaredModules', () => {
  it('knows manifest dependencies, workspace packages and the project’s own Python packages', () => {
    write('package.json', JSON.stringify({ name: 'root', workspaces: ['packages/*'], devDependencies: { tape: '^5' } }));
    write('packages/core/package.json', JSON.stringify({ name: '@ws/core', dependencies: { 'escape-string-regexp': '5.0.0' } }));
    write('node_modules/hidden/package.json', JSON.stringify({ name: 'not-declared' }));
    write('pyproject.toml', '[project]\nname = "my-app"\ndependencies = ["requests>=2", "python-dateutil"]\n\n[tool.poetry.group.dev.dependencies]\npytest = "^8"\n');
    write('src/slugs/__init__.py', '');
    write('requirements-dev.txt', '# tools\nhypothesis==6.0\n-e .\n');
    const has = declaredModules({ fs, root: base });
    for (const n of ['tape', '@ws/core', 'escape-string-regexp', 'requests', 'python_dateutil', 'pytest', 'slugs', 'my_app', 'hypothesis']) expect(has(n), n).toBe(true);
    for (const n of ['not-declared', 'lodash', 'helpers']) expect(has(n), n).toBe(false);
  });
});
