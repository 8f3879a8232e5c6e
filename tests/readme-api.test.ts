// The README's library example must compile against the real exports: extracted and type-checked here.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');

function librarySnippet(): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Library API'));
  const m = /```ts\n([\s\S]*?)```/.exec(section);
  if (!m?.[1]) throw new Error('README has no ```ts block under "## Library API"');
  return m[1];
}

function typeErrors(code: string): string[] {
  const dir = mkdtempSync(join(ROOT, 'tests', '.readme-'));
  try {
    const file = join(dir, 'snippet.ts');
    // A module, so top-level await is allowed, as in an ESM program.
    writeFileSync(file, `${code}\nexport {};\n`);
    const options: ts.CompilerOptions = {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      strict: true,
      exactOptionalPropertyTypes: true,
      noUncheckedIndexedAccess: true,
      skipLibCheck: true,
      noEmit: true,
      types: ['node'],
      baseUrl: ROOT,
      // The package's own names, resolved to the sources so the test needs no build.
      paths: { acia: ['src/index.ts'], 'acia/testing': ['src/testing.ts'] },
    };
    const program = ts.createProgram([file], options);
    // Only the snippet is checked (the checker still resolves every type it uses from the sources);
    // checking the whole program it pulls in took 10 s more and its other files' diagnostics were dropped.
    return ts
      .getPreEmitDiagnostics(program, program.getSourceFile(file))
      .filter((d) => d.file?.fileName === file || d.file === undefined)
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('README library example', () => {
  it('type-checks against the package exports', () => {
    expect(typeErrors(librarySnippet())).toEqual([]);
  }, 60_000);

  it('would catch a broken example', () => {
    expect(typeErrors("import { noSuchExport } from 'acia';\nnoSuchExport();").join('\n')).toMatch(/noSuchExport/);
  }, 60_000);
});
