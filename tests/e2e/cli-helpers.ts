// Helpers for the CLI e2e tests: sample repos, zero-latency scripts, async runs, and the shape of a clean error.
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { CLI, git, tempDir, type CliResult } from './helpers.js';

export const ROOT = join(import.meta.dirname, '..', '..');
export const SCENARIOS = join(ROOT, 'workspace', 'scenarios');

/** The demos' sample repo, committed, in a new temp dir. */
export function sampleRepo(prefix: string): string {
  const repo = join(tempDir(prefix), 'repo');
  cpSync(join(SCENARIOS, '_base'), repo, { recursive: true });
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'add', '-A');
  git(repo, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', 'initial');
  return repo;
}

export type Turn = { caller: string; latencyMs?: number };

/**
 * Writes scenario `name`'s script, its turns changed by `edit` (latencies), to `file` (default: a new
 * temp dir's script.json), for `--model scripted:<file>`; returns the path.
 */
export function editedScript(name: string, edit: (turns: Turn[]) => void, file = join(tempDir(`script-${name}`), 'script.json')): string {
  const script = JSON.parse(readFileSync(join(SCENARIOS, name, 'script.json'), 'utf8')) as { turns: Turn[] };
  edit(script.turns);
  writeFileSync(file, JSON.stringify(script));
  return file;
}

/** A scenario's script with every latency set to 0, written in `dir`. */
export function zeroLatencyScript(scenario: string, dir: string): string {
  return editedScript(
    scenario,
    (turns) => {
      for (const t of turns) t.latencyMs = 0;
    },
    join(dir, `${scenario}-script.json`),
  );
}

export function cliEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', XDG_STATE_HOME: process.env.XDG_STATE_HOME ?? '', LANG: 'C.UTF-8', NO_COLOR: '1', ...extra };
}

/** Starts the built CLI without waiting; `done` resolves with the exit code and output. */
export function startAcia(args: string[], opts: { env?: Record<string, string>; cwd?: string } = {}): { child: ChildProcess; done: Promise<CliResult>; output: () => string } {
  const child = spawn(process.execPath, [CLI, ...args], { cwd: opts.cwd ?? ROOT, env: cliEnv(opts.env), stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<CliResult>((resolve) => {
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 128 : 1), stdout, stderr }));
  });
  return { child, done, output: () => stdout + stderr };
}

/**
 * Bad input: nothing on stdout, the right exit code, an `acia:` line that says what is wrong, at most
 * one more line (a hint or a suggestion), and never a stack trace.
 */
export function expectCleanError(r: CliResult, code: number, says: RegExp): void {
  const lines = r.stderr.trimEnd().split('\n');
  expect(r.code, r.stderr).toBe(code);
  expect(r.stdout).toBe('');
  expect(lines[0]).toMatch(/^acia: /);
  expect(lines[0]).toMatch(says);
  expect(lines.length, r.stderr).toBeLessThanOrEqual(2);
  expect(r.stderr).not.toMatch(/^\s+at .+[:(]/m);
  expect(r.stderr).not.toContain('internal error');
}
