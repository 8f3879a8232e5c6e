// Drives a whole `acia run` through the built CLI with a scripted model that performs an attack: the PM
// plans one dev task, and the "injected" dev agent makes the tool calls the test gives it.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { execa } from 'execa';
import { CLI, ENV_SECRETS, type Fixture } from './fixture.js';

export interface ToolCall {
  name: string;
  input: Record<string, unknown>;
}

export interface RunAttackResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** One dev task `t1`; each element of `turns` is one model turn of the dev agent, then it returns. */
export function attackScript(turns: ToolCall[][], summary = 'done'): unknown {
  const task = { id: 't1', capability: 'dev.implement', title: 'Do the thing', input: { instructions: 'do the thing' } };
  const plan = (id: string) => ({ id, rationale: 'one task', tasks: [task], edges: [] });
  return {
    version: 1,
    model: 'claude-sonnet-5-5',
    turns: [
      { caller: 'pm', toolCalls: [{ name: 'return_result', input: { plans: [plan('plan-A'), plan('plan-B')], chosenPlanId: 'plan-A', selectionRationale: 'smallest' } }] },
      ...turns.map((toolCalls) => ({ caller: 'dev:t1', toolCalls })),
      { caller: 'dev:t1', toolCalls: [{ name: 'return_result', input: { summary } }] },
    ],
  };
}

/** `acia run` in the fixture's repo, sandboxed, with fake secrets in the environment and the fixture's HOME. */
export async function runAttack(fx: Fixture, turns: ToolCall[][], extraArgs: string[] = [], env: Record<string, string> = {}): Promise<RunAttackResult> {
  const script = path.join(fx.base, `script-${Date.now()}-${Math.random().toString(36).slice(2)}.json`);
  fs.writeFileSync(script, JSON.stringify(attackScript(turns)));
  const r = await execa('node', [CLI, 'run', 'do the thing', '--repo', fx.repo, '--model', `scripted:${script}`, '--sandbox', 'bwrap', '--quiet', ...extraArgs], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: fx.home, LANG: 'C.UTF-8', NO_COLOR: '1', ...ENV_SECRETS, ...env },
    extendEnv: false,
    reject: false,
    timeout: 120_000,
  });
  return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) };
}

export function gitIn(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd, encoding: 'utf8' }).trim();
}
