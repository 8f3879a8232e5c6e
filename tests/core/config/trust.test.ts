// The trust step for repository config: which keys an untrusted file may set, what trusting records,
// and that a changed file or a link is not trusted.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/core/config/load.js';
import { isRepoFileTrusted, revokeRepoFiles, trustRepoFiles, trustStateOf, trustStorePath } from '../../../src/core/config/trust.js';
import { forTerminal } from '../../../src/core/text/terminal.js';
import { failure } from '../../helpers/failure.js';

function setup(config: object): { repo: string; env: NodeJS.ProcessEnv } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'acia-trust-'));
  const repo = path.join(dir, 'repo');
  fs.mkdirSync(path.join(repo, '.acia'), { recursive: true });
  fs.writeFileSync(path.join(repo, '.acia', 'config.json'), JSON.stringify(config));
  return { repo, env: { HOME: dir, XDG_STATE_HOME: path.join(dir, 'state') } };
}

describe('repository config trust', () => {
  it('applies only narrowing keys from an untrusted file, all of them once trusted, and none of the gated ones after a change', () => {
    const { repo, env } = setup({ sandbox: 'off', model: 'scripted:x.json', parallel: 1, protectedPaths: ['db/'] });
    const file = path.join(repo, '.acia', 'config.json');
    let loaded = loadConfig({ repo, env, flags: {}, userFile: null });
    expect(loaded.config).toMatchObject({ sandbox: 'auto', parallel: 1, protectedPaths: ['db/'] });
    expect(loaded.config.model).not.toContain('scripted');
    expect(loaded.ignored).toEqual({ file, keys: ['sandbox', 'model'], state: 'untrusted' });

    expect(trustRepoFiles(repo, env).map((t) => t.file)).toEqual([file]);
    expect(fs.existsSync(trustStorePath(env))).toBe(true);
    expect(isRepoFileTrusted(repo, '.acia/config.json', env)).toBe(true);
    loaded = loadConfig({ repo, env, flags: {}, userFile: null });
    expect(loaded.config).toMatchObject({ sandbox: 'off', model: 'scripted:x.json' });
    expect(loaded.ignored).toBeNull();

    fs.writeFileSync(file, JSON.stringify({ sandbox: 'off', model: 'scripted:y.json' }));
    expect(trustStateOf(file, fs.readFileSync(file), env)).toBe('changed');
    loaded = loadConfig({ repo, env, flags: {}, userFile: null });
    expect(loaded.config.sandbox).toBe('auto');
    expect(loaded.ignored?.state).toBe('changed');

    trustRepoFiles(repo, env);
    expect(revokeRepoFiles(repo, env)).toEqual([file]);
    expect(isRepoFileTrusted(repo, '.acia/config.json', env)).toBe(false);
  });

  it('refuses a config file that is a link, without reading what it points to', async () => {
    const { repo, env } = setup({});
    const target = path.join(env.HOME!, 'id_rsa');
    fs.writeFileSync(target, 'SECRET');
    fs.rmSync(path.join(repo, '.acia', 'config.json'));
    fs.symlinkSync(target, path.join(repo, '.acia', 'config.json'));
    const e = await failure(Promise.resolve().then(() => loadConfig({ repo, env, flags: {}, userFile: null })));
    expect(e.code).toBe('UNSAFE_REPO');
    expect(e.message).not.toContain('SECRET');
    expect(e.message).toContain('symbolic link');
  });
});

describe('forTerminal', () => {
  it('removes C0 and C1 controls, CR and bidi overrides; keeps tabs, and newlines only when asked', () => {
    const hostile = 'a\u001b]52;c;eA==\u0007b\r\u001b[2Kc\u009b31md\u202Ee\tf\ng';
    expect(forTerminal(hostile)).toBe('a]52;c;eA==b[2Kc31mde\tf g');
    expect(forTerminal(hostile, { newlines: true })).toBe('a]52;c;eA==b[2Kc31mde\tf\ng');
  });
});
