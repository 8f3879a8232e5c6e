// The lint rule that keeps ledger data typed (scripts/eslint-ledger-casts.mjs, `npm run lint`): planted
// casts of an entry's data, to a ledger type and through `unknown` are reported; reading a payload by
// narrowing on `type` is not. Type-aware, so it builds a TypeScript program (slow tier: ~15 s).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ES module with no types
import ledger from '../../scripts/eslint-ledger-casts.mjs';

const ROOT = resolve(import.meta.dirname, '../..');
const dir = mkdtempSync(join(ROOT, 'tests', '.lint-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function lint(code: string): Promise<string[]> {
  const file = join(dir, 'planted.ts');
  writeFileSync(file, code);
  const program = ts.createProgram([file], { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, strict: true, skipLibCheck: true, noEmit: true, types: [] });
  const eslint = new ESLint({
    cwd: ROOT,
    overrideConfigFile: true,
    overrideConfig: [{ files: ['**/*.ts'], languageOptions: { parser: tseslint.parser, parserOptions: { programs: [program] } }, plugins: { ledger: ledger as ESLint.Plugin }, rules: { 'ledger/no-ledger-casts': 'error' } }],
  });
  const [result] = await eslint.lintFiles([file]);
  return (result?.messages ?? []).map((m) => `${m.line}: ${m.message}`);
}

describe('acia lint: no casts of ledger data', () => {
  it('reports a cast of an entry\'s data, a cast to a ledger type and a double cast; allows narrowing on type', async () => {
    const messages = await lint(
      [
        "import type { LedgerEntry } from '../../src/core/ledger/entry.js';",
        "import type { EventDataOf } from '../../src/core/ledger/events.js';",
        'export const a = (e: LedgerEntry): string => (e.data as { taskId: string }).taskId;',
        "export const b = (es: LedgerEntry[]): unknown => es.find((e) => e.type === 'RUN_STARTED')?.data as EventDataOf<'RUN_STARTED'>;",
        'export const c = (x: number): string => x as unknown as string;',
        'export const d = (v: unknown): LedgerEntry => v as LedgerEntry;',
        "export const ok = (e: LedgerEntry): string => (e.type === 'TASK_STARTED' ? e.data.taskId : '');",
        'export const other = (r: { data: unknown }): string => r.data as string;',
      ].join('\n'),
    );
    expect(messages).toEqual([
      expect.stringMatching(/^3: a cast of a ledger entry's data/),
      expect.stringMatching(/^4: a cast to a ledger type \(EventDataOf<'RUN_STARTED'>\)/),
      expect.stringMatching(/^5: a double cast/),
      expect.stringMatching(/^6: a cast to a ledger type \(LedgerEntry\)/),
    ]);
  }, 120_000);
});
