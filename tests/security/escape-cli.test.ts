// Real attacks through the built `acia tool`, each asserting the host is untouched and nothing leaks.
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxAvailable } from '../helpers/sandbox-available.js';
import { aciaTool, CLI, expectNoLeak, makeFixture, SECRET, type Fixture } from './fixture.js';

const sandboxed = sandboxAvailable() && fs.existsSync(CLI);
let fx: Fixture;
beforeAll(() => {
  fx = makeFixture();
});
afterAll(() => fx.cleanup());

describe.skipIf(!sandboxed)('escape suite through `acia tool` (bwrap)', () => {
  it('refuses path traversal and absolute paths outside, exit 0 with ok:false', async () => {
    for (const p of ['../outside/secret.txt', 'a/../../outside/secret.txt', path.join(fx.outside, 'secret.txt'), '/etc/passwd']) {
      const r = await aciaTool(fx, 'read_file', { path: p });
      expect(r.exitCode).toBe(0);
      expect(r.result.ok).toBe(false);
      expectNoLeak(JSON.stringify(r.result));
    }
  });

  it('refuses symlinks to a file and to a directory outside, for reads and writes', async () => {
    fs.symlinkSync(path.join(fx.outside, 'secret.txt'), path.join(fx.repo, 'file-link'));
    fs.symlinkSync(fx.outside, path.join(fx.repo, 'dir-link'));
    const reads = await Promise.all([aciaTool(fx, 'read_file', { path: 'file-link' }), aciaTool(fx, 'read_file', { path: 'dir-link/secret.txt' })]);
    const writes = await Promise.all([
      aciaTool(fx, 'write_file', { path: 'file-link', content: 'pwned' }),
      aciaTool(fx, 'write_file', { path: 'dir-link/planted', content: 'pwned' }),
      aciaTool(fx, 'edit_file', { path: 'file-link', old: SECRET, new: 'pwned' }),
    ]);
    for (const r of [...reads, ...writes]) {
      expect(r.result.ok).toBe(false);
      expectNoLeak(JSON.stringify(r.result));
    }
    expect(fs.readFileSync(path.join(fx.outside, 'secret.txt'), 'utf8')).toBe(SECRET);
    expect(fs.existsSync(path.join(fx.outside, 'planted'))).toBe(false);
  });

  it('refuses to write through a symlink a command created after start', async () => {
    const made = await aciaTool(fx, 'run_command', { command: `ln -s ${path.join(fx.outside, 'secret.txt')} made-link && ln -s ${fx.outside} made-dir && echo linked` });
    expect(made.result.forModel).toContain('linked');
    const w1 = await aciaTool(fx, 'write_file', { path: 'made-link', content: 'pwned' });
    const w2 = await aciaTool(fx, 'write_file', { path: 'made-dir/x', content: 'pwned' });
    expect(w1.result.ok).toBe(false);
    expect(w2.result.ok).toBe(false);
    expect(fs.readFileSync(path.join(fx.outside, 'secret.txt'), 'utf8')).toBe(SECRET);
    expect(fs.existsSync(path.join(fx.outside, 'x'))).toBe(false);
  });

  it('hides HOME and /root from commands and keeps secrets out of the environment', async () => {
    const r = await aciaTool(fx, 'run_command', {
      command: `env; cat ${fx.home}/.secret; ls -la ${fx.home} /root; cat /proc/1/environ; cat /etc/shadow; echo HOME=$HOME`,
    });
    expect(r.exitCode).toBe(0);
    const out = r.result.forModel;
    // HOME is the user's own path, but a private, empty one: the fixture's .secret is not in it.
    expect(out).toContain(`HOME=${fs.realpathSync(fx.home)}\n`);
    expectNoLeak(out);
    expect(out).not.toMatch(/ANTHROPIC_|FOO_TOKEN|AWS_|GITHUB_/);
  });

  it('keeps commands from writing outside the worktree or into git metadata', async () => {
    const target = path.join(fx.base, 'escaped');
    const r = await aciaTool(fx, 'run_command', {
      command: `echo pwned > ${target}; echo pwned > ${fx.outside}/x; echo pwned > .git/hooks/pre-commit; echo '[core] fsmonitor = touch /tmp/pwn' >> .git/config; mv .git .git-moved; rm -rf .git; echo inside > ok.txt`,
    });
    expect(r.exitCode).toBe(0);
    expect(fs.existsSync(target)).toBe(false);
    expect(fs.existsSync(path.join(fx.outside, 'x'))).toBe(false);
    expect(fs.existsSync(path.join(fx.repo, '.git/hooks/pre-commit'))).toBe(false);
    expect(fs.readFileSync(path.join(fx.repo, '.git/config'), 'utf8')).not.toContain('fsmonitor');
    expect(fs.statSync(path.join(fx.repo, '.git')).isDirectory()).toBe(true);
    expect(fs.readFileSync(path.join(fx.repo, 'ok.txt'), 'utf8')).toBe('inside\n');
  });

  it('refuses .git writes through the file tools', async () => {
    const rs = await Promise.all([
      aciaTool(fx, 'write_file', { path: '.git/hooks/post-checkout', content: '#!/bin/sh\ntouch /tmp/pwn' }),
      aciaTool(fx, 'write_file', { path: '.git/config', content: '[core]\n\thooksPath = .' }),
      aciaTool(fx, 'write_file', { path: '.git', content: 'gitdir: /tmp/evil' }),
      aciaTool(fx, 'read_file', { path: '.git/config' }),
    ]);
    for (const r of rs) expect(r.result.ok).toBe(false);
    expect(fs.existsSync(path.join(fx.repo, '.git/hooks/post-checkout'))).toBe(false);
  });

  it('has no network: a server on 127.0.0.1 receives nothing', async () => {
    let hits = 0;
    const server = http.createServer((_req, res) => {
      hits++;
      res.end('REACHED');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    try {
      const r = await aciaTool(fx, 'run_command', {
        command: `curl -s -m 3 http://127.0.0.1:${port}/ ; node -e "fetch('http://127.0.0.1:${port}/').then(r=>r.text()).then(console.log,e=>console.log('blocked',e.cause&&e.cause.code))"`,
      });
      expect(r.result.forModel).not.toContain('REACHED');
      expect(r.result.forModel).toContain('blocked');
      expect(hits).toBe(0);
    } finally {
      server.close();
    }
  });

  it('stops an endless loop at the timeout and endless output at the cap', async () => {
    const loop = await aciaTool(fx, 'run_command', { command: 'while :; do :; done', timeout_s: 1 }, ['--timeout', '1']);
    expect(loop.exitCode).toBe(0);
    expect(loop.result.data).toMatchObject({ timedOut: true });
    const spew = await aciaTool(fx, 'run_command', { command: 'yes leak' }, ['--timeout', '20']);
    expect(spew.result.data).toMatchObject({ truncated: true, timedOut: false });
    expect(spew.result.forModel.length).toBeLessThan(40_000);
  });

  it('bounds a fork bomb and the host keeps working', async () => {
    const bomb = await aciaTool(fx, 'run_command', { command: 'bomb(){ bomb | bomb & }; bomb; sleep 1' }, ['--timeout', '3']);
    expect(bomb.exitCode).toBe(0);
    const after = await aciaTool(fx, 'run_command', { command: 'echo alive' });
    expect(after.result.forModel).toContain('alive');
  });

  it('cannot kill or see host processes, nor create a user namespace', async () => {
    const r = await aciaTool(fx, 'run_command', { command: `kill -9 ${process.pid}; ps ax | wc -l; unshare -U true && echo NESTED-USERNS` });
    expect(r.result.forModel).not.toContain('NESTED-USERNS');
    expect(process.pid).toBeGreaterThan(0); // we are still alive to assert this
  });

  it('exits 2 on usage errors', async () => {
    expect((await aciaTool(fx, 'no_such_tool', {})).exitCode).toBe(2);
    const bad = await aciaTool(fx, 'read_file', {}, []);
    expect(bad.exitCode).toBe(0); // the tool ran; the input error goes to the model
    expect(bad.result.ok).toBe(false);
  });
});
