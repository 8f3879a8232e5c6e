// Fixtures for the hostile-clone suite: a sample repository someone else wrote, a user with fake secrets in
// a temporary HOME and XDG dirs, scripted models standing in for an injected model, and the built CLI.
import { execFileSync } from 'node:child_process';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { LedgerEntry } from '../../src/core/ledger/entry.js';

export const CLI = path.resolve(import.meta.dirname, '../../dist/bin/acia.js');
const BASE = path.resolve(import.meta.dirname, '../../workspace/scenarios/_base');
export const SECRET = 'S3CRET-id-rsa-9d2e';
export const FAKE_KEY = 'sk-ant-leak-5555';

export interface User {
  dir: string;
  home: string;
  repo: string;
  env: Record<string, string>;
  /** Runs the built CLI as this user, without a TTY. */
  acia(args: string[], extraEnv?: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }>;
  git(...args: string[]): string;
  write(rel: string, content: string): void;
  script(name: string, value: unknown): string;
  ledger(runId: string): LedgerEntry[];
  runIds(): string[];
  blob(runId: string, ref: string): string;
}

/** A user (HOME with a fake ~/.ssh/id_rsa, own state and config dirs) and a cloned sample repository. */
export function makeUser(prefix: string): User {
  const dir = fs.mkdtempSync(path.join(fs.existsSync('/var/tmp') ? '/var/tmp' : os.tmpdir(), `acia-${prefix}-`));
  const home = path.join(dir, 'home');
  const repo = path.join(dir, 'repo');
  fs.mkdirSync(path.join(home, '.ssh'), { recursive: true });
  fs.writeFileSync(path.join(home, '.ssh', 'id_rsa'), `-----BEGIN KEY-----\n${SECRET}\n`);
  fs.cpSync(BASE, repo, { recursive: true });
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    XDG_STATE_HOME: path.join(home, '.local', 'state'),
    XDG_CONFIG_HOME: path.join(home, '.config'),
    LANG: 'C.UTF-8',
    NO_COLOR: '1',
    ANTHROPIC_API_KEY: FAKE_KEY,
    GITHUB_TOKEN: 'ghp-leak-6666',
  };
  const git = (...args: string[]): string =>
    execFileSync('git', ['-c', 'user.name=attacker', '-c', 'user.email=a@a', ...args], { cwd: repo, encoding: 'utf8', env: { ...process.env, HOME: home } }).trim();
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-qm', 'sample');
  const user: User = {
    dir,
    home,
    repo,
    env,
    // Async: a fake server in this process must keep answering while the CLI runs.
    acia: async (args, extraEnv = {}) => {
      return new Promise((resolve) => {
        const child = spawn(process.execPath, [CLI, ...args], { cwd: repo, env: { ...env, ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        child.on('close', (code) => resolve({ code: code ?? 128, stdout, stderr }));
      });
    },
    git,
    write: (rel, content) => {
      fs.mkdirSync(path.dirname(path.join(repo, rel)), { recursive: true });
      fs.writeFileSync(path.join(repo, rel), content);
    },
    script: (name, value) => {
      const file = path.join(dir, `${name}.json`);
      fs.writeFileSync(file, JSON.stringify(value));
      return file;
    },
    ledger: (runId) =>
      fs
        .readFileSync(path.join(repo, '.acia', 'runs', runId, 'ledger.jsonl'), 'utf8')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as LedgerEntry),
    runIds: () => (fs.existsSync(path.join(repo, '.acia', 'runs')) ? fs.readdirSync(path.join(repo, '.acia', 'runs')).sort() : []),
    blob: (runId, ref) => fs.readFileSync(path.join(repo, '.acia', 'runs', runId, 'blobs', ref.replace(/^sha256:/, '')), 'utf8'),
  };
  return user;
}

/** Every file under `dir` as text (for "the secret is nowhere" checks). */
export function allText(dir: string): string {
  if (!fs.existsSync(dir)) return '';
  let out = '';
  for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile()) continue;
    out += fs.readFileSync(path.join(e.parentPath, e.name), 'utf8');
  }
  return out;
}

export interface TaskDef {
  id: string;
  capability: string;
  title?: string;
}

/** A PM turn proposing Plan-A (the given tasks in a chain) and a one-task Plan-B, choosing Plan-A. */
export function pmTurn(tasks: TaskDef[], rationale = 'plan-A does it in one pass.'): unknown {
  const plan = (id: string, ts: TaskDef[]) => ({
    id,
    rationale,
    tasks: ts.map((t) => ({ id: t.id, capability: t.capability, title: t.title ?? t.id, input: t.capability === 'human.approve' ? { question: 'go ahead?' } : { instructions: `do ${t.id}` } })),
    edges: ts.slice(1).map((t, i) => ({ from: ts[i]!.id, to: t.id })),
  });
  return {
    caller: 'pm',
    toolCalls: [
      {
        name: 'return_result',
        input: {
          plans: [plan('plan-A', tasks), plan('plan-B', tasks.map((t) => ({ ...t, id: `b${t.id}` })))],
          chosenPlanId: 'plan-A',
          selectionRationale: rationale,
        },
      },
    ],
  };
}

export function turn(caller: string, name: string, input: unknown): unknown {
  return { caller, toolCalls: [{ name, input }] };
}

export function script(turns: unknown[]): unknown {
  return { version: 1, model: 'claude-sonnet-5-5', turns };
}
