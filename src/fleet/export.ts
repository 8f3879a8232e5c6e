// `acia export <runId> --db`: a fleet run as an ordinary .acia/runs/<id> directory (ledger, blobs,
// manifest) that `acia verify`, `show`, `replay` and `bundle` read offline, with no database.
import { join } from 'node:path';
import { ensureRunDir } from '../core/contain/acia-state.js';
import { ensureRealDir, writeRegularFile } from '../core/contain/no-follow.js';
import type pg from 'pg';
import { parseLedgerLine } from '../core/ledger/line-reader.js';
import { foldRun } from '../core/run/reducer.js';
import { readPgRun } from '../core/ledger/pg-ledger.js';
import { writeManifest } from '../core/ledger/manifest.js';
import type { RunManifest } from '../core/ledger/run-vocabulary.js';
import { LEDGER_FILE } from '../core/ledger/file-ledger.js';
import { writeAnchor } from '../core/ledger/anchor.js';
import { AciaError } from '../core/errors.js';

/** `anchor: false` for a private copy a reading command uses and deletes: nothing to remember it by. */
export async function exportRun(db: pg.Pool, runId: string, repo: string, env: NodeJS.ProcessEnv = process.env, o: { anchor?: boolean } = {}): Promise<{ dir: string; entries: number; blobs: number; manifest: RunManifest }> {
  const { lines, blobs } = await readPgRun(db, runId);
  // The id is checked and nothing on the way (or in the way: a planted ledger link) is followed.
  const dir = ensureRunDir(repo, runId);
  ensureRealDir(repo, join(dir, 'blobs'));
  writeRegularFile(repo, join(dir, LEDGER_FILE), lines.map((l) => `${l}\n`).join(''));
  for (const [ref, content] of blobs) {
    // A ref becomes a file name: anything but a content hash (a row someone wrote by hand) could name a path.
    if (!/^sha256:[0-9a-f]{64}$/.test(ref)) throw new AciaError('LEDGER_CORRUPT', `run ${runId}: the database holds a blob with a malformed ref`, { hint: `check it: acia verify ${runId} --db <url>` });
    writeRegularFile(repo, join(dir, 'blobs', ref.slice('sha256:'.length)), content);
  }
  const entries = lines.map((l, i) => parseLedgerLine(l, `run ${runId} in the database, seq ${i}`));
  const first = entries[0];
  const last = entries.at(-1);
  const state = foldRun(entries);
  const started = state.started;
  const completed = state.completed;
  const manifest: RunManifest = {
    runId,
    status: completed?.reason ?? 'running',
    goal: started?.goal.intent ?? '',
    head: last ? { seq: last.seq, hash: last.hash } : null,
    startedAt: first?.ts ?? new Date(0).toISOString(),
    updatedAt: last?.ts ?? new Date(0).toISOString(),
    costUsd: completed?.costUsd ?? null,
    runBranch: started?.runBranch ?? `acia/${runId}`,
  };
  await writeManifest(dir, manifest);
  // The user pulled this run from their own database on purpose: anchor it in their state directory, as a
  // local run is, so `acia verify` and `acia resume` accept it here and catch any later rewrite.
  if (o.anchor !== false) writeAnchor(env, dir, runId, manifest.head, manifest.status, new Date());
  return { dir, entries: lines.length, blobs: blobs.size, manifest };
}
