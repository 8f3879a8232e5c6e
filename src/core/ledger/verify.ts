// `acia verify` for runs: the chain, each hash, seq continuity, monotonic time, referenced blobs, the anchor.
import { basename, join } from 'node:path';
import { sha256Hex } from '../acm/canonical-json.js';
import { GENESIS_HASH } from '../acm/contracts.js';
import { AciaError, errorMessage } from '../errors.js';
import { hexOf } from './blob-store.js';
import { collectBlobRefs } from './blob-refs.js';
import { readRunBlob } from '../contain/acia-state.js';
import { RecordedRequests, type RequestRecord } from './request-delta.js';
import { alteredInlineBlob } from './inline-blobs.js';
import type { RunManifest } from './run-vocabulary.js';
import { LEDGER_FILE } from './file-ledger.js';
import { checkEntryShape } from './entry-shape.js';
import { lineHashMatches } from './hash.js';
import { errnoCode, nodeLedgerFs, readFileNoFollow } from './ledger-fs.js';
import { readLedgerLines } from './line-reader.js';
import { listRunIds, readManifest, runDirOf, runsDir } from './manifest.js';
import type { LedgerHead } from './types.js';
import type { RunAnchor } from './anchor.js';

export type VerifyCode =
  | 'NO_LEDGER' | 'TORN_TAIL' | 'PARSE' | 'SCHEMA' | 'SEQ_GAP' | 'CHAIN_BROKEN' | 'HASH_MISMATCH'
  | 'TS_NOT_MONOTONIC' | 'RUN_ID' | 'BLOB_MISSING' | 'BLOB_ALTERED' | 'MANIFEST' | 'TRUNCATED'
  | 'ANCHOR_MISMATCH' | 'MISSING_ANCHOR' | 'BUNDLE_CHECKSUM' | 'UNANCHORED'
  /** A bundle's ACM v0.5 layout (spec-bundle.ts); and a bundle another implementation wrote, which acia cannot verify. */
  | 'BUNDLE_LAYOUT' | 'NOT_ACIA_BUNDLE';

export interface VerifyProblem {
  /** The ledger seq the problem is at, or null when it concerns the run as a whole. */
  seq: number | null;
  code: VerifyCode;
  message: string;
}

export interface RunVerification {
  runId: string;
  ok: boolean;
  entries: number;
  head: LedgerHead | null;
  problems: VerifyProblem[];
}

export interface VerifyReport {
  ok: boolean;
  runs: RunVerification[];
}

const MAX_PROBLEMS = 200;

export interface VerifyOptions {
  runId?: string;
  /**
   * The run's anchor from the user's state directory (core/ledger/anchor): null when there is none, which is
   * a problem (UNANCHORED: not a run ACIA recorded for this user). Undefined skips the check (a bundle, a
   * library caller with no state directory).
   */
  anchor?: RunAnchor | null;
}

/** Verifies every run under `<repoRoot>/.acia/runs`. No runs directory is RUN_NOT_FOUND (a usage error). */
export async function verifyAll(repoRoot: string, anchorOf?: (runDir: string, runId: string) => RunAnchor | null): Promise<VerifyReport> {
  try {
    await nodeLedgerFs.stat(runsDir(repoRoot));
  } catch (e) {
    if (errnoCode(e) === 'ENOENT') throw new AciaError('RUN_NOT_FOUND', `no runs in ${repoRoot} (no .acia/runs)`);
    throw e;
  }
  const runs: RunVerification[] = [];
  for (const id of await listRunIds(repoRoot)) {
    const dir = runDirOf(repoRoot, id);
    runs.push(await verifyRun(dir, anchorOf ? { anchor: anchorOf(dir, id) } : {}));
  }
  return { ok: runs.every((r) => r.ok), runs };
}

/** Verifies one run directory. Streams the ledger; never throws for a damaged run, it reports it. */
export async function verifyRun(runDir: string, options: VerifyOptions = {}): Promise<RunVerification> {
  const runId = options.runId ?? basename(runDir);
  const problems: VerifyProblem[] = [];
  const add = (seq: number | null, code: VerifyCode, message: string): void => {
    if (problems.length < MAX_PROBLEMS) problems.push({ seq, code, message });
  };
  let manifest: RunManifest | null = null;
  try {
    manifest = await readManifest(runDir);
  } catch (e) {
    add(null, 'MANIFEST', errorMessage(e));
  }
  const anchorSeq = manifest?.head?.seq ?? -1;
  let anchorHash: string | null = null;
  const outside = options.anchor;
  const outsideSeq = outside?.head?.seq ?? -1;
  let outsideHash: string | null = null;

  const blobFirstSeq = new Map<string, number>();
  /** LLM_CALLs whose request is a delta: rebuilt once every blob is checked, and held to their requestHash. */
  const deltas: (RequestRecord & { seq: number })[] = [];
  let count = 0;
  let expected = 0;
  let prevHash: string | null = GENESIS_HASH;
  let prevTs = '';
  let last: LedgerHead | null = null;
  let completed = false;
  try {
    for await (const line of readLedgerLines(join(runDir, LEDGER_FILE))) {
      const seq = expected;
      if (!line.terminated) {
        add(seq, 'TORN_TAIL', `line ${line.lineNo} has no trailing newline (a torn write; opening the run recovers it)`);
        break;
      }
      let raw: unknown;
      try {
        raw = JSON.parse(line.text);
      } catch {
        add(seq, 'PARSE', `line ${line.lineNo} is not JSON`);
        expected += 1;
        prevHash = null;
        continue;
      }
      const parsed = checkEntryShape(raw);
      if (!parsed.ok) {
        add(seq, 'SCHEMA', `line ${line.lineNo} is not a ledger entry (${parsed.message})`);
        expected += 1;
        prevHash = null;
        continue;
      }
      const entry = parsed.entry;
      count += 1;
      if (entry.seq !== expected) add(entry.seq, 'SEQ_GAP', `line ${line.lineNo} has seq ${entry.seq}, expected ${expected}`);
      if (prevHash !== null && entry.prevHash !== prevHash) add(entry.seq, 'CHAIN_BROKEN', `seq ${entry.seq}: prevHash does not match the hash of the entry before it`);
      if (!lineHashMatches(line.text, entry)) add(entry.seq, 'HASH_MISMATCH', `seq ${entry.seq}: hash does not match the entry's content`);
      if (entry.ts < prevTs && Date.parse(entry.ts) < Date.parse(prevTs)) add(entry.seq, 'TS_NOT_MONOTONIC', `seq ${entry.seq}: ts ${entry.ts} is before ${prevTs}`);
      if (entry.runId !== runId) add(entry.seq, 'RUN_ID', `seq ${entry.seq}: runId ${entry.runId}, expected ${runId}`);
      for (const ref of collectBlobRefs(entry.data)) if (!blobFirstSeq.has(ref)) blobFirstSeq.set(ref, entry.seq);
      const delta = entry.type === 'LLM_CALL' ? deltaRequestOf(entry.seq, entry.data) : null;
      if (delta) deltas.push(delta);
      const altered = alteredInlineBlob(entry.data);
      if (altered !== null) add(entry.seq, 'BLOB_ALTERED', `seq ${entry.seq}: blob ${altered} (carried in the entry) does not hash to its name`);
      if (entry.type === 'RUN_COMPLETED') completed = true;
      if (entry.seq === anchorSeq) anchorHash = entry.hash;
      if (entry.seq === outsideSeq) outsideHash = entry.hash;
      expected = entry.seq + 1;
      prevHash = entry.hash;
      prevTs = entry.ts;
      last = { seq: entry.seq, hash: entry.hash };
    }
  } catch (e) {
    if (errnoCode(e) === 'ENOENT') add(null, 'NO_LEDGER', `no ${LEDGER_FILE} in ${runDir}`);
    else add(null, 'NO_LEDGER', `cannot read ${join(runDir, LEDGER_FILE)}: ${errorMessage(e)}`);
  }

  await checkBlobs(runDir, blobFirstSeq, add);
  checkDeltaRequests(runDir, deltas, add);
  checkAnchor(manifest, runId, last, anchorHash, completed, add);
  if (outside !== undefined) checkOutsideAnchor(outside, runId, last, outsideHash, add);
  problems.sort((a, b) => (a.seq ?? Infinity) - (b.seq ?? Infinity));
  return { runId, ok: problems.length === 0, entries: count, head: last, problems };
}

async function checkBlobs(
  runDir: string,
  refs: Map<string, number>,
  add: (seq: number | null, code: VerifyCode, message: string) => void,
): Promise<void> {
  for (const [ref, seq] of refs) {
    const hex = hexOf(ref);
    let content: Buffer;
    try {
      // No link followed and no FIFO waited on: what is hashed is the run's own file.
      content = await readFileNoFollow(nodeLedgerFs, join(runDir, 'blobs', hex));
    } catch (e) {
      const code = errnoCode(e);
      add(seq, 'BLOB_MISSING', `seq ${seq}: blob ${ref} ${code === 'ELOOP' || code === 'NOT_REGULAR' ? 'is a link or not a regular file' : 'is missing'}`);
      continue;
    }
    if (sha256Hex(content) !== hex) add(seq, 'BLOB_ALTERED', `seq ${seq}: blob ${ref} content does not hash to its name`);
  }
}

function deltaRequestOf(seq: number, data: unknown): (RequestRecord & { seq: number }) | null {
  if (typeof data !== 'object' || data === null || !('request' in data) || data.request === undefined) return null;
  return 'requestHash' in data && typeof data.requestHash === 'string' ? { seq, requestHash: data.requestHash, request: data.request } : null;
}

/** Each request stored as a delta, rebuilt on its base (a blob, or a request rebuilt before it), must hash to its requestHash. */
function checkDeltaRequests(runDir: string, deltas: readonly (RequestRecord & { seq: number })[], add: (seq: number | null, code: VerifyCode, message: string) => void): void {
  if (deltas.length === 0) return;
  const requests = new RecordedRequests(deltas, (ref) => readRunBlob(runDir, ref));
  for (const d of deltas) {
    const got = requests.check(d);
    if (!got.ok) add(d.seq, got.missing ? 'BLOB_MISSING' : 'BLOB_ALTERED', `seq ${d.seq}: ${got.message}`);
  }
}

function checkAnchor(
  manifest: RunManifest | null,
  runId: string,
  last: LedgerHead | null,
  anchorHash: string | null,
  completed: boolean,
  add: (seq: number | null, code: VerifyCode, message: string) => void,
): void {
  if (manifest && manifest.runId !== runId) add(null, 'MANIFEST', `manifest.json names run ${manifest.runId}, expected ${runId}`);
  const head = manifest?.head ?? null;
  if (!head) {
    if (completed) add(null, 'MISSING_ANCHOR', 'the run finished (RUN_COMPLETED) but manifest.json has no head to anchor it');
    return;
  }
  const lastSeq = last?.seq ?? -1;
  if (lastSeq < head.seq) {
    add(lastSeq + 1, 'TRUNCATED', `ledger ends at seq ${lastSeq} but the manifest anchors seq ${head.seq}: entries were cut off`);
  } else if (anchorHash !== head.hash) {
    add(head.seq, 'ANCHOR_MISMATCH', `seq ${head.seq}: hash differs from the head anchored in manifest.json`);
  } else if (manifest?.status !== 'running' && lastSeq > head.seq) {
    add(head.seq + 1, 'ANCHOR_MISMATCH', `the manifest says the run stopped at seq ${head.seq} but the ledger goes on to seq ${lastSeq}`);
  }
}

/**
 * The head anchored in the user's state directory. The manifest's own anchor sits next to the ledger and
 * can be re-sealed with it; this one cannot be written from the checkout.
 */
function checkOutsideAnchor(
  anchor: RunAnchor | null,
  runId: string,
  last: LedgerHead | null,
  hashAtAnchor: string | null,
  add: (seq: number | null, code: VerifyCode, message: string) => void,
): void {
  if (anchor === null) {
    add(null, 'UNANCHORED', `no anchor for run ${runId} in your state directory: ACIA did not record this run for you (a run shipped with a repository or copied from elsewhere), so its chain proves nothing`);
    return;
  }
  if (anchor.runId !== runId) {
    add(null, 'ANCHOR_MISMATCH', `the anchor in your state directory names run ${anchor.runId}, expected ${runId}`);
    return;
  }
  const lastSeq = last?.seq ?? -1;
  if (anchor.head === null) return;
  if (lastSeq < anchor.head.seq) add(lastSeq + 1, 'TRUNCATED', `ledger ends at seq ${lastSeq} but your state directory anchors seq ${anchor.head.seq}: entries were cut off`);
  else if (hashAtAnchor !== anchor.head.hash) add(anchor.head.seq, 'ANCHOR_MISMATCH', `seq ${anchor.head.seq}: hash differs from the head anchored in your state directory (the ledger was rewritten)`);
  else if (anchor.status !== 'running' && lastSeq > anchor.head.seq) add(anchor.head.seq + 1, 'ANCHOR_MISMATCH', `your state directory says the run stopped at seq ${anchor.head.seq} but the ledger goes on to seq ${lastSeq}`);
}
