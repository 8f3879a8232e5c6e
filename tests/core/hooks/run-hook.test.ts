// Running a hook: the document on stdin, ACIA's variables, stdout and stderr apart; a hook that hangs
// (children holding its pipes included) is killed at its timeout, and one outside the sandbox starts as a
// host process in an empty directory.
import { mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HookConfig, resolveHooks } from '../../../src/core/hooks/config.js';
import { runHook } from '../../../src/core/hooks/run-hook.js';
import type { HookOccurrence } from '../../../src/core/hooks/occurrence.js';
import { HostRunner } from '../../../src/core/sandbox/host-runner.js';

const wt = realpathSync(mkdtempSync(join(tmpdir(), 'acia-hookrun-')));
const occ: HookOccurrence = {
  event: 'tool.pre',
  cwd: wt,
  ledgerPath: '/l',
  ledgerSeq: 7,
  run: { id: 'r1', goal: 'g', branch: 'acia/r1', baseCommit: 'c' },
  plan: null,
  task: { id: 't1', kind: 'dev.fix', title: null, input: {}, attempt: 2, branch: null, worktree: wt },
  agent: { name: 'dev:t1', role: 'dev', attempt: 2 },
  tool: { name: 'run_command', useId: 'u1', input: { command: 'rm -rf /' } },
};
const hook = (command: string, extra: Record<string, unknown> = {}) => resolveHooks([HookConfig.parse({ on: 'tool.pre', command, ...extra })])[0]!;
const options = { runner: new HostRunner(), writable: [wt], parentEnv: process.env };

describe('runHook', () => {
  it('hands the document on stdin and the variables in the environment; reads the answer apart from the reason', async () => {
    const r = await runHook(hook(`jq -r .tool_input.command >&2; echo "$ACIA_HOOK_EVENT $ACIA_TASK_ID $PWD $CLAUDE_PROJECT_DIR" >&2; echo '{"decision":"block","reason":"no"}'`), occ, options);
    expect(JSON.parse(r.input)).toMatchObject({ tool_input: { command: 'rm -rf /' }, agent: { name: 'dev:t1' } });
    expect(r.exec.stderr).toBe(`rm -rf /\ntool.pre t1 ${wt} ${wt}\n`);
    expect(r.verdict).toEqual({ allow: false, reason: 'no' });
  });

  it('kills a hook that hangs, children and all, at its timeout: a denial, not a hang', async () => {
    const started = Date.now();
    const r = await runHook(hook('sleep 60 & sleep 60; echo never', { timeoutS: 0.5 }), occ, options);
    expect(r.exec.timedOut).toBe(true);
    expect(r.verdict).toMatchObject({ allow: false, failure: 'timed_out' });
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it('cuts a hook short at what is left of the run (--max-minutes)', async () => {
    const r = await runHook(hook('sleep 60', { timeoutS: 600 }), occ, { ...options, timeoutMs: 300 });
    expect(r.verdict).toMatchObject({ allow: false, failure: 'timed_out', reason: expect.stringContaining('timed out after 0.3s') as unknown });
  });

  it('denies when the hook crashes, with what it printed', async () => {
    const r = await runHook(hook('echo "boom: undefined is not a function" >&2; exit 1'), occ, options);
    expect(r.verdict).toEqual({ allow: false, failure: 'crashed', reason: 'hook tool.pre#1 failed with exit code 1:\nboom: undefined is not a function' });
  });

  it("runs a user's hook outside the sandbox as a host process: an empty directory, the worktree by variable", async () => {
    const script = join(mkdtempSync(join(tmpdir(), 'acia-hookscript-')), 'where.sh');
    writeFileSync(script, 'pwd; echo "$ACIA_WORKTREE"; cat >/dev/null\n', { mode: 0o755 });
    const h = resolveHooks([HookConfig.parse({ on: 'tool.pre', command: script, sandbox: false, origin: { file: 'user.json', user: true } })])[0]!;
    const r = await runHook(h, occ, options);
    const [cwd, worktree] = r.exec.stdout.trim().split('\n');
    expect(cwd).not.toBe(wt);
    expect(cwd).toMatch(/acia-host-/);
    expect(worktree).toBe(wt);
    expect(r.verdict).toEqual({ allow: true });
  });

  it("never runs an unsandboxed hook's script from the worktree the agent writes, by relative or absolute path", async () => {
    writeFileSync(join(wt, 'gate.sh'), 'exit 0\n', { mode: 0o755 });
    const unsandboxed = (command: string) => resolveHooks([HookConfig.parse({ on: 'tool.pre', command, sandbox: false, origin: { file: 'user.json', user: true } })])[0]!;
    const relative = await runHook(unsandboxed('./gate.sh'), occ, options);
    expect(relative.verdict).toMatchObject({ allow: false, failure: 'not_started', reason: expect.stringContaining('./gate.sh is a relative path') as unknown });
    const absolute = await runHook(unsandboxed(`${join(wt, 'gate.sh')} --strict`), occ, options);
    expect(absolute.verdict).toMatchObject({ allow: false, failure: 'not_started', reason: expect.stringContaining('is a file an agent or the repository can write') as unknown });
  });
});
