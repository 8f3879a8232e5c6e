// Builds the frozen Context Packet (ACM §9) the PM plans from: file tree, manifest, README, instruction
// files, wiki memory and the test command. Its content address is every plan's contextRef.
import { canonicalJson, contentAddress, sha256Hex } from '../../core/acm/canonical-json.js';
import type { ContextPacket, Goal } from '../../core/acm/contracts.js';

export interface RepoReader {
  /** Tracked files, repo-relative. */
  listFiles(): Promise<string[]>;
  /** A file's text, or null when missing or unreadable. */
  readText(path: string, maxBytes: number): Promise<string | null>;
  /** Several files at once (one git process instead of one per file); readText per file without it. */
  readTexts?(paths: readonly string[], maxBytes: number): Promise<Map<string, string | null>>;
  head(): Promise<string>;
  /** The head commit's committer date (ISO 8601), when known: the packet's version is ordered by it. */
  committedAt?(): Promise<string | null>;
}

export interface ContextInputs {
  goal: Goal;
  repo: RepoReader;
  memory: { page: string; content: string }[];
  testCommand: string | null;
  constraints: Record<string, unknown>;
  createdAt: string;
}

export const MAX_TREE_FILES = 400;
const EXCERPT_BYTES = 4000;
const MEMORY_CAP = 16_000;
export const MEMORY_URI = 'wiki:memory/';
const INSTRUCTION_FILES = ['AGENTS.md', 'CLAUDE.md'];
const MANIFESTS = ['package.json', 'pyproject.toml', 'go.mod', 'Cargo.toml'];

export interface InstructionFile {
  path: string;
  content: string;
}

export async function buildContextPacket(inp: ContextInputs): Promise<{ packet: ContextPacket; contextRef: string; instructions: InstructionFile[] }> {
  const files = (await inp.repo.listFiles()).sort();
  const head = await inp.repo.head();
  const committedAt = (await inp.repo.committedAt?.()) ?? null;
  const tree = files.slice(0, MAX_TREE_FILES);
  // The snapshot (ACM v0.5 §4): the commit, with a digest of what was taken from it (its file list).
  const sources: ContextPacket['sources'] = [{ uri: `git:${head}`, type: 'git_commit', digest: `sha256:${sha256Hex(canonicalJson({ head, files }))}` }];
  const instructionPaths = files.filter((f) => INSTRUCTION_FILES.includes(f.split('/').pop() ?? f));
  const readme = files.find((f) => /^readme(\.md|\.txt)?$/i.test(f));
  const manifest = MANIFESTS.find((m) => files.includes(m));
  const texts = await readAll(inp.repo, [...instructionPaths, ...(readme ? [readme] : []), ...(manifest ? [manifest] : [])], EXCERPT_BYTES * 4);
  const instructions: InstructionFile[] = [];
  for (const f of instructionPaths) {
    const text = texts.get(f) ?? null;
    if (text === null) continue;
    instructions.push({ path: f, content: text });
    // The text travels in the packet so a replay (or a third party holding only the bundle) sees what the agents saw.
    sources.push({ uri: `file:${f}`, digest: `sha256:${sha256Hex(text)}`, excerpt: text });
  }
  instructions.sort(byPrecedence);
  const readmeText = readme ? (texts.get(readme)?.slice(0, EXCERPT_BYTES) ?? null) : null;
  if (readme && readmeText !== null) sources.push({ uri: `file:${readme}`, digest: `sha256:${sha256Hex(readmeText)}`, excerpt: readmeText });
  const manifestText = manifest ? (texts.get(manifest)?.slice(0, EXCERPT_BYTES) ?? null) : null;
  if (manifest && manifestText !== null) sources.push({ uri: `file:${manifest}`, digest: `sha256:${sha256Hex(manifestText)}`, excerpt: manifestText });
  // Memory pages travel whole (up to a cap) so a replay can rebuild exactly the packet the run saw.
  for (const m of inp.memory) {
    const text = m.content.slice(0, MEMORY_CAP);
    sources.push({ uri: `${MEMORY_URI}${m.page}`, digest: `sha256:${sha256Hex(text)}`, excerpt: text });
  }

  // Augment (ACM v0.5 §4): what the builder derived from the sources, each addressed by its digest.
  const augmentations: NonNullable<ContextPacket['augmentations']> = [
    { type: 'file_tree', artifact: 'facts.files', digest: `sha256:${sha256Hex(canonicalJson(tree))}` },
    { type: 'test_command', artifact: 'facts.testCommand', digest: `sha256:${sha256Hex(canonicalJson(inp.testCommand))}` },
    ...sources.filter((s) => s.uri.startsWith('file:') && s.digest !== undefined).map((s) => ({ type: 'excerpt', artifact: s.uri, digest: s.digest! })),
  ];
  const packet: ContextPacket = {
    id: `ctx-${inp.goal.id}`,
    // Version (ACM v0.5 §4): ordered by the snapshot's commit date, tied to its commit; a packet from a
    // later commit has a later version. '1' when the commit date is unknown.
    version: committedAt === null ? '1' : `${committedAt.replace(/[-:]/g, '').replace(/\.\d+/, '').replace(/(Z|[+-]\d{4})$/, '')}.${head.slice(0, 12)}`,
    goalId: inp.goal.id,
    sources,
    facts: {
      repoHead: head,
      fileCount: files.length,
      files: tree,
      filesTruncated: files.length > MAX_TREE_FILES,
      testCommand: inp.testCommand,
      manifest: manifest ?? null,
      instructionFiles: instructions.map((i) => i.path),
    },
    assumptions: inp.testCommand === null ? ['the project has no detectable test command'] : [],
    constraints: inp.constraints,
    augmentations,
    provenance: { builder: 'acia-context@2', createdAt: inp.createdAt, repoHead: head, ...(committedAt === null ? {} : { repoCommittedAt: committedAt }) },
  };
  return { packet, contextRef: contentAddress(packet), instructions };
}

async function readAll(repo: RepoReader, paths: readonly string[], maxBytes: number): Promise<Map<string, string | null>> {
  const unique = [...new Set(paths)];
  if (repo.readTexts) return repo.readTexts(unique, maxBytes);
  const out = new Map<string, string | null>();
  for (const p of unique) out.set(p, await repo.readText(p, maxBytes));
  return out;
}

/** Root files first, then deeper ones; AGENTS.md before CLAUDE.md in one directory. Nearer files come later and win. */
function byPrecedence(a: InstructionFile, b: InstructionFile): number {
  const da = a.path.split('/').length;
  const db = b.path.split('/').length;
  if (da !== db) return da - db;
  return a.path.localeCompare(b.path);
}

/** Renders instruction files for an agent's task message, nearest last. */
export function renderInstructions(files: InstructionFile[]): string {
  if (files.length === 0) return '';
  const parts = files.map((f) => `--- ${f.path} ---\n${f.content.trim()}`);
  return `\nProject instructions (deeper files apply to their directory and win over shallower ones):\n${parts.join('\n\n')}\n`;
}

/**
 * A RepoReader that serves a recorded packet back, so the packet is rebuilt byte for byte without the
 * repository. Null when the packet cannot be rebuilt from itself (a truncated file list, or instruction
 * files recorded without their text by an older version).
 */
export function packetReader(packet: ContextPacket): RepoReader | null {
  const files = packet.facts.files;
  const instructionFiles = packet.facts.instructionFiles;
  if (packet.facts.filesTruncated !== false || !Array.isArray(files) || !Array.isArray(instructionFiles)) return null;
  const texts = new Map<string, string>();
  for (const s of packet.sources) if (s.uri.startsWith('file:') && s.excerpt !== undefined) texts.set(s.uri.slice('file:'.length), s.excerpt);
  if (instructionFiles.some((f) => typeof f !== 'string' || !texts.has(f))) return null;
  const head = typeof packet.facts.repoHead === 'string' ? packet.facts.repoHead : '';
  const committedAt = packet.provenance.repoCommittedAt ?? null;
  return {
    listFiles: () => Promise.resolve(files.filter((f): f is string => typeof f === 'string')),
    readText: (path, maxBytes) => Promise.resolve(texts.get(path)?.slice(0, maxBytes) ?? null),
    head: () => Promise.resolve(head),
    committedAt: () => Promise.resolve(committedAt),
  };
}

/**
 * The instruction files a recorded packet carries, in the order buildContextPacket gave them to the agents
 * (facts.instructionFiles, each file's text in its `file:` source). Null when it does not carry them all.
 */
export function instructionsOf(packet: Pick<ContextPacket, 'facts' | 'sources'>): InstructionFile[] | null {
  const paths = packet.facts.instructionFiles;
  if (!Array.isArray(paths)) return null;
  const texts = new Map<string, string>();
  for (const s of packet.sources) if (s.uri.startsWith('file:') && s.excerpt !== undefined) texts.set(s.uri.slice('file:'.length), s.excerpt);
  const out: InstructionFile[] = [];
  for (const path of paths) {
    const content = typeof path === 'string' ? texts.get(path) : undefined;
    if (content === undefined) return null;
    out.push({ path: path as string, content });
  }
  return out;
}

/** The memory pages a recorded packet was built from (replay feeds them back). */
export function memoryFromPacket(packet: ContextPacket): { page: string; content: string }[] {
  return packet.sources.filter((s) => s.uri.startsWith(MEMORY_URI)).map((s) => ({ page: s.uri.slice(MEMORY_URI.length), content: s.excerpt ?? '' }));
}
