import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const SCRIPT = resolve(import.meta.dirname, '../../scripts/check-architecture.mjs');
let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

function tree(files: Record<string, string>): string {
  dir = mkdtempSync(join(tmpdir(), 'acia-arch-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return join(dir, 'src');
}

function check(src: string): { code: number | null; out: string } {
  const r = spawnSync(process.execPath, [SCRIPT, src], { encoding: 'utf8' });
  return { code: r.status, out: r.stdout + r.stderr };
}

const agent = (vars: string) =>
  `export const a = defineAgent({\n  role: 'dev',\n  instructions: 'dev.md',\n  promptVars: [${vars}],\n  tools: [],\n  output: X,\n  maxTurns: 1,\n});\n`;

describe('scripts/check-architecture.mjs', () => {
  it('passes a clean tree', () => {
    const src = tree({
      'src/core/a.ts': "import { b } from './b.js';\nexport const a = b;\n",
      'src/core/b.ts': '// imports nothing (a comment naming ../team/x.js is no import)\nexport const b = 1;\n',
      'src/agents/dev.ts': "import { a } from '../core/a.js';\n" + agent("'goal'"),
      'src/agents/prompts/dev.md': 'Work on {{goal}}.\n',
      'src/team/t.ts': "import '../agents/dev.js';\n",
      'src/cli/c.ts': "const m = await import('../team/t.js');\n",
    });
    expect(check(src)).toEqual({ code: 0, out: expect.stringContaining('clean') as string });
  });

  it('fails on an upward import (team or serve reaching the composition root or the CLI), a dynamic one too, a cycle in core and a prompt placeholder nothing fills', () => {
    const src = tree({
      'src/core/a.ts': "import type { B } from './sub/b.js';\nexport type A = B;\n",
      'src/core/sub/b.ts': "import type { A } from '../a.js';\nexport type B = A | 1;\n",
      'src/core/up.ts': "export { t } from '../team/t.js';\n",
      'src/agents/dev.ts': "const c = await import('../cli/c.js');\n" + agent("'goal', 'unused'"),
      'src/agents/prompts/dev.md': 'Work on {{goal}} with {{instructions}}.\n',
      'src/agents/prompts/orphan.md': 'nobody renders me\n',
      'src/team/t.ts': 'export const t = 1;\n',
      'src/team/wire.ts': "import { buildDeps } from '../app/build-deps.js';\nexport const w = buildDeps;\n",
      'src/app/build-deps.ts': "import { t } from '../team/t.js';\nexport const buildDeps = t;\n",
      'src/serve/s.ts': "import '../app/build-deps.js';\nimport '../cli/c.js';\n",
      'src/cli/c.ts': '',
    });
    const r = check(src);
    expect(r.code).toBe(1);
    const lines = r.out.trim().split('\n').sort();
    expect(lines).toEqual([
      'check-architecture: import cycle in core: core/a.ts -> core/sub/b.ts -> core/a.ts',
      'check-architecture: src/agents/dev.ts: declares unused, which dev.md never uses',
      'check-architecture: src/agents/dev.ts: dev.md uses {{instructions}}, which the definition does not declare, so nothing fills it',
      'check-architecture: src/agents/dev.ts: src/agents must not import src/cli (../cli/c.js): layers are cli -> app -> team -> agents -> core',
      'check-architecture: src/agents/prompts/orphan.md: no agent definition renders this template',
      'check-architecture: src/core/up.ts: src/core must not import src/team (../team/t.js): layers are cli -> app -> team -> agents -> core',
      'check-architecture: src/serve/s.ts: src/serve must not import src/cli (../cli/c.js): layers are cli -> app -> team -> agents -> core',
      'check-architecture: src/team/wire.ts: src/team must not import src/app (../app/build-deps.js): layers are cli -> app -> team -> agents -> core',
    ]);
  });
  it('fails on an .acia or dependency path built or touched outside src/core/contain, and passes the same code inside it', () => {
    const aciaJoin = "import { join } from 'node:path';\nimport { readFileSync, rmSync } from 'node:fs';\nexport const read = (repo: string, id: string) => readFileSync(join(repo, '.acia', 'runs', id, 'ledger.jsonl'));\n";
    const src = tree({
      'src/agents/prompts/README': '',
      'src/cli/show.ts': aciaJoin,
      'src/serve/clean.ts': "import { rm } from 'node:fs/promises';\nexport const gone = (repo: string, id: string) => rm(`${repo}/.acia/worktrees/${id}`, { recursive: true });\n",
      'src/team/deps.ts': "import { lstatSync } from 'node:fs';\nimport { join } from 'node:path';\nexport const nm = (checkout: string) => lstatSync(join(checkout, 'node_modules'));\nexport const pnp = (c: string) => join(c, '.yarn/cache');\n",
      'src/core/contain/acia-state.ts': aciaJoin + "// a comment naming join(repo, '.acia') is no path\n",
      'src/core/sandbox/deps.ts': "import { join } from 'node:path';\nexport const nm = (c: string) => join(c, 'node_modules');\n",
      'src/app/hint.ts': "export const hint = 'set testCommand in .acia/config.json or install into .venv';\n",
    });
    const r = check(src);
    expect(r.code).toBe(1);
    expect(r.out.trim().split('\n').sort()).toEqual([
      'check-architecture: src/cli/show.ts: line 3: builds or touches an .acia path outside src/core/contain (acia-state.ts)',
      'check-architecture: src/serve/clean.ts: line 2: builds or touches an .acia path outside src/core/contain (acia-state.ts)',
      'check-architecture: src/team/deps.ts: line 3: builds or touches a dependency path (node_modules, .venv, venv, .yarn, .pnp.*) outside src/core/contain (dependency-entry.ts) or src/core/sandbox/deps.ts',
      'check-architecture: src/team/deps.ts: line 4: builds or touches a dependency path (node_modules, .venv, venv, .yarn, .pnp.*) outside src/core/contain (dependency-entry.ts) or src/core/sandbox/deps.ts',
    ]);
  });

  it('fails on a process-spawning import outside the modules that start processes, and on a host spawn whose cwd is a worktree or checkout', () => {
    const src = tree({
      'src/agents/prompts/README': '',
      'src/team/agent.ts': "import { spawn } from 'node:child_process';\nexport const go = (root: string) => spawn('sh', [], { cwd: root });\n",
      'src/team/types.ts': "import type { ChildProcess } from 'node:child_process';\nexport type P = ChildProcess;\n",
      'src/core/sandbox/spawn-collect.ts': "import { spawn } from 'node:child_process';\nexport const run = (o: { cwd: string }) => spawn('x', [], { cwd: o.cwd });\nexport const bad = (wt: { path: string }) => spawn('x', [], { cwd: wt.path });\n",
      'src/core/sandbox/git-batch.ts': "import { spawn } from 'node:child_process';\nexport const git = (repo: string) => spawn('git', ['-C', repo], { cwd: '/' });\nexport const shorthand = (cwd: string) => spawn('git', [], { cwd, stdio: 'pipe' });\n",
      'src/core/tools/mcp/connection.ts': "import { StdioClientTransport } from 'sdk';\nexport const t = (o: { root: string }) => new StdioClientTransport({ command: 'x', args: [], cwd: o.root });\nexport const params = (o: { root: string }) => ({ command: 'x', args: [], cwd: o.root });\n",
      'src/serve/mcp.ts': "import { StdioClientTransport } from 'sdk';\nexport const t = () => new StdioClientTransport({ command: 'x', args: [] });\n",
      'src/eval/grade.ts': "export const g = (runner: { run(c: string, o: { cwd: string }): void }, tree: string) => runner.run('npm test', { cwd: tree });\n",
    });
    const r = check(src);
    expect(r.code).toBe(1);
    const spawnHint = 'processes outside the sandbox start in an empty directory (core/contain/host-process.ts), the worktree passed as an argument';
    expect(r.out.trim().split('\n').sort()).toEqual([
      `check-architecture: src/core/sandbox/git-batch.ts: line 3: a host spawn with cwd cwd: ${spawnHint}`,
      `check-architecture: src/core/sandbox/spawn-collect.ts: line 3: a host spawn with cwd wt.path: ${spawnHint}`,
      `check-architecture: src/core/tools/mcp/connection.ts: line 2: a host spawn with cwd o.root: ${spawnHint}`,
      `check-architecture: src/core/tools/mcp/connection.ts: line 3: a host spawn with cwd o.root: ${spawnHint}`,
      'check-architecture: src/serve/mcp.ts: starts an MCP stdio transport outside src/core/tools/mcp/connection.ts',
      'check-architecture: src/team/agent.ts: imports a process-spawning module outside the modules that start processes; start host processes through src/core/contain/host-process.ts',
      `check-architecture: src/team/agent.ts: line 2: a host spawn with cwd root: ${spawnHint}`,
    ]);
  });
});
