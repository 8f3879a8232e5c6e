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
});
