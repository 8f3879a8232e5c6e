// What `acia init` does, as a function the tests can call.
import { aciaDir, memoryDir, repoConfigPath } from '../core/contain/acia-state.js';
import { existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { DEFAULT_MODEL } from '../core/config/schema.js';
import { trustRepoFiles } from '../core/config/trust.js';
import { checkRegularOrMissing, ensureRealDir, writeRegularFile } from '../core/contain/no-follow.js';
import { Git, excludeAciaDir, repoRoot } from '../team/git.js';
import { systemClock } from '../core/acm/ids.js';
import { ensureMemoryPages } from '../core/wiki/memory.js';

export async function initRepo(dir: string, force: boolean): Promise<string[]> {
  const git = new Git(systemClock);
  const repo = await repoRoot(git, dir);
  const lines: string[] = [];
  const configFile = repoConfigPath(repo);
  ensureRealDir(repo, aciaDir(repo));
  checkRegularOrMissing(configFile);
  if (!existsSync(configFile) || force) {
    const config = { model: DEFAULT_MODEL, parallel: 2, maxIterations: 3, budget: { maxCostUsd: 5 }, sandbox: 'auto', protectedPaths: [] };
    writeRegularFile(repo, configFile, `${JSON.stringify(config, null, 2)}\n`);
    // The user asked for this file, so its content is theirs: trusted as written (a later edit by anyone needs `acia trust`).
    trustRepoFiles(repo, process.env, ['.acia/config.json']);
    lines.push(`wrote ${relative(process.cwd(), configFile) || configFile} (trusted as written; after editing it, run \`acia trust\`)`);
  } else {
    lines.push(`kept ${configFile} (use --force to overwrite; run \`acia trust\` once you have reviewed it)`);
  }
  const memory = memoryDir(repo);
  for (const page of await ensureMemoryPages(repo)) lines.push(`wrote ${relative(process.cwd(), join(memory, `${page}.md`)) || page}`);
  await excludeAciaDir(git, repo);
  lines.push('added .acia/ to .git/info/exclude (runs, worktrees and wiki stay out of git status)');
  return lines;
}
