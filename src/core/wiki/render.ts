// Renders `.acia/wiki/` from the ledgers: a pure function of entries (+ memory page names) to
// {path: content}, and renderWiki, which writes only the files whose content changed.
import { join } from 'node:path';
import { readRegularFile, writeRegularFile } from '../contain/no-follow.js';
import type { LedgerEntry } from '../ledger/entry.js';
import { errorMessage } from '../errors.js';
import type { RunManifest } from '../ledger/run-vocabulary.js';
import { ledgerEntriesOf } from '../ledger/line-reader.js';
import { listRunIds, readManifest, runDirOf } from '../ledger/manifest.js';
import { ensureMemoryPages, readMemory, wikiDir } from './memory.js';
import { DECISION_TYPES, decisionFile, decisionPage, escalationPage, indexPage, runPage } from './pages.js';
import { summarizeRun } from './run-summary.js';

export interface RunInput {
  runId: string;
  entries: readonly LedgerEntry[];
  manifest: RunManifest | null;
}

const DECISIONS: ReadonlySet<string> = new Set(DECISION_TYPES);

/** A user hook letting a tool call through: one per call, a decision nobody reads a page about (a denial gets one). */
function routineHookAllow(e: LedgerEntry): boolean {
  return e.type === 'POLICY_DECISION' && e.data.by !== undefined && e.data.response.allow && (e.data.hook === 'tool.pre' || e.data.hook === 'tool.post');
}

/** Pure: the same runs and memory page names give byte-identical pages. Paths are relative to the wiki. */
export function renderWikiPages(runs: readonly RunInput[], memoryPages: readonly string[]): Map<string, string> {
  const pages = new Map<string, string>();
  const summaries = [...runs].sort((a, b) => (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0)).map((run) => {
    const summary = summarizeRun(run.runId, run.entries, run.manifest);
    const decisions = run.entries.filter((e) => DECISIONS.has(e.type) && !routineHookAllow(e));
    pages.set(`runs/${run.runId}.md`, runPage(summary, decisions));
    for (const d of decisions) pages.set(`decisions/${decisionFile(run.runId, d)}`, decisionPage(run.runId, d));
    const open = summary.escalations.filter((e) => !e.answer).at(-1);
    if (open && (summary.status === 'awaiting_human' || summary.status === 'running')) pages.set(`escalations/${run.runId}.md`, escalationPage(summary, open));
    return summary;
  });
  pages.set('index.md', indexPage(summaries, memoryPages));
  return pages;
}

export interface RenderResult {
  dir: string;
  written: string[];
  unchanged: number;
  /** Runs whose ledger could not be read; they are left out of the wiki (run `acia verify`). */
  skipped: Array<{ runId: string; reason: string }>;
}

/** A run's entries as its live ledger holds them (the run that just ended), spared a second parse. */
export interface LiveRun {
  runId: string;
  entries: readonly LedgerEntry[];
}

export async function renderWiki(repoRoot: string, live: LiveRun | null = null): Promise<RenderResult> {
  const dir = wikiDir(repoRoot);
  await ensureMemoryPages(repoRoot);
  const runs: RunInput[] = [];
  const skipped: RenderResult['skipped'] = [];
  for (const runId of await listRunIds(repoRoot)) {
    const runDir = runDirOf(repoRoot, runId);
    try {
      const entries = await ledgerEntriesOf(join(runDir, 'ledger.jsonl'), live?.runId === runId ? live.entries : undefined);
      runs.push({ runId, entries, manifest: await readManifest(runDir) });
    } catch (e) {
      skipped.push({ runId, reason: errorMessage(e) });
    }
  }
  const memory = (await readMemory(repoRoot)).map((p) => p.page);
  const written: string[] = [];
  let unchanged = 0;
  for (const [path, content] of renderWikiPages(runs, memory)) {
    const full = join(dir, path);
    if (readRegularFile(repoRoot, full)?.toString('utf8') === content) {
      unchanged += 1;
      continue;
    }
    // Temp file + rename (two runs finishing at once must not interleave their bytes in one page), in real
    // directories only: a clone's `.acia/wiki/runs` link must not carry the pages out of the repository.
    writeRegularFile(repoRoot, full, content);
    written.push(path);
  }
  return { dir, written, unchanged, skipped };
}
