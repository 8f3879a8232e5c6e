// What `acia init` does, as a function the tests can call.
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { DEFAULT_MODEL } from '../core/config/schema.js';
import { Git, excludeAciaDir, repoRoot } from '../team/git.js';
import { systemClock } from '../core/acm/ids.js';
import { ensureMemoryPages } from '../core/wiki/memory.js';

export async function initRepo(dir: string, force: boolean): Promise<string[]> {
  const git = new Git(systemClock);
  const repo = await repoRoot(git, dir);
  const lines: string[] = [];
  const configFile = join(repo, '.acia', 'config.json');
  await mkdir(join(repo, '.acia'), { recursive: true });
  if (!existsSync(configFile) || force) {
    const config = { model: DEFAULT_MODEL, parallel: 2, maxIterations: 3, budget: { maxCostUsd: 5 }, sandbox: 'auto', protectedPaths: [] };
    await writeFile(configFile, `${JSON.stringify(config, null, 2)}\n`);
    lines.push(`wrote ${relative(process.cwd(), configFile) || configFile}`);
  } else {
    lines.push(`kept ${configFile} (use --force to overwrite)`);
  }
  const memory = join(repo, '.acia', 'wiki', 'memory');
  for (const page of await ensureMemoryPages(repo)) lines.push(`wrote ${relative(process.cwd(), join(memory, `${page}.md`)) || page}`);
  await excludeAciaDir(git, repo);
  lines.push('added .acia/ to .git/info/exclude (runs, worktrees and wiki stay out of git status)');
  return lines;
}
