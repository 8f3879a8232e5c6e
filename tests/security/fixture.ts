// Host fixtures for the escape suite: a git repo (the worktree), an outside dir and a HOME with secrets.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnCapture } from '../../src/core/sandbox/spawn-collect.js';

export const CLI = path.resolve(import.meta.dirname, '../../dist/bin/acia.js');
export const SECRET = 'S3CRET-do-not-leak-7c1f';
export const ENV_SECRETS = { ANTHROPIC_API_KEY: 'sk-ant-leak-1111', FOO_TOKEN: 'tok-leak-2222', AWS_SECRET_ACCESS_KEY: 'aws-leak-3333', GITHUB_TOKEN: 'ghp-leak-4444' };

export interface Fixture {
  base: string;
  repo: string;
  outside: string;
  home: string;
  cleanup(): void;
}

/** Outside dir and HOME live under /var/tmp (not /tmp) so the sandbox's /tmp tmpfs alone would not hide them. */
export function makeFixture(): Fixture {
  const base = fs.mkdtempSync(path.join(fs.existsSync('/var/tmp') ? '/var/tmp' : os.tmpdir(), 'acia-esc-'));
  const repo = path.join(base, 'repo');
  const outside = path.join(base, 'outside');
  const home = path.join(base, 'home');
  for (const d of [repo, outside, home]) fs.mkdirSync(d);
  fs.writeFileSync(path.join(outside, 'secret.txt'), SECRET);
  fs.writeFileSync(path.join(home, '.secret'), SECRET);
  fs.writeFileSync(path.join(repo, 'README.md'), '# repo\n');
  const git = (...args: string[]): string => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: repo, encoding: 'utf8' });
  git('init', '-q', '-b', 'main');
  git('add', '.');
  git('commit', '-qm', 'init');
  return { base, repo, outside, home, cleanup: () => fs.rmSync(base, { recursive: true, force: true }) };
}

export interface CliToolResult {
  exitCode: number;
  stderr: string;
  result: { ok: boolean; forModel: string; forDisplay: string; data?: Record<string, unknown> };
}

/** Runs `acia tool` as a user would, with secrets in the parent env and HOME pointing at the fixture's home. */
export async function aciaTool(fx: Fixture, name: string, input: unknown, extra: string[] = []): Promise<CliToolResult> {
  const r = await spawnCapture([process.execPath, CLI, 'tool', name, '--repo', fx.repo, '--input', JSON.stringify(input), ...extra], {
    cwd: process.cwd(),
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: fx.home, ...ENV_SECRETS },
    timeoutMs: 60_000,
  });
  const stdout = r.stdout;
  let result: CliToolResult['result'] = { ok: false, forModel: '', forDisplay: '' };
  try {
    result = JSON.parse(stdout) as CliToolResult['result'];
  } catch {
    /* asserted by the caller through exitCode */
  }
  return { exitCode: r.exitCode ?? -1, stderr: r.stderr, result };
}

export function expectNoLeak(text: string): void {
  const leaked = [SECRET, ...Object.values(ENV_SECRETS)].filter((s) => text.includes(s));
  if (leaked.length > 0) throw new Error(`leaked: ${leaked.join(', ')}`);
}
