// Real projects for end-to-end runs: fetched from the npm registry once and cached, their dependencies
// installed in the checkout as a user would, then driven through the built CLI with the default sandbox
// and the real Anthropic SDK against the local fake server.
import { execFile, execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { startFakeAnthropicServer } from '../../../src/core/llm/fake-server.js';
import type { Script } from '../../../src/core/llm/script.js';
import { CLI, tempDir, type CliResult } from '../helpers.js';

/** Survives between test runs (CI caches ~/.cache); ACIA_TEST_CACHE overrides it. */
export const CACHE = process.env.ACIA_TEST_CACHE ?? join(homedir(), '.cache', 'acia-tests');

function sh(cmd: string, args: string[], cwd: string, timeoutMs = 300_000): string {
  return execFileSync(cmd, args, { cwd, encoding: 'utf8', timeout: timeoutMs, stdio: ['ignore', 'pipe', 'pipe'] });
}

/** A command run asynchronously (so several projects install at once); rejects with its output on failure. */
export function shAsync(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env, timeoutMs = 300_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { cwd, env, encoding: 'utf8', timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) reject(Object.assign(new Error(`${cmd} ${args.join(' ')} (in ${cwd}) failed: ${err.message}\n${stdout}\n${stderr}`), { stderr }));
      else resolve(stdout);
    });
  });
}

/** Unpacks `spec`'s registry tarball into `dir`. */
export function npmUnpack(spec: string, dir: string): void {
  const tgz = sh('npm', ['pack', spec, '--fetch-retries=1', `--cache=${join(CACHE, 'npm')}`, `--pack-destination=${dir}`], dir).trim().split('\n').at(-1)!;
  sh('tar', ['xzf', join(dir, tgz), '-C', dir, '--strip-components=1'], dir);
  rmSync(join(dir, tgz));
}

/** A digest of every path under `dir` with its type, size, mode and mtime: any change shows. */
export function treeDigest(dir: string): { files: number; digest: string } {
  const h = createHash('sha256');
  let files = 0;
  const walk = (rel: string): void => {
    const abs = join(dir, rel);
    const st = lstatSync(abs);
    h.update(`${rel}\0${st.mode}\0${st.size}\0${st.mtimeMs}\n`);
    files++;
    if (st.isDirectory()) for (const e of readdirSync(abs).sort()) walk(rel === '' ? e : `${rel}/${e}`);
  };
  walk('');
  return { files, digest: h.digest('hex') };
}

/**
 * `acia run` through the built CLI with the default sandbox, its model the real Anthropic SDK talking to
 * the fake server that serves `script`. Spawned asynchronously: the server answers in this process.
 */
export async function runWithScript(repo: string, goal: string, script: Script, env: Record<string, string> = {}, userConfig?: Record<string, unknown>): Promise<CliResult> {
  const server = await startFakeAnthropicServer({ script, host: '127.0.0.1', port: 0 });
  const xdg = tempDir('xdg');
  if (userConfig !== undefined) {
    mkdirSync(join(xdg, 'acia'), { recursive: true });
    writeFileSync(join(xdg, 'acia', 'config.json'), JSON.stringify(userConfig));
  }
  try {
    return await new Promise<CliResult>((resolve, reject) => {
      const child = spawn(process.execPath, [CLI, 'run', goal, '--repo', repo, '--model', 'anthropic:claude-sonnet-5-5'], {
        cwd: repo,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '/tmp',
          XDG_STATE_HOME: process.env.XDG_STATE_HOME ?? '',
          XDG_CONFIG_HOME: xdg,
          LANG: 'C.UTF-8',
          NO_COLOR: '1',
          ANTHROPIC_API_KEY: 'test-key',
          ANTHROPIC_BASE_URL: server.url,
          ...env,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const timer = setTimeout(() => child.kill('SIGKILL'), 240_000);
      child.on('error', reject);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code: code ?? 1, stdout, stderr });
      });
    });
  } finally {
    await server.close();
  }
}

/** A plan set with one dev task t1 and its QA verification t2 (and the same shape as plan-B). */
export function devThenQa(instructions: string, files: string[]): unknown {
  const plan = (id: string, dev: string, qa: string) => ({
    id,
    rationale: 'One dev task makes the change; QA runs the real test suite.',
    tasks: [
      { id: dev, capability: 'dev.implement', title: 'Make the change', input: { instructions, files } },
      { id: qa, capability: 'qa.verify', title: 'Run the test suite', input: { instructions: 'Run the whole test suite and report.' } },
    ],
    edges: [{ from: dev, to: qa }],
  });
  return { plans: [plan('plan-A', 't1', 't2'), plan('plan-B', 'b1', 'b2')], chosenPlanId: 'plan-A', selectionRationale: 'plan-A is the direct change.' };
}

type Turn = Script['turns'][number];
export const turn = (caller: string, name: string, input: unknown): Turn => ({ caller, toolCalls: [{ name, input }] }) as Turn;

/**
 * A broken first attempt: the dev writes `first` (a source change and a test whose expectation is wrong),
 * QA fails, the fix task t2-fix1 writes `fix`, the re-verification t2-r1 passes.
 */
export function brokenThenFixed(plan: unknown, first: ReadonlyArray<{ path: string; content: string } | { command: string }>, fix: { path: string; content: string }): Script {
  return {
    version: 1,
    model: 'claude-sonnet-5-5',
    turns: [
      turn('pm', 'return_result', plan),
      ...first.map((f) => ('command' in f ? turn('dev:t1', 'run_command', f) : turn('dev:t1', 'write_file', f))),
      turn('dev:t1', 'return_result', { summary: `Changed ${first.map((f) => ('command' in f ? f.command : f.path)).join(', ')}.` }),
      turn('qa:t2', 'run_tests', {}),
      turn('qa:t2', 'return_result', { passed: false, summary: 'A test fails.' }),
      turn('dev:t2-fix1', 'write_file', fix),
      turn('dev:t2-fix1', 'return_result', { summary: `Corrected ${fix.path}.` }),
      turn('qa:t2-r1', 'run_tests', {}),
      turn('qa:t2-r1', 'return_result', { passed: true, summary: 'The suite passes.' }),
    ],
  };
}

export function blobText(repo: string, runId: string, ref: string): string {
  return readFileSync(join(repo, '.acia', 'runs', runId, 'blobs', ref.slice('sha256:'.length)), 'utf8');
}
