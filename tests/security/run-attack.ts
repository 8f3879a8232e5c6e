// Drives a whole `acia run` through the built CLI with a scripted model that performs an attack: the PM
// plans one dev task, and the "injected" dev agent makes the tool calls the test gives it.
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
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

export interface RunAttackOptions {
  args?: string[];
  env?: Record<string, string>;
  /** Descriptors handed to acia as fds 3, 4, ... (undefined leaves a slot closed). */
  fds?: (number | undefined)[];
  timeoutMs?: number;
}

/** `acia run` in the fixture's repo, sandboxed, with fake secrets in the environment and the fixture's HOME. */
export async function runAttack(fx: Fixture, turns: ToolCall[][], o: RunAttackOptions = {}): Promise<RunAttackResult> {
  const script = path.join(fx.base, `script-${Date.now()}-${Math.random().toString(36).slice(2)}.json`);
  fs.writeFileSync(script, JSON.stringify(attackScript(turns)));
  const argv = [CLI, 'run', 'do the thing', '--repo', fx.repo, '--model', `scripted:${script}`, '--sandbox', 'bwrap', '--quiet', ...(o.args ?? [])];
  const child = spawn(process.execPath, argv, {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: fx.home, LANG: 'C.UTF-8', NO_COLOR: '1', ...ENV_SECRETS, ...o.env },
    stdio: ['ignore', 'pipe', 'pipe', ...(o.fds ?? []).map((fd) => fd ?? 'ignore')],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), o.timeoutMs ?? 120_000);
  const exitCode = await new Promise<number>((resolve) => child.on('close', (code, sig) => resolve(code ?? (sig ? 128 : 1))));
  clearTimeout(timer);
  return { exitCode, stdout, stderr };
}

export function gitIn(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd, encoding: 'utf8' }).trim();
}
