// Replay holds for crashed runs: a run killed at a seeded point (any append of any session, twice in a row
// for some seeds) and resumed to its end replays to `identical`, and the run did go through the crash
// and the resume. In-process (tests/team/team-rig.ts): the kill is exact, at an append, with what was
// under way left to finish its side effect; tests/faults/crash.test.ts does the same with real kill -9.
import { describe, expect, it } from 'vitest';
import { cancelRun } from '../../src/app/cancel-run.js';
import { writeCancelRequest } from '../../src/core/contain/cancel-request.js';
import type { LedgerEntry } from '../../src/core/ledger/entry.js';
import { rng } from '../helpers/rng.js';
import { replaysIdentically, scenario, teamRig } from '../team/team-rig.js';

/** Scenarios and a lower bound of how many entries an uninterrupted run of each records. */
const SCENARIOS: Array<{ name: string; entries: number; kills: number }> = [
  { name: 'happy', entries: 30, kills: 3 },
  { name: 'parallel', entries: 75, kills: 3 },
  { name: 'fix-loop', entries: 50, kills: 2 },
  { name: 'plan-b', entries: 55, kills: 2 },
];

describe('replay of a run resumed after a crash at a seeded point', () => {
  for (const s of SCENARIOS) {
    const random = rng(s.name.length * 104729 + s.entries);
    for (let k = 0; k < s.kills; k++) {
      const first = 2 + Math.floor(random() * (s.entries - 3));
      // Every other case crashes the first resume too, a few appends in.
      const second = k % 2 === 1 ? 2 + Math.floor(random() * 12) : null;
      it(`${s.name}: killed at append ${first}${second === null ? '' : ` and the resume at its append ${second}`}, resumed to the end, replays identically`, async () => {
        const rig = teamRig({ ledger: 'file' });
        const sc = scenario(s.name, rig.dir);
        const crashed = await rig.crash({ goal: sc.goal }, sc.session, first);
        expect(crashed.crashed).toBe(true);
        if (second !== null) expect((await rig.crash({ runId: crashed.runId }, sc.session, second)).crashed).toBe(true);
        const end = await rig.resume(crashed.runId, undefined, sc.session);
        expect(end.result.reason, end.result.message).toBe(sc.expect.reason);
        expect(end.entries.filter((e) => e.type === 'RUN_RESUMED')).toHaveLength(second === null ? 1 : 2);
        expect(await replaysIdentically(rig.repo, crashed.runId)).toBe(true);
      }, 120_000);
    }
  }

  // A fleet worker that dies holding a dev task: the task is handed out again; replay cuts the lost hand-out off where it died.
  for (const name of ['happy', 'parallel']) {
    const random = rng(name.length * 7919);
    const points = new Set<number>();
    while (points.size < 2) points.add(1 + Math.floor(random() * 12));
    for (const at of points) {
      it(`${name}: t1's worker dies at its append ${at}, the task is handed out again, the run replays identically`, async () => {
        const rig = teamRig({ ledger: 'file' });
        const sc = scenario(name, rig.dir);
        const end = await rig.start({ goal: sc.goal }, { ...sc.session, loseHandout: { taskId: 't1', at } });
        expect(end.result.reason, end.result.message).toBe(sc.expect.reason);
        expect(end.entries.filter((e) => e.type === 'COMPENSATION_APPLIED' && e.data.handoutLost !== undefined)).toHaveLength(1);
        expect(await replaysIdentically(rig.repo, end.result.runId)).toBe(true);
      }, 120_000);
    }
  }

  // An interrupt (Ctrl-C) is a session that stopped for a reason the ledger does not record: replay ends that
  // session where its decisions end, with the end it recorded, and resumes as the user did.
  it('happy: interrupted after the dev task\'s first model call, resumed, replays identically', async () => {
    const rig = teamRig({ ledger: 'file' });
    const sc = scenario('happy', rig.dir);
    const first = await rig.start({ goal: sc.goal }, { ...sc.session, abortWhen: (e) => e.type === 'LLM_CALL' && e.actor === 'dev:t1' });
    expect(first.result.reason).toBe('aborted');
    const end = await rig.resume(first.result.runId, undefined, sc.session);
    expect(end.result.reason, end.result.message).toBe('succeeded');
    expect(await replaysIdentically(rig.repo, first.result.runId)).toBe(true);
  }, 120_000);

  // `acia cancel` stops a running run where its request reaches it (a poll of the request file), which replay
  // cannot see coming, as with an interrupt: the session is cut where its decisions end, with its recorded end.
  it('parallel: cancelled while its dev tasks run, replays identically', async () => {
    const rig = teamRig({ ledger: 'file' });
    const sc = scenario('parallel', rig.dir);
    let sent = false;
    const cancelAtFirstDevCall = (e: LedgerEntry): boolean => {
      // Written once, at the first dev model call: four dev tasks, their merges and QA are still ahead, far
      // longer than the watch's 250 ms poll, so the run is cancelled while it runs wherever the poll lands.
      if (!sent && e.type === 'LLM_CALL' && e.actor.startsWith('dev:')) {
        sent = true;
        writeCancelRequest(rig.repo, e.runId, { by: 'test', requestedAt: e.ts });
      }
      return false;
    };
    const end = await rig.start({ goal: sc.goal }, { ...sc.session, abortWhen: cancelAtFirstDevCall });
    expect(end.result.reason, end.result.message).toBe('cancelled');
    expect(end.entries.find((e) => e.type === 'CANCEL_REQUESTED')?.data).toMatchObject({ wasRunning: true });
    expect(await replaysIdentically(rig.repo, end.result.runId)).toBe(true);
  }, 120_000);

  // The answer comes in another session, which runs one more fix and writes the lessons t1 proposed in the
  // first (they cite the first session's seqs): replay makes the same page update in the same session.
  it('escalate: answered with guidance in a new session, the run writes its lessons, replays identically', async () => {
    const rig = teamRig({ ledger: 'file' });
    const sc = scenario('escalate', rig.dir);
    const first = await rig.start({ goal: sc.goal }, sc.session);
    expect(first.result.reason).toBe('awaiting_human');
    const end = await rig.resume(first.result.runId, 'capitalise every word, not just the first', sc.session);
    expect(end.result.reason, end.result.message).toBe('succeeded');
    expect(end.entries.filter((e) => e.type === 'RUN_RESUMED')).toHaveLength(1);
    const lessons = end.entries.flatMap((e) => (e.type === 'MEMORY_UPDATED' && e.data.page === 'lessons' ? [e.data] : []));
    expect(lessons).toHaveLength(1);
    expect(lessons[0]!.afterRef).not.toBe(lessons[0]!.beforeRef);
    expect(await replaysIdentically(rig.repo, first.result.runId)).toBe(true);
  }, 120_000);

  // A run waiting for a human is closed by `acia cancel` itself (nobody runs it): replay closes it the same way.
  it('escalate: cancelled while it waits for a human, replays identically', async () => {
    const rig = teamRig({ ledger: 'file' });
    const sc = scenario('escalate', rig.dir);
    const end = await rig.start({ goal: sc.goal }, sc.session);
    expect(end.result.reason).toBe('awaiting_human');
    expect(await cancelRun({ repo: rig.repo, runId: end.result.runId, by: 'test' })).toMatchObject({ kind: 'cancelled', wasRunning: false });
    expect(rig.entries(end.result.runId).at(-1)).toMatchObject({ type: 'RUN_COMPLETED', data: { reason: 'cancelled' } });
    expect(await replaysIdentically(rig.repo, end.result.runId)).toBe(true);
  }, 120_000);
});
