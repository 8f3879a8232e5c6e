// The fleet's git side against a real bare remote, with no database: two workers' clones of one run
// (from their own repository caches) merge their tasks onto each other's work through the remote,
// and a worker whose view of the run branch is stale cannot move it: its push is refused
// (--force-with-lease), not forced over the other's merge.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/acm/ids.js';
import { Git } from '../../src/team/git.js';
import { FleetWorkspace } from '../../src/fleet/fleet-workspace.js';
import { checkoutJob } from '../../src/fleet/repo-cache.js';
import { runWorktreesDir } from '../../src/core/contain/acia-state.js';
import { bareRemote, serialLock, sh, tempDirs } from './git-remote.js';

const tmp = tempDirs('acia-fleetws');

const runId = '20261123-000000-f1ee75';
const git = new Git(systemClock);

type Early = { taskId: string; base: string; made: Promise<boolean> };

async function worker(
  name: string,
  url: string,
  base: string,
  lock: <T>(fn: () => Promise<T>) => Promise<T>,
  o: { fresh?: boolean; checkFence?: () => Promise<void>; taskJob?: boolean; early?: (dir: string) => Early } = {},
): Promise<FleetWorkspace> {
  // A worker whose policy serves the test's remote (its directory, by real path).
  const policy = { repos: [path.dirname(url)], allowSandboxOff: false, scriptedModelDirs: [] };
  const checkout = await checkoutJob(git, { cacheDir: tmp(`cache-${name}`), repoUrl: url, runId, base, dir: path.join(tmp(name), 'clone'), policy });
  return new FleetWorkspace(git, checkout.dir, runId, {
    checkFence: o.checkFence ?? (() => Promise.resolve()),
    withRunLock: lock,
    remoteRefs: checkout.remoteRefs,
    ...(o.fresh ? { fresh: checkout.fresh } : {}),
    ...(o.taskJob ? { runWorktreeOnDemand: true } : {}),
    ...(o.early ? { early: o.early(checkout.dir) } : {}),
  });
}


async function addFile(ws: FleetWorkspace, taskId: string, file: string): Promise<void> {
  const wt = await ws.prepareTask(taskId, null);
  fs.writeFileSync(path.join(wt.path, file), `${taskId}\n`);
  const r = await ws.checkpoint(taskId, wt, `acia(${taskId})`);
  expect(r.files).toEqual([file]);
}

describe('the fleet workspace', () => {
  it("merges each worker's task onto the other's through the remote, and refuses a stale worker's push", async () => {
    const { url, base } = bareRemote(tmp);
    // One lock for both, as the database's advisory lock is for every worker of the run.
    const lock = serialLock();
    const a = await worker('a', url, base, lock);
    await a.openRun(base, true);
    expect(sh(url, 'rev-parse', `acia/${runId}`)).toBe(base);

    const b = await worker('b', url, base, lock);
    await b.openRun(base, false);
    await addFile(b, 't1', 'one.txt');
    expect(sh(url, 'rev-parse', `acia-tasks/${runId}/t1`)).toMatch(/^[0-9a-f]{40}$/);
    const m1 = await b.merge('t1');
    expect(sh(url, 'rev-parse', `acia/${runId}`)).toBe(m1.commit);

    // A never saw t1's merge: its merge fetches the run branch first and lands on top of it.
    await addFile(a, 't2', 'two.txt');
    const m2 = await a.merge('t2');
    expect(m2.conflict).toBe(false);
    expect(sh(url, 'ls-tree', '--name-only', `acia/${runId}`).split('\n').sort()).toEqual(['README.md', 'one.txt', 'two.txt']);
    expect(sh(url, 'merge-base', '--is-ancestor', m1.commit!, `acia/${runId}`)).toBe('');

    // B's view of the run branch is now stale (m1): resetting it would overwrite a's merge.
    await expect(b.resetRun(base)).rejects.toMatchObject({ code: 'LEDGER_FENCED' });
    expect(sh(url, 'rev-parse', `acia/${runId}`)).toBe(m2.commit);
  }, 60_000);

  it("a task job's fresh clone opens the run where the remote has it, and a fenced worker pushes nothing", async () => {
    const { url, base } = bareRemote(tmp);
    const lock = serialLock();
    const a = await worker('a', url, base, lock);
    await a.openRun(base, true);
    await addFile(a, 't1', 'one.txt');
    const m1 = await a.merge('t1');
    await addFile(a, 't2', 'two.txt');
    const t2 = sh(url, 'rev-parse', `acia-tasks/${runId}/t2`);

    // A task job on another worker: one fetch gave its clone the run branch and the task branches.
    let fenced = false;
    const b = await worker('b', url, base, lock, { fresh: true, checkFence: () => (fenced ? Promise.reject(Object.assign(new Error('fenced'), { code: 'LEDGER_FENCED' })) : Promise.resolve()) });
    await b.openRun(base, false);
    expect(await b.runHead()).toBe(m1.commit);
    expect(fs.readFileSync(path.join(b.runWorktree, 'one.txt'), 'utf8')).toBe('t1\n');
    const clone = path.resolve(b.root(), '../../..');
    expect(sh(clone, 'rev-parse', `refs/heads/acia-tasks/${runId}/t2`)).toBe(t2);
    // Its task resumes from t2's checkpoint and merges on top of t1.
    const wt = await b.prepareTask('t2', t2);
    expect(fs.existsSync(path.join(wt.path, 'two.txt'))).toBe(true);
    const m2 = await b.merge('t2');
    expect(sh(url, 'rev-parse', `acia/${runId}`)).toBe(m2.commit);

    // Taken over: its lease check now fails, and neither a checkpoint nor a merge reaches the remote.
    fenced = true;
    const wt3 = await b.prepareTask('t3', null);
    fs.writeFileSync(path.join(wt3.path, 'three.txt'), 't3\n');
    await expect(b.checkpoint('t3', wt3, 'acia(t3)')).rejects.toMatchObject({ code: 'LEDGER_FENCED' });
    expect(sh(url, 'for-each-ref', `refs/heads/acia-tasks/${runId}/t3`)).toBe('');
    expect(sh(url, 'rev-parse', `acia/${runId}`)).toBe(m2.commit);
  }, 60_000);

  it("a task job checks no run worktree out: it starts in the worktree begun at hand-over, merges from objects, and a conflict is met in the run worktree as before", async () => {
    const { url, base } = bareRemote(tmp);
    const lock = serialLock();
    const a = await worker('a', url, base, lock);
    await a.openRun(base, true);
    await addFile(a, 't1', 'one.txt');
    const m1 = (await a.merge('t1')).commit!;

    // The job names the run head m1: t2's worktree is begun there before the run is opened.
    const early = (dir: string): Early => {
      const root = runWorktreesDir(dir, runId);
      fs.mkdirSync(root, { recursive: true });
      return {
        taskId: 't2',
        base: m1,
        made: git.run(dir, ['worktree', 'add', '--force', '-B', `acia-tasks/${runId}/t2`, path.join(root, 't2'), m1]).then(() => {
          // A mark a worktree made again would not have.
          fs.writeFileSync(path.join(root, 't2', 'early.mark'), '');
          return true;
        }),
      };
    };
    const b = await worker('b', url, base, lock, { fresh: true, taskJob: true, early });
    await b.openRun(base, false);
    const wt = await b.prepareTask('t2', null);
    expect(wt.baseCommit).toBe(m1);
    expect(fs.existsSync(path.join(wt.path, 'early.mark'))).toBe(true);
    fs.rmSync(path.join(wt.path, 'early.mark'));
    fs.writeFileSync(path.join(wt.path, 'two.txt'), 't2\n');
    await b.checkpoint('t2', wt, 'acia(t2)');
    expect(await b.runHead()).toBe(m1);
    const m2 = await b.merge('t2');
    expect(m2).toMatchObject({ conflict: false, files: ['two.txt'] });
    // A merge commit of the run head and the task branch, pushed, and no run worktree made for it.
    expect(sh(url, 'rev-parse', `acia/${runId}`)).toBe(m2.commit);
    expect(sh(url, 'rev-list', '--parents', '-n', '1', m2.commit!)).toBe(`${m2.commit!} ${m1} ${sh(url, 'rev-parse', `acia-tasks/${runId}/t2`)}`);
    expect(sh(url, 'log', '-1', '--format=%s', m2.commit!)).toBe('acia: merge t2');
    expect(fs.existsSync(b.runWorktree)).toBe(false);

    // t3 (here) and t4 (on a, merged first) both change one.txt: the merge from objects conflicts, and the
    // conflict is reported from the run worktree, checked out for it, as a worktree merge reports it.
    await addFile(b, 't3', 'one.txt');
    await addFile(a, 't4', 'one.txt');
    const m4 = (await a.merge('t4')).commit!;
    const m3 = await b.merge('t3');
    expect(m3).toMatchObject({ commit: null, conflict: true, files: ['one.txt'] });
    expect(m3.hunks).toContain('<<<<<<<');
    expect(sh(url, 'rev-parse', `acia/${runId}`)).toBe(m4);
    expect(fs.existsSync(b.runWorktree)).toBe(true);
    expect(await b.runHead()).toBe(m4);
  }, 60_000);

  it("a task job's merge from objects follows the .gitattributes the run head has, as a merge in the run worktree does", async () => {
    const { url, base } = bareRemote(tmp);
    const lock = serialLock();
    const a = await worker('a', url, base, lock);
    await a.openRun(base, true);
    // The run (not its base) says data.txt is never merged line by line: two tasks changing it conflict.
    const lines = ['1', '2', '3', '4', '5', '6', '7', '8'];
    const w1 = await a.prepareTask('t1', null);
    fs.writeFileSync(path.join(w1.path, 'data.txt'), lines.join('\n') + '\n');
    fs.writeFileSync(path.join(w1.path, '.gitattributes'), 'data.txt -merge\n');
    await a.checkpoint('t1', w1, 'acia(t1)');
    await a.merge('t1');

    const b = await worker('b', url, base, lock, { fresh: true, taskJob: true });
    await b.openRun(base, false);
    const w2 = await b.prepareTask('t2', null);
    fs.writeFileSync(path.join(w2.path, 'data.txt'), ['one', ...lines.slice(1)].join('\n') + '\n');
    await b.checkpoint('t2', w2, 'acia(t2)');
    const w3 = await a.prepareTask('t3', null);
    fs.writeFileSync(path.join(w3.path, 'data.txt'), [...lines.slice(0, -1), 'eight'].join('\n') + '\n');
    await a.checkpoint('t3', w3, 'acia(t3)');
    const m3 = (await a.merge('t3')).commit!;

    const m2 = await b.merge('t2');
    expect(m2).toMatchObject({ commit: null, conflict: true, files: ['data.txt'] });
    expect(sh(url, 'rev-parse', `acia/${runId}`)).toBe(m3);
  }, 60_000);
});
