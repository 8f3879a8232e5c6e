// Reads the repository at the run's base commit from git objects, not from a checkout: the PM's first
// call needs only the file list and a few files, so it need not wait for the run worktree. Every read
// is one git process: the tree once (cached), the files in one `cat-file --batch`.
import { safeGit } from '../core/sandbox/safe-git.js';
import { DETECTION_READS, testCommandFor, type EnvironmentFacts } from '../core/tools/test-command.js';
import type { RepoReader } from '../agents/pm/context-packet.js';
import type { Git } from './git.js';
import { Workspace, type RunWorkspace } from './workspace.js';
import type { GitBatchReader } from '../core/sandbox/git-batch.js';
import { listTreePaths } from './git-objects.js';

/** The largest file the detector reads (package.json), whole. */
const MANIFEST_BYTES = 1024 * 1024;

/**
 * With `objects` (the run's `cat-file --batch`, already running for the workspace) the tree and the files
 * are read over its pipe, without a process of their own: they are on the path to the PM's first call.
 */
export function gitReader(git: Git, repo: string, commit: string, objects?: GitBatchReader): RepoReader {
  let files: Promise<string[]> | null = null;
  const readTexts = async (paths: readonly string[], maxBytes: number): Promise<Map<string, string | null>> => {
    const out = new Map<string, string | null>(paths.map((p) => [p, null]));
    // A path with a newline cannot be named on cat-file's line-based input; it reads as missing.
    const named = paths.filter((p) => !p.includes('\n'));
    if (named.length === 0) return out;
    if (objects) {
      const read = await Promise.all(named.map((p) => objects.read(`${commit}:${p}`).catch(() => null)));
      named.forEach((p, i) => {
        const o = read[i];
        if (o?.type === 'blob') out.set(p, o.content.toString('utf8').slice(0, maxBytes));
      });
      return out;
    }
    const r = await safeGit(repo, ['cat-file', '--batch'], { input: named.map((p) => `${commit}:${p}\n`).join('') });
    if (r.exitCode !== 0) return out;
    const bytes = r.stdoutBytes;
    let at = 0;
    for (const p of named) {
      const eol = bytes.indexOf(10, at);
      if (eol < 0) break;
      const header = bytes.subarray(at, eol).toString('utf8');
      at = eol + 1;
      const m = /^[0-9a-f]+ (\w+) (\d+)$/.exec(header);
      if (!m) continue; // `<name> missing` or `ambiguous`: no content follows
      const size = Number(m[2]);
      if (m[1] === 'blob') out.set(p, bytes.subarray(at, at + size).toString('utf8').slice(0, maxBytes));
      at += size + 1;
    }
    return out;
  };
  return {
    listFiles: () =>
      (files ??= (objects ? listTreePaths(objects, commit).catch(() => null) : Promise.resolve(null)).then(
        async (walked) => walked ?? (await git.run(repo, ['ls-tree', '-r', '-z', '--name-only', commit])).stdout.split('\0').filter((f) => f !== ''),
      )),
    readText: async (path, maxBytes) => (await readTexts([path], maxBytes)).get(path) ?? null,
    readTexts,
    head: () => Promise.resolve(commit),
    committedAt: async () => {
      // The committer line's epoch, from the commit object (over the batch pipe when there is one).
      const text = objects
        ? await objects
            .read(commit)
            .then((o) => (o?.type === 'commit' ? o.content.toString('utf8') : ''))
            .catch(() => '')
        : (await git.run(repo, ['cat-file', 'commit', commit]).catch(() => ({ stdout: '' }))).stdout;
      const epoch = /^committer .* (\d+) [+-]\d{4}$/m.exec(text)?.[1];
      return epoch === undefined ? null : new Date(Number(epoch) * 1000).toISOString();
    },
  };
}

/**
 * The project's test command, detected from the base commit's files (the same rules as in a checkout)
 * and what the user's checkout has installed (`facts`: its virtualenv).
 */
export async function detectTestCommandInGit(reader: RepoReader, facts: EnvironmentFacts = {}): Promise<string | null> {
  const files = new Set(await reader.listFiles());
  const wanted = DETECTION_READS.filter((f) => files.has(f));
  const texts = reader.readTexts ? await reader.readTexts(wanted, MANIFEST_BYTES) : new Map(await Promise.all(wanted.map(async (f) => [f, await reader.readText(f, MANIFEST_BYTES)] as const)));
  return testCommandFor({ has: (f) => files.has(f), read: (f) => texts.get(f) ?? null }, facts)?.command ?? null;
}

/** The repository at a commit, read through the run's workspace's object reader when it has one (a local run's). */
export function localRepoReader(git: Git): (repo: string, commit: string, workspace: RunWorkspace) => RepoReader {
  return (repo, commit, workspace) => gitReader(git, repo, commit, workspace instanceof Workspace ? workspace.objects : undefined);
}
