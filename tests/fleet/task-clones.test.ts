// A worker's task-job clones against a real bare remote, with no database: the next task job of a run
// on the same worker gets the clone its last job left (its branches fetched again, its run worktree
// brought to the run branch another worker moved), another run never does, a clone changed behind the
// worker's back or left by a failed job is not reused, and a merge that trusted a stale record of the run
// branch is refused by the remote and merged again on top, never forced over another worker's merge.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/acm/ids.js';
import { Git } from '../../src/team/git.js';
import { FleetWorkspace } from '../../src/fleet/fleet-workspace.js';
import { checkoutJob, type JobCheckout } from '../../src/fleet/repo-cache.js';
import { TaskClones } from '../../src/fleet/task-clones.js';
import { guardAciaState } from '../../src/core/contain/clone-guard.js';
import { bareRemote, serialLock, sh, tempDirs } from './git-remote.js';

const pools: TaskClones[] = [];
// Registered before tempDirs' own: vitest runs afterEach hooks last-registered first, so pools close before their directories go.
const tmp = tempDirs('acia-taskclones');
afterEach(async () => {
  for (const p of pools.splice(0)) await p.close();
});

const runId = '20261127-000000-c10e5a';
const otherRun = '20261127-000001-0b0e12';
const git = new Git(systemClock);

interface Fleetish {
  lock: <T>(fn: () => Promise<T>) => Promise<T>;
  /** The run branch's last pushed head, as the database would hold it. */
  pushed: { head: string | null };
}

function workspace(checkout: JobCheckout, f: Fleetish, run = runId, checkFence: () => Promise<void> = () => Promise.resolve(), o: { taskJob?: boolean } = {}): FleetWorkspace {
  return new FleetWorkspace(git, checkout.dir, run, {
    checkFence,
    withRunLock: f.lock,
    remoteRefs: checkout.remoteRefs,
    ...(checkout.fetched ? { fetched: checkout.fetched } : {}),
    ...(o.taskJob ? { runWorktreeOnDemand: true } : {}),
    fresh: checkout.fresh,
    ...(checkout.kept ? { kept: checkout.kept } : {}),
    pushedRunHead: {
      read: () => Promise.resolve(f.pushed.head),
      write: (h) => {
        f.pushed.head = h;
        return Promise.resolve();
      },
    },
  });
}

async function addFile(ws: FleetWorkspace, taskId: string, file: string): Promise<void> {
  const wt = await ws.prepareTask(taskId, null);
  fs.writeFileSync(path.join(wt.path, file), `${taskId}\n`);
  await ws.checkpoint(taskId, wt, `acia(${taskId})`);
}

async function until(what: string, ok: () => boolean): Promise<void> {
  for (const end = Date.now() + 30_000; !ok(); ) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The orchestrator's side: the run branch on the remote, from a clone of its own. */
async function orchestrator(url: string, base: string, f: Fleetish): Promise<FleetWorkspace> {
  const policy = { repos: [path.dirname(url)], allowSandboxOff: false, scriptedModelDirs: [] };
  const checkout = await checkoutJob(git, { cacheDir: tmp('cache-orch'), repoUrl: url, runId, base, dir: path.join(tmp('orch'), 'clone'), policy });
  const ws = workspace({ ...checkout, fresh: { open: false } }, f);
  await ws.openRun(base, true);
  return ws;
}

function pool(url: string, log: string[] = []): TaskClones {
  const clones = new TaskClones(git, { cacheDir: tmp('cache-worker'), policy: { repos: [path.dirname(url)], allowSandboxOff: false, scriptedModelDirs: [] }, log: (l) => log.push(l) });
  pools.push(clones);
  return clones;
}

describe("a worker's task-job clones", () => {
  it("serve the run's next task job with its last clone, brought to the run branch, and never another run", async () => {
    const { url, base } = bareRemote(tmp);
    const f: Fleetish = { lock: serialLock(), pushed: { head: null } };
    const orch = await orchestrator(url, base, f);
    const clones = pool(url);
    await clones.start();

    const first = await clones.take({ repoUrl: url, runId, base });
    expect(first.checkout.kept).toBeUndefined();
    const ws1 = workspace(first.checkout, f);
    await ws1.openRun(base, false);
    await addFile(ws1, 't1', 'one.txt');
    const m1 = await ws1.merge('t1');
    expect(sh(url, 'rev-parse', `acia/${runId}`)).toBe(m1.commit);
    first.release(true);
    await until('the clone to be put back', () => clones.idleRuns().includes(runId));

    // Meanwhile another worker merges t2: the kept clone's run worktree is behind the remote now.
    await addFile(orch, 't2', 'two.txt');
    const m2 = await orch.merge('t2');

    const second = await clones.take({ repoUrl: url, runId, base });
    expect(second.checkout.dir).toBe(first.checkout.dir);
    expect(second.checkout.kept).toEqual({ runHead: m1.commit });
    // The clone comes with its fetch under way: the refs are there once it has settled.
    await second.checkout.fetched;
    expect(second.checkout.remoteRefs.get(`acia/${runId}`)).toBe(m2.commit);
    expect(second.checkout.remoteRefs.get(`acia-tasks/${runId}/t2`)).toMatch(/^[0-9a-f]{40}$/);
    // As a task job opens it: the run head is known from the fetch, the run worktree checked out only when asked for.
    const ws2 = workspace(second.checkout, f, runId, undefined, { taskJob: true });
    await ws2.openRun(base, false);
    expect(await ws2.runHead()).toBe(m2.commit);
    // The task's worktree made ahead is the one its attempt gets (not made again: what was left there stays).
    await ws2.prepareAhead('t3', null);
    fs.writeFileSync(path.join(ws2.root(), 't3', 'left.txt'), 'made ahead\n');
    const wt3 = await ws2.prepareTask('t3', null);
    expect(wt3.baseCommit).toBe(m2.commit);
    expect(fs.readFileSync(path.join(wt3.path, 'left.txt'), 'utf8')).toBe('made ahead\n');
    fs.rmSync(path.join(wt3.path, 'left.txt'));
    expect(fs.existsSync(ws2.runWorktree)).toBe(false);
    await ws2.runWorktreeReady();
    expect(fs.readFileSync(path.join(ws2.runWorktree, 'two.txt'), 'utf8')).toBe('t2\n');
    // The last job's task worktree went when the clone was put back.
    expect(fs.existsSync(path.join(ws2.root(), 't1'))).toBe(false);
    fs.writeFileSync(path.join(wt3.path, 'three.txt'), 't3\n');
    await ws2.checkpoint('t3', wt3, 'acia(t3)');
    const m3 = await ws2.merge('t3');
    expect(sh(url, 'ls-tree', '--name-only', `acia/${runId}`).split('\n').sort()).toEqual(['README.md', 'one.txt', 'three.txt', 'two.txt']);
    expect(sh(url, 'merge-base', '--is-ancestor', m2.commit!, m3.commit!)).toBe('');

    // Another run on the same worker and repository gets a clone of its own (the spare), with none of this run's branches.
    const other = await clones.take({ repoUrl: url, runId: otherRun, base });
    expect(other.checkout.dir).not.toBe(second.checkout.dir);
    expect(other.checkout.kept).toBeUndefined();
    expect(sh(other.checkout.dir, 'for-each-ref', '--format=%(refname)', 'refs/heads/')).not.toContain(runId);
    other.release(false);
    second.release(true);
    await until('the clone to be put back again', () => clones.idleRuns().includes(runId));

    // The run ended: its clone goes.
    clones.sweep(new Set([otherRun]));
    expect(clones.idleRuns()).toEqual([runId]);
    clones.sweep(new Set([runId]));
    expect(clones.idleRuns()).toEqual([]);
    await until("the ended run's clone to be removed", () => !fs.existsSync(second.checkout.dir));
  }, 60_000);

  it('guards a spare when it makes it: a job takes a clean one as guarded, and not one the guard refuses', async () => {
    const { url, base } = bareRemote(tmp);
    const clones = pool(url);
    await clones.start();
    clones.prepare(url, base);
    const clean = await clones.take({ repoUrl: url, runId, base });
    expect(clean.checkout.guarded).toBe(true);
    clean.release(false);

    // A repository that tracks ACIA's own run state: its spare is not guarded, so the job runs the guard, which refuses it.
    const src = tmp('hostile-src');
    sh(src, 'init', '-q', '-b', 'main');
    fs.mkdirSync(path.join(src, '.acia', 'runs', 'planted'), { recursive: true });
    fs.writeFileSync(path.join(src, '.acia', 'runs', 'planted', 'ledger.jsonl'), '{}\n');
    sh(src, 'add', '-A');
    sh(src, 'commit', '-qm', 'planted');
    const hostileUrl = path.join(tmp('hostile-remote'), 'app.git');
    sh(src, 'clone', '-q', '--bare', src, hostileUrl);
    const hostileBase = sh(src, 'rev-parse', 'HEAD');
    const hostile = new TaskClones(git, { cacheDir: tmp('cache-hostile'), policy: { repos: [path.dirname(hostileUrl)], allowSandboxOff: false, scriptedModelDirs: [] }, log: () => undefined });
    pools.push(hostile);
    await hostile.start();
    hostile.prepare(hostileUrl, hostileBase);
    const taken = await hostile.take({ repoUrl: hostileUrl, runId: otherRun, base: hostileBase });
    expect(taken.checkout.guarded).toBeUndefined();
    await expect(guardAciaState(taken.checkout.dir)).rejects.toMatchObject({ code: 'UNSAFE_REPO' });
    taken.release(false);
  }, 60_000);

  it('does not reuse a clone changed behind its back, nor one whose job failed', async () => {
    const { url, base } = bareRemote(tmp);
    const f: Fleetish = { lock: serialLock(), pushed: { head: null } };
    await orchestrator(url, base, f);
    const log: string[] = [];
    const clones = pool(url, log);
    await clones.start();

    const first = await clones.take({ repoUrl: url, runId, base });
    const ws1 = workspace(first.checkout, f);
    await ws1.openRun(base, false);
    first.release(true);
    await until('the clone to be put back', () => clones.idleRuns().includes(runId));
    // What a command run outside the sandbox could plant for the worker's next git call there.
    fs.appendFileSync(path.join(first.checkout.dir, '.git', 'config'), '[core]\n\tfsmonitor = touch /tmp/owned\n');

    const second = await clones.take({ repoUrl: url, runId, base });
    expect(second.checkout.kept).toBeUndefined();
    expect(second.checkout.dir).not.toBe(first.checkout.dir);
    expect(log.join('\n')).toMatch(/not as this worker left it/);
    await until('the changed clone to be removed', () => !fs.existsSync(first.checkout.dir));

    // A commondir leaves config and alternates as they were but sends git to another repository's.
    const ws2 = workspace(second.checkout, f);
    await ws2.openRun(base, false);
    second.release(true);
    await until('the second clone to be put back', () => clones.idleRuns().includes(runId));
    fs.writeFileSync(path.join(second.checkout.dir, '.git', 'commondir'), `${bareRemote(tmp).url}\n`);
    const third = await clones.take({ repoUrl: url, runId, base });
    expect(third.checkout.kept).toBeUndefined();
    expect(third.checkout.dir).not.toBe(second.checkout.dir);
    await until('the redirected clone to be removed', () => !fs.existsSync(second.checkout.dir));

    // A failed job's clone is removed, not kept.
    third.release(false);
    await until('the failed job\'s clone to be removed', () => !fs.existsSync(third.checkout.dir));
    expect(clones.idleRuns()).toEqual([]);
  }, 60_000);

  it('merges again on top when the recorded run head was behind the remote, and a fenced worker still pushes nothing', async () => {
    const { url, base } = bareRemote(tmp);
    const f: Fleetish = { lock: serialLock(), pushed: { head: null } };
    const orch = await orchestrator(url, base, f);
    const clones = pool(url);
    await clones.start();
    let fenced = false;
    const job = await clones.take({ repoUrl: url, runId, base });
    const ws = workspace(job.checkout, f, runId, () => (fenced ? Promise.reject(Object.assign(new Error('fenced'), { code: 'LEDGER_FENCED' })) : Promise.resolve()));
    await ws.openRun(base, false);

    // Another worker merged t2 without recording it (a worker of an older version): the record says base.
    await addFile(orch, 't2', 'two.txt');
    const m2 = await orch.merge('t2');
    f.pushed.head = base;
    await addFile(ws, 't1', 'one.txt');
    const m1 = await ws.merge('t1');
    expect(m1.conflict).toBe(false);
    expect(sh(url, 'rev-parse', `acia/${runId}`)).toBe(m1.commit);
    expect(sh(url, 'merge-base', '--is-ancestor', m2.commit!, m1.commit!)).toBe('');
    expect(f.pushed.head).toBe(m1.commit);

    // Taken over (its fence check fails) while the record again lags behind another merge: nothing is pushed.
    await addFile(orch, 't3', 'three.txt');
    const m3 = await orch.merge('t3');
    f.pushed.head = m1.commit;
    await addFile(ws, 't4', 'four.txt');
    fenced = true;
    await expect(ws.merge('t4')).rejects.toMatchObject({ code: 'LEDGER_FENCED' });
    expect(sh(url, 'rev-parse', `acia/${runId}`)).toBe(m3.commit);
    job.release(false);
  }, 60_000);
});
