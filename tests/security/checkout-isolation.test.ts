// A command in a task worktree (nested in the user's checkout) cannot read the checkout's untracked
// secrets, other tasks' worktrees or the run ledgers — only its own worktree and git metadata.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BwrapRunner } from '../../src/core/sandbox/bwrap-runner.js';
import { sandboxAvailable } from '../helpers/sandbox-available.js';

// Not under /tmp (the sandbox's own /tmp is private) nor $HOME (masked anyway): where repos often live.
const base = mkdtempSync(join(process.cwd(), '.test-checkout-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

describe.skipIf(!sandboxAvailable())('sandboxed commands in a task worktree', () => {
  it('see their own worktree and git history but not the rest of the checkout', async () => {
    const repo = join(base, 'repo');
    mkdirSync(repo);
    const git = (...a: string[]) => execFileSync('git', a, { cwd: repo, encoding: 'utf8' });
    git('init', '-q', '-b', 'main');
    writeFileSync(join(repo, 'README.md'), 'hello\n');
    git('add', '-A');
    git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'base');
    writeFileSync(join(repo, '.env'), 'SECRET=hunter2\n');
    mkdirSync(join(repo, '.acia', 'runs', 'r1'), { recursive: true });
    writeFileSync(join(repo, '.acia', 'runs', 'r1', 'ledger.jsonl'), 'LEDGER-LINE\n');
    const wtA = join(repo, '.acia', 'worktrees', 'r1', 'a');
    const wtB = join(repo, '.acia', 'worktrees', 'r1', 'b');
    git('worktree', 'add', '-q', '-b', 'ta', wtA);
    git('worktree', 'add', '-q', '-b', 'tb', wtB);
    writeFileSync(join(wtB, 'other.txt'), 'OTHER-TASK\n');

    const runner = new BwrapRunner({ root: wtA });
    const run = (cmd: string) => runner.run(cmd, { cwd: wtA, timeoutMs: 10_000 });
    const secret = await run(`cat ${repo}/.env; cat ../../../../.env; cat ${wtB}/other.txt; cat ${repo}/.acia/runs/r1/ledger.jsonl; ls ${repo}`);
    expect(secret.output).not.toContain('hunter2');
    expect(secret.output).not.toContain('OTHER-TASK');
    expect(secret.output).not.toContain('LEDGER-LINE');
    // its own files and read-only git still work
    const own = await run('cat README.md && git log --oneline | wc -l && touch new.txt && echo ok');
    expect(own.output).toContain('hello');
    expect(own.output).toContain('ok');
    expect(own.exitCode).toBe(0);
    const gitWrite = await run(`echo x > ${repo}/.git/hooks/pre-commit`);
    expect(gitWrite.exitCode).not.toBe(0);
  });
});
