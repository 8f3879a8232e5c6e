// A worker's own policy over submitted runs: the settings a submitter may choose, the sandbox kept on,
// scripted models only from the worker's named directories, budgets capped, and repository URLs matched
// against the worker's list after normalising them the way git will read them.
import { mkdirSync, mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { admitJob, applyWorkerPolicy, checkBase, checkRepoUrl, parseRemote, type WorkerPolicy } from '../../src/fleet/worker-policy.js';

const policy = (o: Partial<WorkerPolicy> = {}): WorkerPolicy => ({ repos: [], allowSandboxOff: false, scriptedModelDirs: [], ...o });
const refused = (fn: () => unknown, says: RegExp) => expect(fn).toThrow(says);

describe('a worker’s policy over submitted settings', () => {
  it('passes what acia submit sends, and refuses any other key', () => {
    const s = { model: 'anthropic:claude-sonnet-5-5', parallel: 2, maxIterations: 1, budget: { maxCostUsd: 1, maxTokens: 1000 }, testCommand: 'npm test', sandbox: 'auto' };
    expect(applyWorkerPolicy(policy(), s)).toEqual(s);
    for (const key of ['anthropicBaseUrl', 'mcpServers', 'devAgent', 'devAgents', 'allowedHosts', 'prices', 'setup', 'fleetWorker', 'meteringProxy']) {
      refused(() => applyWorkerPolicy(policy(), { [key]: 'x' }), new RegExp(`may not set "${key}"`));
    }
    refused(() => applyWorkerPolicy(policy(), { budget: { maxMinutes: 1 } }), /may not set/);
    refused(() => applyWorkerPolicy(policy(), { parallel: 999 }), /parallel/);
  });

  it('keeps the sandbox on unless the worker allows off', () => {
    refused(() => applyWorkerPolicy(policy(), { sandbox: 'off' }), /--sandbox off/);
    expect(() => applyWorkerPolicy(policy(), { sandbox: 'off' })).toThrow(expect.objectContaining({ code: 'FLEET_POLICY', hint: expect.stringMatching(/fleetWorker\.allowSandboxOff/) }));
    expect(applyWorkerPolicy(policy({ allowSandboxOff: true }), { sandbox: 'off' })).toEqual({ sandbox: 'off' });
  });

  it('takes a scripted model file only from under a directory the worker names, links resolved', () => {
    const dir = mkdtempSync(join(tmpdir(), 'acia-policy-scripts-'));
    const elsewhere = mkdtempSync(join(tmpdir(), 'acia-policy-else-'));
    symlinkSync(elsewhere, join(dir, 'link'));
    const p = policy({ scriptedModelDirs: [dir] });
    expect(applyWorkerPolicy(p, { model: `scripted:${dir}/a.json` })).toEqual({ model: `scripted:${dir}/a.json` });
    expect(applyWorkerPolicy(p, { model: `chaos:${dir}/a.json,seed=2` })).toEqual({ model: `chaos:${dir}/a.json,seed=2` });
    for (const model of ['scripted:/etc/passwd', `scripted:${dir}/../x.json`, `scripted:${dir}-other/a.json`, `scripted:${dir}/link/a.json`, 'scripted:relative.json', `chaos:/etc/passwd,seed=1`]) {
      refused(() => applyWorkerPolicy(p, { model }), /scriptedModelDirs/);
    }
    refused(() => applyWorkerPolicy(policy(), { model: `scripted:${dir}/a.json` }), /scriptedModelDirs/);
  });

  it('caps the budget at the worker’s limits, and gives one to a run submitted without', () => {
    const p = policy({ maxCostUsd: 2, maxTokens: 5000 });
    expect(applyWorkerPolicy(p, { budget: { maxCostUsd: 10, maxTokens: 100 } })).toEqual({ budget: { maxCostUsd: 2, maxTokens: 100 } });
    expect(applyWorkerPolicy(p, {})).toEqual({ budget: { maxCostUsd: 2, maxTokens: 5000 } });
    expect(applyWorkerPolicy(policy(), { budget: { maxCostUsd: 10 } })).toEqual({ budget: { maxCostUsd: 10 } });
  });
});

describe('the repositories a worker serves', () => {
  const root = mkdtempSync(join(tmpdir(), 'acia-policy-repos-'));
  mkdirSync(join(root, 'served', 'app.git'), { recursive: true });
  mkdirSync(join(root, 'private', 'secret.git'), { recursive: true });
  symlinkSync(join(root, 'private'), join(root, 'served', 'escape'));
  const p = policy({ repos: ['https://github.com/acme', 'ssh://git@git.example.com:2222/team', join(root, 'served'), 'git://mirror.example.com'] });
  const ok = (url: string) => expect(() => checkRepoUrl(p, url), url).not.toThrow();
  const no = (url: string) => expect(() => checkRepoUrl(p, url), url).toThrow(/refused by the worker's policy/);

  it('matches scheme, host, port and a path prefix at a segment boundary', () => {
    ok('https://github.com/acme/app.git');
    ok('https://GitHub.com/acme');
    ok('https://user:token@github.com/acme/app');
    no('https://github.com/acme-evil/app.git');
    no('https://github.com/acme/../victim/app.git');
    no('https://github.com/acme/%2e%2e/victim/app.git');
    no('https://github.com.evil.example/acme/app.git');
    no('https://github.com@evil.example/acme/app.git');
    no('http://github.com/acme/app.git');
    no('https://github.com:444/acme/app.git');
    ok('ssh://git@git.example.com:2222/team/app.git');
    no('ssh://git@git.example.com/team/app.git');
    ok('git://mirror.example.com/anything.git');
  });

  it('reads local paths and file URLs by real path: no escape through .. or a link, no other directory', () => {
    ok(join(root, 'served', 'app.git'));
    ok(`file://${join(root, 'served', 'app.git')}`);
    no(join(root, 'private', 'secret.git'));
    no(`file://${join(root, 'private', 'secret.git')}`);
    no(`${join(root, 'served')}/../private/secret.git`);
    no(join(root, 'served', 'escape', 'secret.git'));
    no('file://otherhost/srv/git/app.git');
    no('/etc');
  });

  it('refuses what git would read as an option or a command, and anything that is not a URL or absolute path', () => {
    for (const url of ['--upload-pack=touch /tmp/pwned', '-uevil', 'ext::sh -c touch% /tmp/pwned', 'fd::3', 'relative/app.git', '', 'https://github.com/acme/app\n.git', 'ftp://github.com/acme/app.git']) no(url);
    expect(parseRemote('git@github.com:acme/app.git')).toEqual({ scheme: 'ssh', host: 'github.com', port: '', path: '/acme/app.git' });
    expect(() => checkRepoUrl(policy({ repos: ['ssh://git@github.com/acme'] }), 'git@github.com:acme/app.git')).not.toThrow();
    expect(() => checkRepoUrl(policy(), 'https://github.com/acme/app.git')).toThrow(/fleetWorker\.repos/);
  });

  it('refuses a base git could read as an option, and checks the whole job in one call', () => {
    for (const base of ['--orphan=x', '-b', 'main\nHEAD', '', 'a b']) expect(() => checkBase(base), base).toThrow(/not a commit or branch/);
    expect(() => checkBase('main')).not.toThrow();
    expect(() => checkBase('0123abcd')).not.toThrow();
    const job = { runId: '20261127-000000-abcdef', repoUrl: 'https://github.com/acme/app', base: 'main', settings: { parallel: 2 } };
    expect(admitJob(p, job)).toEqual({ parallel: 2 });
    expect(() => admitJob(p, { ...job, settings: { sandbox: 'off' } })).toThrow(/sandbox off/);
    for (const runId of ['../etc', 'a/b', '.ssh', 'a..b']) expect(() => admitJob(p, { ...job, runId }), runId).toThrow(/not a plain name/);
  });
});
