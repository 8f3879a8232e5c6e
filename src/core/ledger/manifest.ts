// Where runs live in a repo, and each run's manifest: the ledger head anchored outside the ledger file.
import { join } from 'node:path';
import { AciaError, errorMessage } from '../errors.js';
import { runDirOf, runsDir } from '../contain/acia-state.js';
import { checkRealDir } from '../contain/no-follow.js';
import { isRunId } from '../contain/run-id.js';
import { RunManifest } from './run-vocabulary.js';
import { errnoCode, nodeLedgerFs, readFileNoFollow, syncDir, type LedgerFs } from './ledger-fs.js';

export const MANIFEST_FILE = 'manifest.json';

// Where runs live is the containment module's to say (core/contain/acia-state.ts); re-exported for the library API.
export { runDirOf, runsDir };

/** Atomic: temp file, fsync, rename, fsync of the directory. A reader sees the old or the new manifest. */
export async function writeManifest(runDir: string, manifest: RunManifest, fs: LedgerFs = nodeLedgerFs): Promise<void> {
  const value = RunManifest.parse(manifest);
  const path = join(runDir, MANIFEST_FILE);
  const tmp = join(runDir, `.${MANIFEST_FILE}.${process.pid}.tmp`);
  try {
    const handle = await fs.open(tmp, 'w');
    try {
      await handle.writeFile(`${JSON.stringify(value, null, 2)}\n`);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.rename(tmp, path);
    await syncDir(fs, runDir);
  } catch (e) {
    await fs.unlink(tmp).catch(() => undefined);
    throw new AciaError('LEDGER_IO', `cannot write ${path}: ${errorMessage(e)}`, { cause: e });
  }
}

/** The run's manifest, or null when the run has none yet. A damaged manifest is LEDGER_CORRUPT. */
export async function readManifest(runDir: string, fs: LedgerFs = nodeLedgerFs): Promise<RunManifest | null> {
  const path = join(runDir, MANIFEST_FILE);
  let text: string;
  try {
    // Not through a link, and never waiting on a FIFO: a clone may have planted either in its place.
    text = (await readFileNoFollow(fs, path)).toString('utf8');
  } catch (e) {
    if (errnoCode(e) === 'ENOENT') return null;
    if (errnoCode(e) === 'ELOOP') throw new AciaError('UNSAFE_REPO', `refusing ${path}: it is a symbolic link, not a regular file`);
    if (errnoCode(e) === 'NOT_REGULAR') throw new AciaError('UNSAFE_REPO', `refusing ${path}: it is not a regular file`);
    throw new AciaError('LEDGER_IO', `cannot read ${path}: ${errorMessage(e)}`, { cause: e });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new AciaError('LEDGER_CORRUPT', `${path}: not JSON (${errorMessage(e)})`);
  }
  const parsed = RunManifest.safeParse(value);
  if (!parsed.success) throw new AciaError('LEDGER_CORRUPT', `${path}: not a run manifest (${parsed.error.issues[0]?.message ?? ''})`);
  return parsed.data;
}

/** Run ids present under `.acia/runs`, sorted (ids sort by time). */
export async function listRunIds(repoRoot: string, fs: LedgerFs = nodeLedgerFs): Promise<string[]> {
  // A `.acia/runs` link out of the repository is refused; entries that are links or not run ids are not runs.
  if (!checkRealDir(repoRoot, runsDir(repoRoot))) return [];
  try {
    const names = await fs.readdir(runsDir(repoRoot), { withFileTypes: true });
    return names.filter((d) => d.isDirectory() && isRunId(d.name)).map((d) => d.name).sort();
  } catch (e) {
    if (errnoCode(e) === 'ENOENT') return [];
    throw new AciaError('LEDGER_IO', `cannot list ${runsDir(repoRoot)}: ${errorMessage(e)}`, { cause: e });
  }
}

/** Manifests of the runs that have one, oldest first (startedAt, then run id). */
export async function listRuns(repoRoot: string, fs: LedgerFs = nodeLedgerFs): Promise<RunManifest[]> {
  const manifests: RunManifest[] = [];
  for (const id of await listRunIds(repoRoot, fs)) {
    const m = await readManifest(runDirOf(repoRoot, id), fs);
    if (m) manifests.push(m);
  }
  return manifests.sort((a, b) => (a.startedAt < b.startedAt ? -1 : a.startedAt > b.startedAt ? 1 : a.runId < b.runId ? -1 : 1));
}
