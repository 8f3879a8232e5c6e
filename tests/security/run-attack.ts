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

/**
 * Dev tasks run one after another (t1, then t2, ...); each element of a task's turns is one model turn
 * of its dev agent, which then returns. A bare array of turns is the single task t1.
 */
export function attackScript(work: ToolCall[][] | Record<string, ToolCall[][]>, summary = 'done'): unknown {
  const tasks = Array.isArray(work) ? { t1: work } : work;
  const ids = Object.keys(tasks);
  const specs = ids.map((id) => ({ id, capability: 'dev.implement', title: `Do ${id}`, input: { instructions: 'do the thing' } }));
  const edges = ids.slice(1).map((id, i) => ({ from: ids[i]!, to: id }));
  const plan = (id: string) => ({ id, rationale: 'the tasks in order', tasks: specs, edges });
  return {
    version: 1,
    model: 'claude-sonnet-5-5',
    turns: [
      { caller: 'pm', toolCalls: [{ name: 'return_result', input: { plans: [plan('plan-A'), plan('plan-B')], chosenPlanId: 'plan-A', selectionRationale: 'smallest' } }] },
      ...ids.flatMap((id) => [...tasks[id]!.map((toolCalls) => ({ caller: `dev:${id}`, toolCalls })), { caller: `dev:${id}`, toolCalls: [{ name: 'return_result', input: { summary } }] }]),
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
export async function runAttack(fx: Fixture, turns: ToolCall[][] | Record<string, ToolCall[][]>, o: RunAttackOptions = {}): Promise<RunAttackResult> {
  const script = path.join(fx.base, `script-${Date.now()}-${Math.random().toString(36).slice(2)}.json`);
  fs.writeFileSync(script, JSON.stringify(attackScript(turns)));
  // A test command that passes: since the outcome rule, a run succeeds only after a real test run on its final head.
  const argv = [CLI, 'run', 'do the thing', '--repo', fx.repo, '--model', `scripted:${script}`, '--sandbox', 'bwrap', '--quiet', '--test-command', 'true', ...(o.args ?? [])];
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
