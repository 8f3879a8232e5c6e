// The task view: a task worktree shown at its checkout's path, so every absolute path an installed
// environment carries (workspace links, pnpm's .pnpm links, an editable install's .pth) lands in the task's
// tree; tools in the user's home visible read-only and nothing else of it; git still readable.
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BwrapRunner } from '../../../src/core/sandbox/bwrap-runner.js';
import { HostRunner } from '../../../src/core/sandbox/host-runner.js';
import { checkHomeEntry } from '../../../src/core/contain/home-entry.js';
import * as nodeFs from 'node:fs';
import { resolvePath } from '../../../src/core/tools/fs-access.js';
import { sandboxAvailable } from '../../helpers/sandbox-available.js';

// Not under /tmp (the sandbox's own /tmp is private) nor a home: where checkouts usually live.
const base = realpathSync(mkdtempSync(join(process.cwd(), '.test-view-')));
afterAll(() => rmSync(base, { recursive: true, force: true }));

function write(path: string, text: string): void {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
}

/**
 * A workspace checkout as npm/pnpm leave it: packages/core and packages/app committed; untracked
 * node_modules with a workspace link, a pnpm-style link inside .pnpm, and a venv whose editable
 * install names the checkout's src/.
 */
function checkout(name: string): { repo: string; wt: string } {
  const repo = join(base, name);
  mkdirSync(repo);
  const git = (...a: string[]) => execFileSync('git', a, { cwd: repo, encoding: 'utf8' });
  git('init', '-q', '-b', 'main');
  write(join(repo, 'package.json'), '{"name":"root","workspaces":["packages/*"]}\n');
  write(join(repo, 'packages/core/package.json'), '{"name":"@s/core","main":"index.js"}\n');
  write(join(repo, 'packages/core/index.js'), 'module.exports = "CHECKOUT-CORE";\n');
  write(join(repo, 'pyproject.toml'), '[project]\nname = "slugs"\n');
  write(join(repo, 'src/slugs/__init__.py'), 'WHERE = "CHECKOUT-SRC"\n');
  write(join(repo, '.gitignore'), 'node_modules/\n.venv/\n');
  git('add', '-A');
  git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'base');
  mkdirSync(join(repo, 'node_modules/@s'), { recursive: true });
  symlinkSync('../../packages/core', join(repo, 'node_modules/@s/core'));
  write(join(repo, 'node_modules/.pnpm/dep@1/node_modules/dep/index.js'), 'module.exports = require("@s/hoisted");\n');
  mkdirSync(join(repo, 'node_modules/.pnpm/node_modules/@s'), { recursive: true });
  symlinkSync('../../../../packages/core', join(repo, 'node_modules/.pnpm/node_modules/@s/hoisted'));
  symlinkSync('.pnpm/dep@1/node_modules/dep', join(repo, 'node_modules/dep'));
  execFileSync('/usr/bin/python3', ['-m', 'venv', '--without-pip', join(repo, '.venv')]);
  const site = execFileSync(join(repo, '.venv/bin/python'), ['-c', 'import sysconfig; print(sysconfig.get_paths()["purelib"])'], { encoding: 'utf8' }).trim();
  writeFileSync(join(site, '_slugs.pth'), `${join(repo, 'src')}\n`);
  const wt = join(repo, '.acia/worktrees/r1/t1');
  git('worktree', 'add', '-q', '-b', 't1', wt);
  // The task changed both packages.
  writeFileSync(join(wt, 'packages/core/index.js'), 'module.exports = "TASK-CORE";\n');
  writeFileSync(join(wt, 'src/slugs/__init__.py'), 'WHERE = "TASK-SRC"\n');
  return { repo, wt };
}

const probe = `node -e 'console.log(require("@s/core"), require("dep"))' && .venv/bin/python -c 'import slugs; print(slugs.WHERE)'`;

describe.skipIf(!sandboxAvailable())('the task view in the sandbox', () => {
  it('resolves workspace links, links inside the originals and editable installs into the task tree', async () => {
    const { repo, wt } = checkout('sandboxed');
    const runner = new BwrapRunner({ root: wt });
    runner.layDependencies();
    const r = await runner.run(`pwd && ${probe} && git log --oneline | wc -l && git status --porcelain | head -3`, { cwd: wt, timeoutMs: 20_000 });
    expect(r.exitCode, r.output).toBe(0);
    const lines = r.output.split('\n');
    expect(lines[0]).toBe(repo);
    expect(lines[1]).toBe('TASK-CORE TASK-CORE');
    expect(lines[2]).toBe('TASK-SRC');
    expect(lines[3]!.trim()).toBe('1');
    // What the originals hold cannot be changed from there, nor through the second view of the task tree.
    for (const attack of ['echo x > /tmp/.acia-originals/packages/core/index.js', `echo x > ${repo}/.venv/pyvenv.cfg`, 'echo x > .git']) {
      expect((await runner.run(attack, { cwd: wt, timeoutMs: 10_000 })).exitCode, attack).not.toBe(0);
    }
    expect(readFileSync(join(repo, 'packages/core/index.js'), 'utf8')).toContain('CHECKOUT-CORE');
  });

  it("gives pip's installer the task's own copy of the venv, at the same path, and never writes the user's", async () => {
    const { repo, wt } = checkout('pip-copy');
    const runner = new BwrapRunner({ root: wt });
    runner.layDependencies();
    // Any pip install or uninstall gets the copy first (this venv has no pip: the command fails after it).
    const pip = await runner.run('.venv/bin/python -m pip uninstall -y nothing; echo NEW > .venv/added && cat .venv/added', { cwd: wt, timeoutMs: 30_000 });
    expect(pip.output).toContain('NEW');
    // A later command sees the task's copy (the original is no longer bound over it), still working at the
    // checkout's path with the editable install resolving into the task's src/.
    const later = await runner.run(`cat .venv/added && ${probe}`, { cwd: wt, timeoutMs: 20_000 });
    expect(later.exitCode, later.output).toBe(0);
    expect(later.output).toBe('NEW\nTASK-CORE TASK-CORE\nTASK-SRC\n');
    expect(existsSync(join(repo, '.venv/added'))).toBe(false);
    expect(existsSync(join(wt, '.venv/added'))).toBe(true);
  });
});

describe('the host layout (--sandbox off)', () => {
  it('resolves workspace links and editable installs into the task tree too', async () => {
    const { wt } = checkout('host');
    const runner = new HostRunner();
    runner.layDependencies(wt);
    const r = await runner.run(probe, { cwd: wt, timeoutMs: 20_000 });
    expect(r.exitCode, r.output).toBe(0);
    // Not a package reached from inside the originals (node resolves from its real path there, in the
    // checkout): without a sandbox there is no second view of the task's tree (docs/sandbox.md).
    expect(r.output).toBe('TASK-CORE CHECKOUT-CORE\nTASK-SRC\n');
    // pip's installer gets a copy in place of the link to the user's venv: nothing is written through it.
    const pip = await runner.run('.venv/bin/python -m pip install --no-index nothing; echo NEW > .venv/added', { cwd: wt, timeoutMs: 30_000 });
    expect(pip.exitCode, pip.output).toBe(0);
    expect(lstatSync(join(wt, '.venv')).isDirectory()).toBe(true);
    expect(existsSync(join(wt, '.venv/added'))).toBe(true);
    expect(existsSync(join(realpathSync(join(wt, '..', '..', '..', '..')), '.venv/added'))).toBe(false);
    expect((await runner.run(probe, { cwd: wt, timeoutMs: 20_000 })).output).toContain('TASK-SRC');
  });
});

describe.skipIf(!sandboxAvailable())("the user's home in the sandbox", () => {
  it('shows package managers read-only and tools on PATH, never keys or tokens', async () => {
    const home = join(base, 'user-home');
    write(join(home, '.ssh/id_rsa'), 'PRIVATE-KEY\n');
    write(join(home, '.yarn/berry/cache/pkg.zip'), 'ZIP\n');
    write(join(home, '.cache/node/corepack/v1/pnpm/9.15.9/package.json'), '{"name":"pnpm"}\n');
    write(join(home, '.npmrc'), 'store-dir=/x/store\n//registry.npmjs.org/:_authToken=NPM-TOKEN\n');
    write(join(home, '.yarnrc.yml'), 'enableGlobalCache: true\nnpmAuthToken: YARN-TOKEN\n');
    write(join(home, '.config/pip/pip.conf'), '[global]\nindex-url = https://pypi.example/simple\nextra-index-url = https://me:PIP-TOKEN@private.example/simple\n');
    write(join(home, '.local/lib/node_modules/mytool/package.json'), '{"name":"mytool"}\n');
    write(join(home, '.local/lib/node_modules/mytool/bin.js'), '#!/bin/sh\necho MYTOOL-RAN\n');
    chmodSync(join(home, '.local/lib/node_modules/mytool/bin.js'), 0o755);
    mkdirSync(join(home, '.local/bin'), { recursive: true });
    symlinkSync('../lib/node_modules/mytool/bin.js', join(home, '.local/bin/pnpm'));
    const { wt } = checkout('with-home');
    const env = { HOME: home, PATH: `${join(home, '.local/bin')}:${process.env.PATH ?? '/usr/bin:/bin'}` };
    const runner = new BwrapRunner({ root: wt, parentEnv: env });
    runner.layDependencies();
    const r = await runner.run(
      'echo HOME=$HOME; cat ~/.yarn/berry/cache/pkg.zip ~/.cache/node/corepack/v1/pnpm/9.15.9/package.json ~/.npmrc ~/.yarnrc.yml ~/.config/pip/pip.conf; pnpm; cat ~/.ssh/id_rsa; ls ~/.local/lib/node_modules; touch ~/.yarn/berry/cache/new || echo RO-OK; touch ~/scratch && echo HOME-WRITABLE',
      { cwd: wt, timeoutMs: 20_000 },
    );
    expect(r.output).toContain(`HOME=${home}\n`);
    expect(r.output).toContain('ZIP');
    expect(r.output).toContain('{"name":"pnpm"}');
    expect(r.output).toContain('store-dir=/x/store');
    expect(r.output).toContain('enableGlobalCache: true');
    expect(r.output).toContain('index-url = https://pypi.example/simple');
    expect(r.output).toContain('MYTOOL-RAN');
    expect(r.output).toContain('RO-OK');
    expect(r.output).toContain('HOME-WRITABLE');
    expect(r.output).not.toMatch(/PRIVATE-KEY|NPM-TOKEN|YARN-TOKEN|PIP-TOKEN/);
    expect(existsSync(join(home, 'scratch'))).toBe(false);
  });
});

describe('checkHomeEntry', () => {
  it('refuses links, the home itself, and anything that uncovers a credential store or a hidden checkout', () => {
    const home = join(base, 'h2');
    mkdirSync(join(home, '.ssh'), { recursive: true });
    mkdirSync(join(home, 'tools'), { recursive: true });
    symlinkSync(join(home, '.ssh'), join(home, 'link-to-ssh'));
    const repo = join(base, 'c2');
    mkdirSync(join(repo, 'node_modules'), { recursive: true });
    const tool = (p: string) => checkHomeEntry(p, home, [repo]).ok;
    expect(tool(join(home, 'tools'))).toBe(true);
    expect(tool(home)).toBe(false);
    expect(tool(join(home, '.ssh'))).toBe(false);
    expect(tool(join(home, 'link-to-ssh'))).toBe(false);
    expect(tool(base)).toBe(false); // holds the home and the checkout
    expect(tool(join(repo, 'node_modules'))).toBe(false); // inside a hidden checkout
  });
});

describe('file tools and the view path', () => {
  it('read an absolute path under the checkout, as test output prints it, from the worktree', () => {
    const { repo, wt } = checkout('view-path');
    const plain = { root: wt, fs: nodeFs, runner: new HostRunner(), commandTimeoutS: 10 };
    const ctx = { ...plain, viewRoot: repo };
    const r = resolvePath(ctx, join(repo, 'packages/core/index.js'));
    expect(r.abs).toBe(join(wt, 'packages/core/index.js'));
    expect(readFileSync(r.abs, 'utf8')).toContain('TASK-CORE');
    // Without a view, that path is the checkout's, outside the worktree: refused as before.
    expect(() => resolvePath(plain, join(repo, 'packages/core/index.js'))).toThrow(/outside/);
    // The worktree's own absolute paths still work.
    expect(resolvePath(ctx, join(wt, 'package.json')).rel).toBe('package.json');
  });
});
