// The replay bundle (ACM §14.3, guideline §17): a run's ACM artifacts, engine trace and ledger in one
// directory with a manifest of sha256 checksums, so a third party can check and replay it.
import { bundleDirOf } from '../contain/acia-state.js';
import { linkSync, lstatSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { checkRealDir, checkRegularOrMissing, ensureRealDir, readRegularAt, readRegularFile } from '../contain/no-follow.js';
import { basename, dirname, join, relative, sep } from 'node:path';
import { canonicalJson, sha256Hex } from '../acm/canonical-json.js';
import { dataOf, taskIdOf, type LedgerEntry } from './entry.js';
import { ACM_VERSION } from '../acm/acm-version.js';
import { safeName, specFiles } from './bundle-spec.js';
import { inspectSpecBundle, layoutProblems } from './spec-bundle.js';
import { foldRun } from '../run/reducer.js';
import { SPEC_API_VERSION } from '../acm/spec-names.js';
import type { RunManifest } from './run-vocabulary.js';
import { AciaError, errorMessage } from '../errors.js';
import { hexOf } from './blob-store.js';
import { collectBlobRefs } from './blob-refs.js';
import { LEDGER_FILE } from './file-ledger.js';
import { RecordedRequests } from './request-delta.js';
import { errnoCode } from './ledger-fs.js';
import { ledgerEntriesOf } from './line-reader.js';
import { MANIFEST_FILE, runDirOf } from './manifest.js';
import type { VerifyProblem } from './verify.js';
import { verifyRun } from './verify.js';

export const BUNDLE_KIND = 'acia-replay-bundle';

/** The bundle layout this acia writes: 2 is the ACM v0.5 layout (bundle-spec.ts) with ACIA's ledger in memory-ledger/acia/. */
export const BUNDLE_VERSION = 2;

/** Where a bundle keeps ACIA's hash-chained ledger, laid out as a run directory (verify and replay read it). */
export function bundleLedgerDir(dir: string, manifest: BundleManifest): string {
  return manifest.version === 1 ? join(dir, 'memory-ledger') : join(dir, 'memory-ledger', 'acia');
}

export interface BundleManifest {
  kind: typeof BUNDLE_KIND;
  /** 1: the first layout (ACIA's ledger in memory-ledger/); 2: the ACM v0.5 layout. */
  version: 1 | 2;
  /** The ACM version the bundle's layout and artifacts conform to. */
  acmVersion?: string;
  runId: string;
  head: { seq: number; hash: string } | null;
  /** Relative path (forward slashes) -> sha256 hex of the file's bytes; every file but this manifest. */
  files: Record<string, string>;
}

/** The default bundle location `.acia/bundles/<runId>` (core/contain checks the id). */
export { bundleDirOf };

export interface BundleOptions {
  /** The run manifest about to be written (the team bundles a run before it marks it finished). */
  runManifest?: RunManifest;
  /**
   * The run's entries as its live ledger holds them: taken instead of parsing the file again when the
   * file holds exactly them (holdsEntries); otherwise the file is read as without them.
   */
  entries?: readonly LedgerEntry[];
  /**
   * Blobs (sha256 hex) whose bytes this process hashed to their names when it wrote them (the live
   * ledger's blobsWritten()): in the default location they are linked without being read and hashed
   * again, the link still checked to be the run's regular file.
   */
  knownBlobs?: ReadonlySet<string>;
}

export async function buildBundle(repoRoot: string, runId: string, outDir?: string, options: BundleOptions = {}): Promise<{ dir: string; files: number }> {
  const runDir = runDirOf(repoRoot, runId);
  const ledgerPath = join(runDir, LEDGER_FILE);
  if (!(await exists(ledgerPath))) throw new AciaError('RUN_NOT_FOUND', `run ${runId} not found (no ${ledgerPath})`);
  const target = outDir ?? bundleDirOf(repoRoot, runId);
  // The bundle is written beside its place, in a directory of its own (mkdtemp: never one that was there),
  // and renamed into place when whole, so a process killed while writing (after the run ended, before it
  // exited) leaves no half bundle where the next write would refuse to go.
  const parent = dirname(target);
  const staging = `.${basename(target)}.partial-`;
  if (outDir === undefined) {
    // Inside the checkout, where a clone could have put links: `.acia/bundles` must lead nowhere else.
    ensureRealDir(repoRoot, parent);
    checkRegularOrMissing(target, true);
  }
  // A run shipped with a clone may be bundled too: nothing on the way to its files may be a link, and the
  // ledger must be a regular file (a FIFO there would hang the read).
  checkRealDir(repoRoot, join(runDir, 'blobs'));
  checkRegularOrMissing(ledgerPath);
  await checkOutDir(target);
  await mkdir(parent, { recursive: true });
  // What killed writes of this run's bundle left in `.acia/bundles` (a place of ACIA's own; --out's is the user's).
  if (outDir === undefined) for (const name of await readdir(parent)) if (name.startsWith(staging)) await rm(join(parent, name), { recursive: true, force: true });
  const dir = await mkdtemp(join(parent, staging));
  try {
    return { dir: target, files: await writeBundleFiles(dir, target, runDir, ledgerPath, runId, repoRoot, outDir === undefined, options) };
  } catch (e) {
    await rm(dir, { recursive: true, force: true }).catch(() => undefined);
    throw e;
  }
}

async function writeBundleFiles(dir: string, target: string, runDir: string, ledgerPath: string, runId: string, repoRoot: string, mayLink: boolean, options: BundleOptions): Promise<number> {
  const ledgerBytes = await readFile(ledgerPath);
  const entries = await ledgerEntriesOf(ledgerPath, options.entries, ledgerBytes);

  const files = new Map<string, Buffer>();
  const json = (path: string, value: unknown): void => void files.set(path, Buffer.from(`${JSON.stringify(value, null, 2)}\n`));
  const jsonl = (path: string, list: readonly LedgerEntry[]): void => {
    if (list.length > 0) files.set(path, Buffer.from(list.map((e) => `${canonicalJson(e)}\n`).join('')));
  };
  // Blobs land in the bundle up to three times (engine-trace/, planner/, memory-ledger/): each is read once.
  // In the default location (inside .acia, beside the run) a blob whose bytes match its name is hard-linked
  // into place rather than written again (a write is an open with O_CREAT per file; a run of 200 turns has
  // about 900 of them); a bundle written elsewhere with --out, to be shared or edited, gets copies. Sync
  // reads: the run is over, and a thread-pool round trip per small file was most of the bundle's time.
  const blobCache = new Map<string, Buffer | null>();
  /** Blobs whose bytes hash to their name, with the identity of the file that was read. */
  const linkable = new Map<string, { dev: number; ino: number }>();
  const readBlob = (ref: string): Buffer | null => {
    const hex = hexOf(ref);
    let content = blobCache.get(hex);
    if (content === undefined) {
      // The blobs directory was checked above; a blob that is not a plain file is left out (verify names it).
      let read: ReturnType<typeof readRegularAt>;
      try {
        read = readRegularAt(join(runDir, 'blobs', hex), Number.POSITIVE_INFINITY);
      } catch {
        read = 'missing';
      }
      content = typeof read === 'object' ? read.content : null;
      if (typeof read === 'object' && mayLink && sha256Hex(read.content) === hex) linkable.set(hex, { dev: read.dev, ino: read.ino });
      blobCache.set(hex, content);
    }
    return content;
  };
  /** Bundle path -> the run blob it is a copy of (when that blob's bytes are its name). */
  const sources = new Map<string, string>();
  /** Bundle paths of known blobs not read: their bytes are read only if the link cannot be made. */
  const unread = new Set<string>();
  const putBlob = (path: string, ref: string): void => {
    const hex = hexOf(ref);
    if (!blobCache.has(hex) && !linkable.has(hex) && mayLink && options.knownBlobs?.has(hex) === true) {
      const identity = regularFileIdentity(join(runDir, 'blobs', hex));
      if (identity) linkable.set(hex, identity);
    }
    if (linkable.has(hex) && !blobCache.has(hex)) {
      files.set(path, EMPTY);
      unread.add(path);
      sources.set(path, hex);
      return;
    }
    const content = readBlob(ref);
    if (!content) return;
    files.set(path, content);
    if (linkable.has(hex)) sources.set(path, hex);
  };
  const blobsInto = (prefix: string, list: readonly LedgerEntry[]): void => {
    const refs = new Set<string>();
    for (const e of list) collectBlobRefs(e.data, refs);
    for (const ref of [...refs].sort()) putBlob(`${prefix}/blobs/${hexOf(ref)}`, ref);
  };
  /** A known blob's bytes after all (its link failed): listed under its name, so they must still be those. */
  const knownContent = (hex: string): Buffer => {
    const content = readBlob(`sha256:${hex}`);
    if (content === null || sha256Hex(content) !== hex) throw new AciaError('LEDGER_IO', `blob ${hex} changed while the bundle was written`);
    return content;
  };
  const ofType = (...types: string[]): LedgerEntry[] => entries.filter((e) => types.includes(e.type));

  // The ACM v0.5 layout other ACM tools read (metadata.json, the Goal Card, context/context.json, one Plan per
  // file, Task Specs, policy records, verification, the spec-form ledger, the engine trace, task I/O...).
  const state = foldRun(entries);
  const spec = specFiles(entries, state, readBlob);
  for (const [path, value] of spec.json) json(path, value);
  for (const [path, text] of spec.text) files.set(path, Buffer.from(text));
  for (const [path, ref] of spec.blobs) putBlob(path, ref);

  // ACIA's own records beside them: the entries each artifact came from, and the recorded packet bytes.
  jsonl('goal/amendments.jsonl', ofType('GOAL_AMENDED'));
  jsonl('context/context-built.jsonl', ofType('CONTEXT_BUILT'));
  for (const { packetRef } of dataOf(entries, 'CONTEXT_BUILT')) {
    const packet = readBlob(packetRef);
    if (packet) files.set(`context/${hexOf(packetRef)}.json`, packet);
  }
  jsonl('plans/proposed.jsonl', ofType('PLAN_PROPOSED'));

  for (const e of entries) {
    if (e.type !== 'POLICY_DECISION') continue;
    const d = e.data;
    json(`policy/requests/${pad(e.seq)}-${d.hook}.json`, d.request ?? null);
    json(`policy/responses/${pad(e.seq)}-${d.hook}.json`, d.response);
  }

  const verifications = ofType('VERIFICATION');
  jsonl('verification/verifications.jsonl', verifications);
  blobsInto('verification', verifications);

  const trace = ofType('LLM_CALL', 'TOOL_CALL', 'TOOL_RESULT');
  jsonl('engine-trace/trace.jsonl', trace);
  blobsInto('engine-trace', trace);

  const taskIds = new Set(entries.map(taskIdOf).filter((t) => t !== undefined));
  for (const id of [...taskIds].sort()) {
    jsonl(`task-io/${safeName(id)}.jsonl`, entries.filter((e) => taskIdOf(e) === id && e.type !== 'LLM_CALL' && e.type !== 'TOOL_CALL' && e.type !== 'TOOL_RESULT'));
  }

  const planner = entries.filter((e) => e.type === 'LLM_CALL' && (e.actor === 'pm' || e.actor.startsWith('pm:')));
  blobsInto('planner', planner);
  // The planner's prompts: each call's model-visible request, stored under its requestHash; one recorded as
  // a delta of the call before it (request-delta.ts) is written out whole, rebuilt and checked against its hash.
  const recorded = new RecordedRequests(dataOf(entries, 'LLM_CALL'), readBlob);
  const requests = (prefix: string, list: readonly LedgerEntry[], deltas: 'whole' | 'skip'): void => {
    for (const e of list) {
      if (e.type !== 'LLM_CALL') continue;
      const path = `${prefix}/${hexOf(e.data.requestHash)}`;
      if (!recorded.isDelta(e.data.requestHash)) putBlob(path, e.data.requestHash);
      else if (deltas === 'whole') {
        const got = recorded.get(e.data.requestHash);
        if (got.ok) files.set(path, Buffer.from(got.text));
      }
    }
  };
  requests('planner/prompts', planner, 'whole');

  // memory-ledger/acia/ is ACIA's ledger laid out as a run directory, so verifyRun checks it as it checks a
  // live run and replay runs from it; memory-ledger/ledger.jsonl is the same ledger in the spec's schema.
  files.set(`${NATIVE}/${LEDGER_FILE}`, ledgerBytes);
  const runManifest = options.runManifest !== undefined ? Buffer.from(`${JSON.stringify(options.runManifest, null, 2)}\n`) : readRegularFile(repoRoot, join(runDir, MANIFEST_FILE));
  if (runManifest) files.set(`${NATIVE}/${MANIFEST_FILE}`, runManifest);
  blobsInto(NATIVE, entries);
  // Requests stored whole too (a delta is in the ledger itself), so verify and replay of the bundle find them.
  requests(`${NATIVE}/blobs`, ofType('LLM_CALL'), 'skip');

  const last = entries.at(-1);
  const manifest: BundleManifest = { kind: BUNDLE_KIND, version: BUNDLE_VERSION, acmVersion: ACM_VERSION, runId, head: last ? { seq: last.seq, hash: last.hash } : null, files: {} };
  const sums = new Map([...files].map(([path, content]) => [path, sources.get(path) ?? sha256Hex(content)]));
  files.set(SPEC_MANIFEST, Buffer.from(specManifest(runId, state.started?.goal.id ?? null, entries.at(-1)?.ts ?? null, sums)));
  const made = new Set<string>();
  for (const path of [...files.keys()].sort()) {
    const content = files.get(path)!;
    const source = sources.get(path);
    manifest.files[path] = sums.get(path) ?? sha256Hex(content);
    const parent = dirname(join(dir, path));
    if (!made.has(parent)) {
      mkdirSync(parent, { recursive: true });
      made.add(parent);
    }
    if (source === undefined || !tryLink(join(runDir, 'blobs', source), join(dir, path), linkable.get(source)!)) writeFileSync(join(dir, path), unread.has(path) ? knownContent(source!) : content);
  }
  await writeFile(join(dir, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
  await checkOutDir(target);
  await rm(target, { recursive: true, force: true });
  try {
    await rename(dir, target);
  } catch (e) {
    throw new AciaError('LEDGER_IO', `cannot put the bundle in ${target}: ${errorMessage(e)}`, { cause: e });
  }
  return files.size + 1;
}

/** Reads a directory's manifest.json if it is a bundle manifest; null for anything else. */
export async function readBundleManifest(dir: string): Promise<BundleManifest | null> {
  try {
    const value = JSON.parse(await readFile(join(dir, MANIFEST_FILE), 'utf8')) as Partial<BundleManifest>;
    return value.kind === BUNDLE_KIND && typeof value.files === 'object' && value.files !== null ? (value as BundleManifest) : null;
  } catch {
    return null;
  }
}

/** Every listed file present with its checksum, no unlisted file, and the ledger inside verified. */
export async function verifyBundle(dir: string): Promise<{ runId: string; ok: boolean; entries: number; head: { seq: number; hash: string } | null; problems: VerifyProblem[] }> {
  const manifest = await readBundleManifest(dir);
  if (!manifest) throw new AciaError('USAGE', `${dir} is not a replay bundle (no bundle manifest.json)`);
  const problems: VerifyProblem[] = [];
  for (const [path, sum] of Object.entries(manifest.files)) {
    const content = await readFile(join(dir, path)).catch(() => null);
    if (!content) problems.push({ seq: null, code: 'BUNDLE_CHECKSUM', message: `${path} is listed in the bundle manifest but missing` });
    else if (sha256Hex(content) !== sum) problems.push({ seq: null, code: 'BUNDLE_CHECKSUM', message: `${path} does not match its sha256 in the bundle manifest` });
  }
  for (const path of await listFiles(dir)) {
    if (path !== MANIFEST_FILE && !(path in manifest.files)) problems.push({ seq: null, code: 'BUNDLE_CHECKSUM', message: `${path} is not listed in the bundle manifest` });
  }
  const ledger = await verifyRun(bundleLedgerDir(dir, manifest), { runId: manifest.runId });
  // The ACM v0.5 layout the bundle promises other tools (bundles of the first layout promised none).
  if (manifest.version !== 1) problems.push(...layoutProblems(await inspectSpecBundle(dir)));
  if (manifest.head && (ledger.head?.seq !== manifest.head.seq || ledger.head.hash !== manifest.head.hash)) {
    problems.push({ seq: manifest.head.seq, code: 'ANCHOR_MISMATCH', message: 'the ledger head differs from the head in the bundle manifest' });
  }
  const all = [...ledger.problems, ...problems].sort((a, b) => (a.seq ?? Infinity) - (b.seq ?? Infinity));
  return { runId: manifest.runId, ok: all.length === 0, entries: ledger.entries, head: ledger.head, problems: all };
}

async function listFiles(root: string, dir = root): Promise<string[]> {
  const out: string[] = [];
  for (const d of await readdir(dir, { withFileTypes: true })) {
    const full = join(dir, d.name);
    if (d.isDirectory()) out.push(...(await listFiles(root, full)));
    else out.push(relative(root, full).split(sep).join('/'));
  }
  return out;
}

/** The bundle's place may be missing, empty or an earlier bundle (replaced); anything else is refused. */
async function checkOutDir(dir: string): Promise<void> {
  try {
    if ((await readdir(dir)).length > 0 && !(await readBundleManifest(dir))) throw new AciaError('USAGE', `${dir} exists and is not an acia bundle; choose another --out`);
  } catch (e) {
    if (e instanceof AciaError) throw e;
    if (errnoCode(e) !== 'ENOENT') throw new AciaError('LEDGER_IO', `cannot use ${dir}: ${errorMessage(e)}`, { cause: e });
  }
}

const NATIVE = 'memory-ledger/acia';
const EMPTY = Buffer.alloc(0);

/** A regular file's identity, not following a link; null for anything else or nothing. */
function regularFileIdentity(path: string): { dev: number; ino: number } | null {
  try {
    const st = lstatSync(path);
    return st.isFile() ? { dev: st.dev, ino: st.ino } : null;
  } catch {
    return null;
  }
}
const SPEC_MANIFEST = 'manifest.yaml';

/**
 * The spec's ReplayBundleManifest (§5.10.3), what the bundle holds and where; its checksum is the sha256
 * of the canonical JSON of every other file's sha256 (ACIA's manifest.json lists the same sums, and this
 * file's). JSON is YAML, so the file is both; the comment says what it is.
 */
function specManifest(runId: string, goalId: string | null, generatedAt: string | null, sums: ReadonlyMap<string, string>): string {
  const paths = [...sums.keys()].sort();
  const under = (prefix: string) => paths.filter((p) => p.startsWith(prefix));
  const doc = {
    apiVersion: SPEC_API_VERSION,
    kind: 'ReplayBundleManifest',
    metadata: { goalId, runId, generatedAt, engine: 'acia' },
    contents: {
      metadata: 'metadata.json',
      goal: 'goal/goal.json',
      context: 'context/context.json',
      plans: under('plans/').filter((p) => p.endsWith('.json')),
      selection: 'plans/selection.yaml',
      capabilityMap: 'capability-map/capability-map.json',
      taskSpecs: under('task-specs/'),
      policy: { requests: 'policy/requests/', responses: 'policy/responses/', records: 'policy/requests.jsonl', sheet: 'policy/policy-sheet.json' },
      verification: 'verification/results.json',
      verificationSheet: 'verification/sheet.json',
      memoryLedger: 'memory-ledger/ledger.jsonl',
      acmLedger: `${NATIVE}/${LEDGER_FILE}`,
      engineTrace: 'engine-trace/run.json',
      taskIO: 'task-io/',
      planner: { llmCalls: 'planner/llm-calls.jsonl', prompts: 'planner/prompts/', internalContext: 'planner/internal-context/manifest.json' },
    },
    checksum: { algorithm: 'sha256', value: `sha256-${sha256Hex(canonicalJson(Object.fromEntries(paths.map((p) => [p, sums.get(p)]))))}`, over: 'the canonical JSON of {path: sha256} of every file but manifest.json and this one' },
  };
  return `# ACM v0.5 ReplayBundleManifest (spec §5.10.3), written by acia as JSON, which is YAML.\n${JSON.stringify(doc, null, 2)}\n`;
}

function pad(seq: number): string {
  return String(seq).padStart(6, '0');
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/**
 * A hard link to the run blob that was read; false when the file system will not have one (another device,
 * no links) or when what got linked is not that file (it was swapped since, e.g. for a symbolic link,
 * which link() does not follow): the caller then writes the bytes it read.
 */
function tryLink(source: string, target: string, read: { dev: number; ino: number }): boolean {
  try {
    linkSync(source, target);
  } catch {
    return false;
  }
  try {
    const st = lstatSync(target);
    if (st.isFile() && st.dev === read.dev && st.ino === read.ino) return true;
  } catch {
    /* gone: write it */
  }
  rmSync(target, { force: true });
  return false;
}
