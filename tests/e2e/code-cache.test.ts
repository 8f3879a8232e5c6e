// The CLI's code cache (scripts/bundle-cli.mjs writes it, scripts/cli-launcher.cjs reads it): one cache per
// bundle file, made for its exact source and accepted by this node's V8; and a cache that does not fit the
// source beside it (a file changed after the build, a damaged cache) is never used: the CLI still works.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { Module } from 'node:module';
import { join } from 'node:path';
import { Script } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { CLI, tempDir } from './helpers.js';
import { ROOT } from './cli-helpers.js';

const BIN = join(ROOT, 'dist', 'bin');
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const bundleFiles = (bin: string) => ['main.js', ...readdirSync(join(bin, 'chunks')).filter((f) => f.endsWith('.js')).map((f) => join('chunks', f))];

function version(cli: string): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [cli, '--version'], { encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('the code cache', () => {
  it('has a cache for every bundle file, named by its source, that V8 accepts', () => {
    const files = bundleFiles(BIN);
    expect(files.length).toBeGreaterThan(20);
    for (const f of files) {
      const source = readFileSync(join(BIN, f), 'utf8');
      const cachedData = readFileSync(join(BIN, 'code-cache', `${sha256(source)}.bin`));
      const script = new Script(Module.wrap(source), { filename: join(BIN, f), cachedData });
      expect(script.cachedDataRejected, f).toBe(false);
    }
    expect(version(CLI)).toMatchObject({ status: 0, stderr: '' });
  });

  it('is not used for a file changed after the build, nor when damaged: the CLI still runs', () => {
    const dir = tempDir('code-cache');
    cpSync(BIN, join(dir, 'bin'), { recursive: true });
    // The bundle's dependencies resolve from the package, as they do from dist/bin.
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
    writeFileSync(join(dir, 'package.json'), readFileSync(join(ROOT, 'package.json')));
    const bin = join(dir, 'bin');
    const main = join(bin, 'main.js');
    const original = readFileSync(main, 'utf8');
    // Same length, other bytes (its last line, a comment): V8's own check, the source's length, would
    // take the old cache for it; the launcher looks for the new source's and compiles it.
    writeFileSync(main, `${original.slice(0, -2)}\n\n`);
    expect(readFileSync(main, 'utf8')).not.toBe(original);
    expect(readFileSync(main, 'utf8').length).toBe(original.length);
    expect(version(join(bin, 'acia.js'))).toMatchObject({ status: 0, stderr: '' });
    // Every cache replaced by garbage: V8 refuses each and compiles the source.
    for (const f of readdirSync(join(bin, 'code-cache'))) writeFileSync(join(bin, 'code-cache', f), Buffer.alloc(4096, 7));
    expect(version(join(bin, 'acia.js'))).toMatchObject({ status: 0, stderr: '' });
  });
});
