// The replay bundle takes a run's blobs by hard link when their bytes match their names, and by copy
// (or not at all) otherwise: fewer file creations at the end of every run, and no way for a damaged or
// planted blob to slip into the bundle as a link.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../../../src/core/acm/canonical-json.js';
import { buildBundle, verifyBundle } from '../../../src/core/ledger/bundle.js';
import { tempDir, writeSampleRun } from '../../helpers/sample-run.js';

async function sample(): Promise<{ repo: string; runId: string; blobs: string }> {
  const repo = tempDir('bundle-links-');
  const { runId, runDir } = await writeSampleRun(repo);
  return { repo, runId, blobs: join(runDir, 'blobs') };
}

describe('bundle blobs', () => {
  it('are hard links to the run blobs, listed under their sha256, and the bundle verifies', async () => {
    const { repo, runId, blobs } = await sample();
    const { dir } = await buildBundle(repo, runId);
    const hex = readdirSync(join(dir, 'memory-ledger', 'acia', 'blobs'))[0]!;
    const inBundle = statSync(join(dir, 'memory-ledger', 'acia', 'blobs', hex));
    expect(inBundle.ino).toBe(statSync(join(blobs, hex)).ino);
    expect(inBundle.nlink).toBeGreaterThan(1);
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { files: Record<string, string> };
    expect(manifest.files[`memory-ledger/acia/blobs/${hex}`]).toBe(hex);
    expect((await verifyBundle(dir)).ok).toBe(true);
  });

  it('a run blob whose bytes do not match its name is copied as it is, listed under its real sha256, and fails verification', async () => {
    const { repo, runId, blobs } = await sample();
    const hex = readdirSync(blobs)[0]!;
    writeFileSync(join(blobs, hex), 'altered after the run');
    const { dir } = await buildBundle(repo, runId);
    const copy = join(dir, 'memory-ledger', 'acia', 'blobs', hex);
    expect(statSync(copy).ino).not.toBe(statSync(join(blobs, hex)).ino);
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { files: Record<string, string> };
    expect(manifest.files[`memory-ledger/acia/blobs/${hex}`]).toBe(sha256Hex('altered after the run'));
    const verdict = await verifyBundle(dir);
    expect(verdict.ok).toBe(false);
    expect(verdict.problems.map((p) => p.message).join('\n')).toContain('does not hash to its name');
  });

  it('a run blob replaced by a symbolic link is neither followed nor linked: the bundle lacks it and says so', async () => {
    const { repo, runId, blobs } = await sample();
    const hex = readdirSync(blobs)[0]!;
    const secret = join(tempDir('bundle-secret-'), 'secret');
    writeFileSync(secret, 'outside the run');
    rmSync(join(blobs, hex));
    symlinkSync(secret, join(blobs, hex));
    const { dir } = await buildBundle(repo, runId);
    expect(readdirSync(join(dir, 'memory-ledger', 'acia', 'blobs'))).not.toContain(hex);
    const verdict = await verifyBundle(dir);
    expect(verdict.ok).toBe(false);
    expect(verdict.problems.map((p) => p.message).join('\n')).toContain(`blob sha256:${hex} is missing`);
  });

  it('a bundle written elsewhere (--out) gets copies, so editing it cannot change the run', async () => {
    const { repo, runId, blobs } = await sample();
    const out = join(tempDir('bundle-out-'), 'b');
    await buildBundle(repo, runId, out);
    const hex = readdirSync(join(out, 'memory-ledger', 'acia', 'blobs'))[0]!;
    expect(statSync(join(out, 'memory-ledger', 'acia', 'blobs', hex)).ino).not.toBe(statSync(join(blobs, hex)).ino);
    expect((await verifyBundle(out)).ok).toBe(true);
  });

  it('blobs the writing process knows whole are linked unread; the bundle is the same, and a planted link is still refused', async () => {
    const { repo, runId, blobs } = await sample();
    const names = readdirSync(blobs).sort();
    const plain = JSON.parse(readFileSync(join((await buildBundle(repo, runId)).dir, 'manifest.json'), 'utf8')) as { files: Record<string, string> };
    const { dir } = await buildBundle(repo, runId, undefined, { knownBlobs: new Set(names) });
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { files: Record<string, string> };
    expect(manifest.files).toEqual(plain.files);
    for (const hex of readdirSync(join(dir, 'memory-ledger', 'acia', 'blobs'))) expect(statSync(join(dir, 'memory-ledger', 'acia', 'blobs', hex)).ino).toBe(statSync(join(blobs, hex)).ino);
    expect((await verifyBundle(dir)).ok).toBe(true);
    // Known or not, a blob that is now a symbolic link is neither followed nor linked.
    const secret = join(tempDir('bundle-secret-'), 'secret');
    writeFileSync(secret, 'outside the run');
    rmSync(join(blobs, names[0]!));
    symlinkSync(secret, join(blobs, names[0]!));
    const again = await buildBundle(repo, runId, undefined, { knownBlobs: new Set(names) });
    expect(readdirSync(join(again.dir, 'memory-ledger', 'acia', 'blobs'))).not.toContain(names[0]);
    expect((await verifyBundle(again.dir)).ok).toBe(false);
  });

  it('a FIFO planted where a blob belongs is skipped, not waited on', async () => {
    const { repo, runId, blobs } = await sample();
    const hex = readdirSync(blobs)[0]!;
    rmSync(join(blobs, hex));
    execFileSync('mkfifo', [join(blobs, hex)]);
    const { dir } = await buildBundle(repo, runId);
    expect(readdirSync(join(dir, 'memory-ledger', 'acia', 'blobs'))).not.toContain(hex);
  });

  it('a run whose blobs directory, ledger or manifest is a link or a FIFO is refused with one line naming it', async () => {
    const blobsLink = await sample();
    const outside = tempDir('bundle-outside-');
    renameSync(blobsLink.blobs, join(outside, 'blobs'));
    symlinkSync(join(outside, 'blobs'), blobsLink.blobs);
    await expect(buildBundle(blobsLink.repo, blobsLink.runId)).rejects.toThrow(/^refusing \S+\/blobs: it is a symbolic link/);

    const fifoLedger = await sample();
    const ledger = join(fifoLedger.blobs, '..', 'ledger.jsonl');
    rmSync(ledger);
    execFileSync('mkfifo', [ledger]);
    await expect(buildBundle(fifoLedger.repo, fifoLedger.runId)).rejects.toThrow(/^refusing \S+ledger\.jsonl: it is not a regular file/);

    const manifestLink = await sample();
    const secret = join(tempDir('bundle-secret-'), 'id_rsa');
    writeFileSync(secret, 'PRIVATE KEY');
    const manifest = join(manifestLink.blobs, '..', 'manifest.json');
    rmSync(manifest, { force: true });
    symlinkSync(secret, manifest);
    await expect(buildBundle(manifestLink.repo, manifestLink.runId)).rejects.toThrow(/^refusing \S+manifest\.json: it is a symbolic link/);
  });
});

describe('a bundle write cut short', () => {
  it('leaves no half bundle in its place: a leftover from a killed write is replaced, the next write succeeds, an earlier bundle is replaced whole', async () => {
    const { repo, runId } = await sample();
    const first = await buildBundle(repo, runId);
    // A process killed while writing leaves only the staging directory beside the bundle's place.
    const staging = join(first.dir, '..', `.${runId}.partial-x1y2z3`);
    execFileSync('mkdir', ['-p', join(staging, 'engine-trace')]);
    writeFileSync(join(staging, 'engine-trace', 'trace.jsonl'), 'cut off');
    const again = await buildBundle(repo, runId);
    expect(again.dir).toBe(first.dir);
    expect((await verifyBundle(again.dir)).ok).toBe(true);
    expect(readdirSync(join(first.dir, '..'))).toEqual([runId]);
  });

  it('a directory in the way that is not a bundle is refused before anything is written', async () => {
    const { repo, runId } = await sample();
    const out = tempDir('bundle-out-');
    writeFileSync(join(out, 'notes.txt'), 'mine');
    await expect(buildBundle(repo, runId, out)).rejects.toThrow('exists and is not an acia bundle');
    expect(readdirSync(out)).toEqual(['notes.txt']);
    expect(readdirSync(join(out, '..')).filter((n) => n.startsWith(`.${out.split('/').at(-1)}`))).toEqual([]);
  });

  it('--out: the user\'s own files beside it are never taken for a leftover', async () => {
    const { repo, runId } = await sample();
    const parent = tempDir('bundle-parent-');
    const out = join(parent, 'b');
    const mine = join(parent, '.b.partial-notes');
    writeFileSync(mine, 'mine');
    const { dir } = await buildBundle(repo, runId, out);
    expect(dir).toBe(out);
    expect((await verifyBundle(out)).ok).toBe(true);
    expect(readFileSync(mine, 'utf8')).toBe('mine');
    expect(readdirSync(parent).sort()).toEqual(['.b.partial-notes', 'b']);
  });
});
