// The mailbox on its own: what a live session takes in (from an injected source, or the run's inbox
// files), what it refuses, and where each mode is delivered; a recorded state built from real entries.
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/acm/ids.js';
import { MAX_MESSAGE_BYTES, takeMessageRequests, type MessageRequest, type TakenMessage } from '../../src/core/contain/message-request.js';
import type { EventDataOf } from '../../src/core/ledger/events.js';
import { MemoryLedger } from '../../src/core/ledger/memory-ledger.js';
import { emptyRunState, pendingMessages } from '../../src/core/run/state.js';
import { LiveMailbox, inboxFiles, refusalFor, type MessageSource } from '../../src/team/mailbox.js';
import { Recorder } from '../../src/team/recorder.js';
import type { RunContext } from '../../src/team/run-context.js';
import { savedPlanSet } from './team-rig.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function temp(): string {
  const d = realpathSync(mkdtempSync(join(tmpdir(), 'acia-mailbox-')));
  dirs.push(d);
  return d;
}

const PLANS = () =>
  savedPlanSet(
    [
      { id: 't1', capability: 'dev.implement' },
      { id: 't2', capability: 'dev.implement' },
    ],
    [{ from: 't1', to: 't2' }],
  );

/** A run at the point the plan says: proposed only (the approval gate), or selected with t1 started (and completed). */
async function runAt(stage: 'nothing' | 'gate' | 't1-running' | 't1-completed') {
  const state = emptyRunState();
  const ledger = new MemoryLedger('20261127-000000-abcdef', systemClock);
  const rec = new Recorder(ledger, state, systemClock, undefined);
  if (stage !== 'nothing') await rec.record('pm', 'PLAN_PROPOSED', { attempt: 1, planSet: PLANS(), valid: true, problems: [] });
  if (stage === 't1-running' || stage === 't1-completed') {
    await rec.record('pm', 'PLAN_SELECTED', { planId: 'plan-A', method: 'human', rationale: 'r', alternatives: [] });
    await rec.record('team', 'TASK_STARTED', { taskId: 't1', attempt: 1, capability: 'dev.implement' });
  }
  if (stage === 't1-completed') await rec.record('team', 'TASK_COMPLETED', { taskId: 't1', attempt: 1, output: {}, summary: 'done' });
  const runDir = temp();
  const ctx = { state, rec, runDir } as unknown as RunContext;
  const of = <T extends 'MESSAGE_RECEIVED' | 'MESSAGE_DELIVERED'>(type: T) => ledger.entries().filter((e) => e.type === type).map((e) => e.data as EventDataOf<T>);
  return { ctx, state, runDir, of };
}

let n = 0;
const message = (to: string, mode: MessageRequest['mode'], text: string): MessageRequest => ({ id: `m-test0${String(++n).padStart(4, '0')}`, author: 'ann@laptop', to, mode, text, sentAt: '2026-11-27T10:00:00.000Z' });

/** One look at the source, as the session's first poll and its timer make. */
async function poll(box: LiveMailbox, ctx: RunContext): Promise<void> {
  await box.start(ctx);
  box.stop();
}

/** A source that hands over what was sent since the last poll. */
function sent(): { source: MessageSource; send: (...m: MessageRequest[]) => void } {
  const waiting: MessageRequest[] = [];
  return {
    source: () => Promise.resolve({ messages: waiting.splice(0).map((request): TakenMessage => ({ ok: true, request })), done: () => Promise.resolve(), release: () => Promise.resolve() }),
    send: (...m) => waiting.push(...m),
  };
}

describe('a live mailbox', () => {
  it('delivers steer and interrupt at the next tool boundary and queue at the next turn, in the order sent; another task’s message waits for it', async () => {
    const { ctx, state, of } = await runAt('t1-running');
    const { source, send } = sent();
    const q = message('t1', 'queue', 'Q-NOTE');
    const s = message('t1', 'steer', 'S-NOTE');
    const other = message('t2', 'queue', 'T2-NOTE');
    const i = message('t1', 'interrupt', 'I-NOTE');
    send(q, s, other, i);
    const box = new LiveMailbox(source, 60_000);
    await poll(box, ctx);
    expect(of('MESSAGE_RECEIVED').map((m) => [m.id, m.to, m.mode, m.refused])).toEqual([
      [q.id, 't1', 'queue', undefined],
      [s.id, 't1', 'steer', undefined],
      [other.id, 't2', 'queue', undefined],
      [i.id, 't1', 'interrupt', undefined],
    ]);
    const inbox = box.inboxFor(ctx, 't1', 't1', 'dev:t1');
    const atBoundary = await inbox.take({ at: 'tool_boundary', turn: 1, afterToolUseId: 'toolu_1' });
    expect(atBoundary).toEqual(['Message from the human directing the team (ann@laptop, steer):\nS-NOTE', 'Message from the human directing the team (ann@laptop, interrupt):\nI-NOTE']);
    expect(await inbox.take({ at: 'turn', turn: 2 })).toEqual(['Message from the human directing the team (ann@laptop, queue):\nQ-NOTE']);
    expect(await inbox.take({ at: 'turn', turn: 3 })).toEqual([]);
    expect(of('MESSAGE_DELIVERED')).toEqual([
      { id: s.id, taskId: 't1', caller: 'dev:t1', turn: 1, at: 'tool_boundary', afterToolUseId: 'toolu_1' },
      { id: i.id, taskId: 't1', caller: 'dev:t1', turn: 1, at: 'tool_boundary', afterToolUseId: 'toolu_1' },
      { id: q.id, taskId: 't1', caller: 'dev:t1', turn: 2, at: 'turn' },
    ]);
    expect(pendingMessages(state, 't2').map((m) => m.text)).toEqual(['T2-NOTE']);
  });

  it('looks at its source at each delivery point: a message sent just before a turn is in that turn, whatever the poll timer', async () => {
    const { ctx } = await runAt('t1-running');
    const { source, send } = sent();
    const box = new LiveMailbox(source, 60_000);
    await poll(box, ctx);
    send(message('t1', 'queue', 'LATE-NOTE'));
    expect(await box.inboxFor(ctx, 't1', 't1', 'dev:t1').take({ at: 'turn', turn: 1 })).toEqual(['Message from the human directing the team (ann@laptop, queue):\nLATE-NOTE']);
  });

  it('an interrupt aborts the model call in flight, and one still waiting aborts the next call at once; queue and steer never do', async () => {
    const { ctx } = await runAt('t1-running');
    const { source, send } = sent();
    const box = new LiveMailbox(source, 60_000);
    await poll(box, ctx);
    const inbox = box.inboxFor(ctx, 't1', 't1', 'dev:t1');
    const call = inbox.callSignal()!;
    send(message('t1', 'queue', 'q'), message('t1', 'steer', 's'), message('t2', 'interrupt', 'for t2'));
    await poll(box, ctx);
    expect(call.aborted).toBe(false);
    send(message('t1', 'interrupt', 'STOP'));
    await poll(box, ctx);
    expect(call.aborted).toBe(true);
    expect(String(call.reason)).toMatch(/interrupted by a message/);
    // Not delivered yet: the next call is stopped before it starts.
    expect(inbox.callSignal()!.aborted).toBe(true);
    expect(await inbox.take({ at: 'interrupt', turn: 1 })).toHaveLength(3);
    expect(inbox.callSignal()!.aborted).toBe(false);
  });

  it('records a message to a finished task as refused and never delivers it', async () => {
    const { ctx, of } = await runAt('t1-completed');
    const { source, send } = sent();
    send(message('t1', 'steer', 'too late'));
    const box = new LiveMailbox(source, 60_000);
    await poll(box, ctx);
    expect(of('MESSAGE_RECEIVED')[0]).toMatchObject({ to: 't1', refused: 'task t1 is completed; a message can no longer reach it' });
    expect(await box.inboxFor(ctx, 't1', 't1', 'dev:t1').take({ at: 'turn', turn: 1 })).toEqual([]);
    expect(of('MESSAGE_DELIVERED')).toEqual([]);
  });

  it('takes each message once: the same id sent again is not recorded twice', async () => {
    const { ctx, of } = await runAt('t1-running');
    const { source, send } = sent();
    const m = message('pm', 'queue', 'once');
    send(m, m);
    const box = new LiveMailbox(source, 60_000);
    await poll(box, ctx);
    expect(of('MESSAGE_RECEIVED').map((r) => r.id)).toEqual([m.id]);
  });
});

describe('who may be messaged', () => {
  it('says why a message cannot reach its recipient in each state of the run', async () => {
    expect(refusalFor((await runAt('nothing')).ctx, 't1')).toBe('there is no plan yet, so no task t1');
    expect(refusalFor((await runAt('nothing')).ctx, 'pm')).toBeNull();
    const gate = (await runAt('gate')).ctx;
    expect(refusalFor(gate, 't2')).toBeNull();
    expect(refusalFor(gate, 't9')).toBe('no proposed plan has a task t9');
    const running = (await runAt('t1-running')).ctx;
    expect(refusalFor(running, 't1')).toBeNull();
    expect(refusalFor(running, 't9')).toBe('the plan has no task t9');
    expect(refusalFor((await runAt('t1-completed')).ctx, 't1')).toBe('task t1 is completed; a message can no longer reach it');
  });
});

describe("the run's inbox files", () => {
  const write = (dir: string, name: string, body: string) => writeFileSync(join(dir, name), body);

  it('takes this user’s message files oldest first and drops links, special and oversized files and non-messages unread, deleting each (a message once recorded)', async () => {
    const runDir = temp();
    const inbox = join(runDir, 'inbox');
    mkdirSync(inbox);
    const a = message('t1', 'queue', 'first');
    const b = message('pm', 'steer', 'second');
    write(inbox, `${b.id}.json`, JSON.stringify(b));
    write(inbox, `${a.id}.json`, JSON.stringify(a));
    const outside = join(temp(), 'elsewhere.json');
    writeFileSync(outside, JSON.stringify(message('t1', 'interrupt', 'via a link')));
    symlinkSync(outside, join(inbox, 'm-link000001.json'));
    write(inbox, 'm-junk000001.json', '{"not": "a message"}');
    write(inbox, 'm-huge000001.json', 'x'.repeat(MAX_MESSAGE_BYTES * 2 + 1));
    write(inbox, 'notes.txt', 'ignored: not a .json file');
    const batch = takeMessageRequests(runDir);
    const taken = batch.messages;
    expect(taken.filter((t) => t.ok).map((t) => (t.ok ? t.request.text : ''))).toEqual(['first', 'second']);
    const why = Object.fromEntries(taken.flatMap((t) => (t.ok ? [] : [[t.file.split('/').at(-1), t.why]])));
    expect(why).toEqual({ 'm-link000001.json': 'it is a link', 'm-junk000001.json': 'it is not a message request', 'm-huge000001.json': 'it is larger than a message may be' });
    // What speaks for nobody is gone at once; a message stays until the session has recorded it.
    expect(readdirSync(inbox).sort()).toEqual([`${a.id}.json`, `${b.id}.json`, 'notes.txt'].sort());
    await batch.done();
    expect(readdirSync(inbox)).toEqual(['notes.txt']);
    // The link was removed, never followed: its target is still there.
    expect(lstatSync(outside).isFile()).toBe(true);
  });

  it('takes nothing written by another user: the whole inbox, or one file, owned by another uid', () => {
    const runDir = temp();
    mkdirSync(join(runDir, 'inbox'));
    const m = message('pm', 'queue', 'from someone else');
    write(join(runDir, 'inbox'), `${m.id}.json`, JSON.stringify(m));
    const me = process.getuid!();
    expect(takeMessageRequests(runDir, me + 1).messages).toEqual([{ ok: false, file: join(runDir, 'inbox'), why: `the inbox belongs to uid ${me}, not to you` }]);
    expect(takeMessageRequests(join(temp(), 'no-run')).messages).toEqual([]);
  });

  it('a live mailbox over the inbox files records only the messages, never what it dropped', async () => {
    const { ctx, runDir, of } = await runAt('t1-running');
    const inbox = join(runDir, 'inbox');
    mkdirSync(inbox);
    const m = message('t1', 'queue', 'real');
    write(inbox, `${m.id}.json`, JSON.stringify(m));
    const outside = join(temp(), 'x.json');
    writeFileSync(outside, JSON.stringify(message('t1', 'interrupt', 'planted')));
    symlinkSync(outside, join(inbox, 'm-link000002.json'));
    const box = new LiveMailbox(inboxFiles, 60_000);
    await poll(box, ctx);
    expect(of('MESSAGE_RECEIVED').map((r) => r.text)).toEqual(['real']);
  });

  it('a message its session could not record stays in the inbox, and is recorded once when it can', async () => {
    const { ctx, runDir, of } = await runAt('t1-running');
    const inbox = join(runDir, 'inbox');
    mkdirSync(inbox);
    const m = message('t1', 'steer', 'KEEP-ME');
    write(inbox, `${m.id}.json`, JSON.stringify(m));
    const full = { ...ctx, rec: { record: () => Promise.reject(new Error('ENOSPC: no space left on device')) } } as unknown as RunContext;
    await poll(new LiveMailbox(inboxFiles, 60_000), full);
    expect(of('MESSAGE_RECEIVED')).toEqual([]);
    expect(readdirSync(inbox)).toEqual([`${m.id}.json`]);
    await poll(new LiveMailbox(inboxFiles, 60_000), ctx);
    expect(of('MESSAGE_RECEIVED').map((r) => r.text)).toEqual(['KEEP-ME']);
    expect(readdirSync(inbox)).toEqual([]);
  });

  it('a message recorded twice (a lapsed fleet claim) is one message: delivered once, then never pending again', async () => {
    const { ctx, state, of } = await runAt('t1-running');
    const m = message('t1', 'steer', 'TWICE');
    const data = { id: m.id, author: m.author, to: m.to, mode: m.mode, text: m.text };
    await ctx.rec.record('human', 'MESSAGE_RECEIVED', data);
    await ctx.rec.record('human', 'MESSAGE_RECEIVED', data);
    expect(of('MESSAGE_RECEIVED')).toHaveLength(2);
    expect(state.messages.map((x) => x.id)).toEqual([m.id]);
    const inbox = new LiveMailbox(sent().source, 60_000).inboxFor(ctx, 't1', 't1', 'dev:t1');
    expect(await inbox.take({ turn: 1, at: 'turn' })).toEqual([expect.stringContaining('TWICE')]);
    expect(await inbox.take({ turn: 2, at: 'turn' })).toEqual([]);
    expect(pendingMessages(state, 't1')).toEqual([]);
  });

  it('a session that died between recording a message and removing it: its successor skips it and removes it', async () => {
    const { ctx, runDir, of } = await runAt('t1-running');
    const inbox = join(runDir, 'inbox');
    mkdirSync(inbox);
    const m = message('t1', 'queue', 'ONCE');
    write(inbox, `${m.id}.json`, JSON.stringify(m));
    const dies: MessageSource = async (c) => ({ ...(await inboxFiles(c)), done: () => Promise.reject(new Error('killed')) });
    await poll(new LiveMailbox(dies, 60_000), ctx);
    expect(readdirSync(inbox)).toEqual([`${m.id}.json`]);
    await poll(new LiveMailbox(inboxFiles, 60_000), ctx);
    expect(of('MESSAGE_RECEIVED').map((r) => r.text)).toEqual(['ONCE']);
    expect(readdirSync(inbox)).toEqual([]);
  });
});
