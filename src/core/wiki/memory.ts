// The team's memory pages (`.acia/wiki/memory/*.md`): human-editable, read into the next run's context;
// agent edits go through updateMemory, which records a MEMORY_UPDATED entry before touching the file.
import { memoryDir, wikiDir } from '../contain/acia-state.js';
import { constants } from 'node:fs';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { packagePath } from '../package-root.js';
import { AciaError, errorMessage, isAciaError } from '../errors.js';
import { checkRealDir, checkRegularOrMissing, ensureRealDir, readRegularFile, writeRegularFile } from '../contain/no-follow.js';
import type { RunLedger } from '../ledger/types.js';

export const MEMORY_PAGES = ['project', 'conventions', 'lessons'] as const;
const PAGE_NAME = /^[a-z0-9][a-z0-9-]{0,63}$/;
/** A memory page larger than this is refused: it would not fit the PM's context anyway. */
const MAX_PAGE_BYTES = 4 * 1024 * 1024;

export interface MemoryPage {
  page: string;
  path: string;
  content: string;
}

// Where the wiki lives is the containment module's to say; re-exported for the library API.
export { memoryDir, wikiDir };

/** Templates ship in the package's top-level `wiki/templates/` (next to dist/ and src/ alike). */
const TEMPLATE_DIR = pathToFileURL(`${packagePath('wiki', 'templates')}/`);

export async function memoryTemplate(page: string): Promise<string> {
  try {
    return await readFile(new URL(`${page}.md`, TEMPLATE_DIR), 'utf8');
  } catch {
    return `---\nkind: "memory"\npage: "${page}"\n---\n# ${page}\n`;
  }
}

/** Creates missing memory pages from the templates; never overwrites a page a person may have edited. */
export async function ensureMemoryPages(repoRoot: string): Promise<string[]> {
  const dir = memoryDir(repoRoot);
  // A clone's `.acia/wiki` (or any part of the way) may be a link out of the repository: refused, never followed.
  ensureRealDir(repoRoot, dir);
  const created: string[] = [];
  for (const page of MEMORY_PAGES) {
    const path = join(dir, `${page}.md`);
    checkRegularOrMissing(path);
    try {
      await writeFile(path, await memoryTemplate(page), { flag: constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW });
      created.push(page);
    } catch (e) {
      if ((e as { code?: string }).code !== 'EEXIST') throw new AciaError('LEDGER_IO', `cannot write ${join(dir, page)}.md: ${errorMessage(e)}`);
    }
  }
  return created;
}

/**
 * The memory pages for the PM's context packet: the standard three first, then others by name. Each must be
 * a regular file in real directories: a page that is a link (to ~/.ssh/id_rsa, /proc/self/environ) is refused.
 */
export async function readMemory(repoRoot: string): Promise<MemoryPage[]> {
  const dir = memoryDir(repoRoot);
  if (!checkRealDir(repoRoot, dir)) return [];
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => n.endsWith('.md')).map((n) => n.slice(0, -3)).filter((n) => PAGE_NAME.test(n));
  } catch {
    return [];
  }
  const order = (n: string): number => {
    const i = (MEMORY_PAGES as readonly string[]).indexOf(n);
    return i === -1 ? MEMORY_PAGES.length : i;
  };
  names.sort((a, b) => order(a) - order(b) || (a < b ? -1 : a > b ? 1 : 0));
  const pages: MemoryPage[] = [];
  for (const page of names) {
    const path = join(dir, `${page}.md`);
    const bytes = readRegularFile(repoRoot, path, MAX_PAGE_BYTES);
    if (bytes !== null) pages.push({ page, path, content: bytes.toString('utf8') });
  }
  return pages;
}

/** A memory page's bytes, or null when it does not exist. The name is checked first; links are refused. */
export function readMemoryPage(repoRoot: string, page: string): Promise<Buffer | null> {
  const path = memoryPagePath(repoRoot, page);
  try {
    return Promise.resolve(readRegularFile(repoRoot, path, MAX_PAGE_BYTES));
  } catch (e) {
    return Promise.reject(isAciaError(e) ? e : new AciaError('LEDGER_IO', `cannot read ${path}: ${errorMessage(e)}`, { cause: e }));
  }
}

/** Replaces a memory page atomically (temp file and rename), so a reader never sees half a page. */
export async function writeMemoryPage(repoRoot: string, page: string, content: string): Promise<void> {
  await Promise.resolve();
  writeRegularFile(repoRoot, memoryPagePath(repoRoot, page), content);
}

function memoryPagePath(repoRoot: string, page: string): string {
  if (!PAGE_NAME.test(page)) throw new AciaError('INPUT_INVALID', `memory page name ${JSON.stringify(page)}: lowercase letters, digits and -`);
  return join(memoryDir(repoRoot), `${page}.md`);
}

/**
 * An agent's change to a memory page. Write-ahead: both versions go to the blob store and the
 * MEMORY_UPDATED entry is durable before the page is replaced (atomically, by rename).
 */
export async function updateMemory(repoRoot: string, ledger: RunLedger, page: string, content: string, reason: string): Promise<void> {
  const before = await readMemoryPage(repoRoot, page);
  const beforeRef = before ? await ledger.putBlob(before) : null;
  const afterRef = await ledger.putBlob(content);
  await ledger.append({ actor: 'pm', type: 'MEMORY_UPDATED', data: { page, beforeRef, afterRef, reason } });
  await writeMemoryPage(repoRoot, page, content);
}
