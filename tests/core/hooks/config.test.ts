// Hooks in the configuration: every file's hooks apply (the user's first), the repository's only once
// trusted, and only the user's own file may run one outside the sandbox.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/core/config/load.js';
import { trustRepoFiles } from '../../../src/core/config/trust.js';
import { HookConfig, resolveHooks } from '../../../src/core/hooks/config.js';

function setup(repoConfig: unknown, userConfig: unknown) {
  const dir = mkdtempSync(join(tmpdir(), 'acia-hookcfg-'));
  const repo = join(dir, 'repo');
  mkdirSync(join(repo, '.acia'), { recursive: true });
  writeFileSync(join(repo, '.acia', 'config.json'), JSON.stringify(repoConfig));
  const userFile = join(dir, 'user.json');
  writeFileSync(userFile, JSON.stringify(userConfig));
  return { repo, userFile, env: { HOME: dir, XDG_STATE_HOME: join(dir, 'state') } };
}

const userHook = { name: 'notify', on: 'escalation', command: '/usr/local/bin/notify', sandbox: false };
const repoHook = { name: 'lint', on: 'task.post', kind: 'dev.*', command: 'npm run lint' };

describe('hooks config', () => {
  it("applies the repository's hooks only once it is trusted, after the user's, each marked with its file", () => {
    const { repo, userFile, env } = setup({ hooks: [repoHook] }, { hooks: [userHook] });
    const before = loadConfig({ repo, env, flags: {}, userFile });
    expect(before.config.hooks.map((h) => h.name)).toEqual(['notify']);
    expect(before.ignored?.keys).toEqual(['hooks']);
    trustRepoFiles(repo, env);
    const after = loadConfig({ repo, env, flags: {}, userFile });
    const hooks = resolveHooks(after.config.hooks);
    expect(hooks.map((h) => [h.id, h.source, h.fromUser, h.sandbox])).toEqual([
      ['notify', userFile, true, false],
      ['lint', join(repo, '.acia', 'config.json'), false, true],
    ]);
    expect(after.sources.hooks).toBe(`${userFile}, ${join(repo, '.acia', 'config.json')}`);
  });

  it('refuses a repository hook that opts out of the sandbox, trusted or not', () => {
    const { repo, userFile, env } = setup({ hooks: [{ ...repoHook, sandbox: false }] }, {});
    expect(() => loadConfig({ repo, env, flags: {}, userFile })).toThrow(/"hooks\[0\]\.sandbox": false is not allowed in .*\.acia\/config\.json/);
    trustRepoFiles(repo, env);
    expect(() => loadConfig({ repo, env, flags: {}, userFile })).toThrow(/not allowed/);
  });

  it('replaces an origin a file claims for itself', () => {
    const { repo, userFile, env } = setup({ hooks: [{ ...repoHook, origin: { file: 'x', user: true } }] }, {});
    trustRepoFiles(repo, env);
    const [hook] = resolveHooks(loadConfig({ repo, env, flags: {}, userFile }).config.hooks);
    expect(hook).toMatchObject({ fromUser: false, source: join(repo, '.acia', 'config.json') });
  });

  it('keeps a hook without an origin (built in code) inside the sandbox', () => {
    const [hook] = resolveHooks([HookConfig.parse({ on: 'run.end', command: 'true', sandbox: false })]);
    expect(hook).toMatchObject({ sandbox: true, fromUser: false, id: 'run.end#1' });
  });

  it('names a matcher that does not apply to the point', () => {
    const { userFile, env } = setup({}, { hooks: [{ on: 'run.end', command: 'true', tool: 'Bash' }] });
    expect(() => loadConfig({ repo: null, env, flags: {}, userFile })).toThrow(/"tool" does not apply to run.end hooks/);
  });

  it("maps Claude Code's event names and `|` matchers onto ACIA's points", () => {
    const [pre, stop] = resolveHooks([HookConfig.parse({ on: 'PreToolUse', tool: 'Edit|Write', command: 'x' }), HookConfig.parse({ on: 'Stop', command: 'y' })]);
    expect(pre).toMatchObject({ event: 'tool.pre', claudeCode: 'PreToolUse', tool: ['Edit', 'Write'], id: 'PreToolUse#1' });
    expect(stop).toMatchObject({ event: 'task.post', claudeCode: 'Stop' });
  });

  it('refuses two hooks of the same name', () => {
    expect(() => resolveHooks([HookConfig.parse({ name: 'a', on: 'run.end', command: 'x' }), HookConfig.parse({ name: 'a', on: 'task.pre', command: 'y' })])).toThrow(/two hooks are named "a"/);
  });
});
