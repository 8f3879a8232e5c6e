// What the sandbox masks, decided on paths and config files alone (the acia-run attacks are in tests/security).
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS, limitNote } from '../../../src/core/sandbox/bwrap-runner.js';
import { checkoutsToMask, maskedDirs, sanitisedGitConfigBinds } from '../../../src/core/sandbox/masks.js';

const base = fs.mkdtempSync(path.join(os.tmpdir(), 'acia-masks-'));
afterAll(() => fs.rmSync(base, { recursive: true, force: true }));
const paths = (commonDir: string, gitDir = commonDir) => ({ dotGit: null, gitDir, commonDir, readOnly: [] });

describe('checkoutsToMask', () => {
  it('hides the checkout holding .acia/worktrees and the work tree owning the git dir, never the root', () => {
    // The user's checkout is a linked worktree of /src/main.
    expect(checkoutsToMask('/w/feature/.acia/worktrees/r1/t1', paths('/src/main/.git', '/src/main/.git/worktrees/t1'))).toEqual(['/src/main', '/w/feature']);
    // The user's checkout is a submodule: the superproject owns the git dir.
    expect(checkoutsToMask('/s/sub/.acia/worktrees/r1/t1', paths('/s/.git/modules/sub', '/s/.git/modules/sub/worktrees/t1'))).toEqual(['/s', '/s/sub']);
    // acia tool in the repo itself: nothing around it.
    expect(checkoutsToMask('/r', paths('/r/.git'))).toEqual([]);
  });

  it('masks HOME by its real path', () => {
    const real = path.join(base, 'real-home');
    fs.mkdirSync(real);
    fs.symlinkSync(real, path.join(base, 'home-link'));
    expect(maskedDirs({ HOME: path.join(base, 'home-link') })).toContain(fs.realpathSync(real));
  });
});

describe('sanitisedGitConfigBinds', () => {
  it('keeps the format keys and drops remotes, tokens, extra headers and core.worktree', () => {
    const repo = path.join(base, 'repo');
    fs.mkdirSync(repo);
    const git = (...a: string[]) => execFileSync('git', a, { cwd: repo, encoding: 'utf8' });
    git('init', '-q');
    git('config', 'remote.origin.url', 'https://x:ghs_TOKEN@github.com/o/r');
    git('config', 'http.extraheader', 'AUTHORIZATION: basic SECRET');
    git('config', 'core.worktree', '/elsewhere');
    git('config', 'extensions.worktreeConfig', 'true');
    fs.mkdirSync(path.join(repo, '.git', 'modules', 'm'), { recursive: true });
    fs.writeFileSync(path.join(repo, '.git', 'modules', 'm', 'config'), '[remote "origin"]\n\turl = https://x:MODTOKEN@h/r\n');
    const scratch = path.join(base, 'scratch');
    fs.mkdirSync(scratch);
    const binds = sanitisedGitConfigBinds(paths(path.join(repo, '.git')), scratch);
    expect(binds.map(([, dest]) => path.relative(repo, dest)).sort()).toEqual(['.git/config', '.git/modules/m/config']);
    const text = binds.map(([src]) => fs.readFileSync(src, 'utf8')).join('\n');
    expect(text).not.toMatch(/TOKEN|SECRET|elsewhere|remote|http/);
    expect(text).toContain('repositoryformatversion = 0');
    expect(text).toContain('worktreeconfig = true');
  });
});

describe('limitNote', () => {
  const outcome = (output: string, exitCode = 1) => ({ exitCode, signal: null, timedOut: false, output, truncated: false, durationMs: 1 });
  it('names the limit a failed command hit, and stays quiet otherwise', () => {
    expect(limitNote(outcome('MemoryError'), DEFAULT_LIMITS, false)).toContain('out of memory; each command may use 4096 MiB');
    expect(limitNote(outcome('killed'), DEFAULT_LIMITS, true)).toContain('out of memory');
    expect(limitNote(outcome('write: No space left on device'), DEFAULT_LIMITS, false)).toContain('/tmp holds 1024 MiB');
    expect(limitNote(outcome('MemoryError', 0), DEFAULT_LIMITS, false)).toBeNull();
    expect(limitNote(outcome('assertion failed'), DEFAULT_LIMITS, false)).toBeNull();
  });
});

describe.skipIf(!fs.existsSync(path.resolve(import.meta.dirname, '../../../dist/core/sandbox/close-fds.js')))('closeInheritedFds', () => {
  it('closes an fd handed down without close-on-exec, so a child process does not get it', () => {
    const file = path.join(base, 'target.txt');
    fs.writeFileSync(file, '');
    const fd = fs.openSync(file, 'r+');
    const mod = path.resolve(import.meta.dirname, '../../../dist/core/sandbox/close-fds.js'); // the built module: Node 20 runs no .ts
    const script = `import { closeInheritedFds } from ${JSON.stringify(mod)}; const closed = closeInheritedFds(); const { execSync } = await import('node:child_process'); console.log(JSON.stringify({ closed, child: execSync('ls /proc/self/fd', { encoding: 'utf8' }).split('\\n').filter(Boolean) }));`;
    const stdio: ('pipe' | 'ignore' | number)[] = ['ignore', 'pipe', 'pipe', ...Array.from({ length: 40 }, (): 'ignore' => 'ignore')];
    stdio[40] = fd;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { stdio, encoding: 'utf8' });
    fs.closeSync(fd);
    const out = JSON.parse(r.stdout) as { closed: number[]; child: string[] };
    expect(out.closed).toContain(40);
    expect(out.child).not.toContain('40');
  });
});
