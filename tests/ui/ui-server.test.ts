// The `acia ui` server in-process, over real ledgers written by the real file ledger: what the event
// streams send (the backlog once, then only new entries), who is refused, what a hostile clone's
// `.acia/runs` can and cannot make it serve. The page itself is tested in Chromium (tests/e2e/ui-browser).
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LedgerEntry } from '../../src/core/ledger/entry.js';
import { openRunLedger } from '../../src/core/ledger/file-ledger.js';
import { newToken, tokenMatches } from '../../src/ui/guard.js';
import { localStore } from '../../src/ui/local-store.js';
import { ActivityIndex, RunFold } from '../../src/ui/run-model.js';
import { startUiServer, type UiServer } from '../../src/ui/ui-server.js';
import { fixedClock, writeSampleRun } from '../helpers/sample-run.js';

const RUNNING = '20260102-030405-aaaaaa';
const WAITING = '20260102-030405-bbbbbb';

/** The page's files: this suite tests the server, not the built page. */
function assets(): string {
  const dir = mkdtempSync(join(tmpdir(), 'acia-ui-assets-'));
  writeFileSync(join(dir, 'index.html'), '<script src="/assets/app.js?token={{token}}"></script>');
  for (const f of ['app.js', 'app.css', 'icon.svg']) writeFileSync(join(dir, f), '');
  return dir;
}

interface SseEvent {
  event: string;
  id: string | null;
  data: unknown;
}

/** An event stream read from the server: events as they come, until closed. */
async function openStream(url: string, headers: Record<string, string> = {}): Promise<{ next(test: (e: SseEvent) => boolean, ms?: number): Promise<SseEvent>; close(): void; seen: SseEvent[] }> {
  const ac = new AbortController();
  const res = await fetch(url, { headers, signal: ac.signal });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const seen: SseEvent[] = [];
  let buf = '';
  let from = 0;
  const pump = async (): Promise<boolean> => {
    const { value, done } = await reader.read();
    if (done) return false;
    buf += decoder.decode(value as Uint8Array, { stream: true });
    for (let at = buf.indexOf('\n\n'); at !== -1; at = buf.indexOf('\n\n')) {
      const block = buf.slice(0, at);
      buf = buf.slice(at + 2);
      const field = (name: string) => block.split('\n').find((l) => l.startsWith(`${name}: `))?.slice(name.length + 2) ?? null;
      const data = field('data');
      if (data !== null) seen.push({ event: field('event') ?? 'message', id: field('id'), data: JSON.parse(data) as unknown });
    }
    return true;
  };
  return {
    seen,
    async next(test, ms = 10_000) {
      const deadline = Date.now() + ms;
      for (;;) {
        const i = seen.slice(from).findIndex(test);
        if (i !== -1) {
          from += i + 1;
          return seen[from - 1]!;
        }
        if (Date.now() > deadline) throw new Error(`no such event; seen ${JSON.stringify(seen.map((e) => [e.event, JSON.stringify(e.data).slice(0, 400)]))}`);
        const more = await Promise.race([pump(), new Promise<boolean>((r) => setTimeout(() => r(true), Math.max(0, deadline - Date.now())))]);
        if (!more) throw new Error('the stream ended');
      }
    },
    close: () => ac.abort(),
  };
}

describe('acia ui server', () => {
  let repo: string;
  let server: UiServer;
  let token: string;
  let base: string;
  const q = () => `token=${token}`;

  beforeAll(async () => {
    repo = mkdtempSync(join(tmpdir(), 'acia-ui-repo-'));
    await writeSampleRun(repo, { runId: RUNNING, outcome: 'running' });
    await writeSampleRun(repo, { runId: WAITING, outcome: 'awaiting_human' });
    // A hostile clone's run directory that is a link to a directory elsewhere, with a ledger in it.
    const elsewhere = mkdtempSync(join(tmpdir(), 'acia-ui-elsewhere-'));
    await writeSampleRun(elsewhere, { runId: '20260102-030405-cccccc' });
    symlinkSync(join(elsewhere, '.acia', 'runs', '20260102-030405-cccccc'), join(repo, '.acia', 'runs', '20260102-030405-cccccc'));
    token = newToken();
    server = await startUiServer({ store: localStore(repo), token, port: 0, assetsDir: assets() });
    base = `http://127.0.0.1:${server.port}`;
  });

  afterAll(async () => {
    await server?.close();
  });

  it('sends a run its backlog once, then only the entries appended since, each once and in order', async () => {
    const s = await openStream(`${base}/api/runs/${RUNNING}/stream?${q()}`);
    const first = await s.next((e) => e.event === 'entries');
    const backlog = first.data as LedgerEntry[];
    expect(backlog.map((e) => e.seq)).toEqual(backlog.map((_, i) => i));
    expect(first.id).toBe(String(backlog.length - 1));
    const ledger = await openRunLedger(join(repo, '.acia', 'runs', RUNNING), RUNNING, { clock: fixedClock(Date.UTC(2026, 0, 3)), create: false });
    await ledger.append({ actor: 'qa:t2', type: 'TASK_COMPLETED', data: { taskId: 't2', attempt: 1, output: {}, summary: 'done' } });
    await ledger.append({ actor: 'team', type: 'MEMORY_UPDATED', data: { page: 'lessons', beforeRef: null, afterRef: `sha256:${'0'.repeat(64)}`, reason: 'x' } });
    await ledger.close();
    const live: LedgerEntry[] = [];
    while (live.length < 2) live.push(...((await s.next((e) => e.event === 'entries')).data as LedgerEntry[]));
    expect(live.map((e) => [e.seq, e.type])).toEqual([
      [backlog.length, 'TASK_COMPLETED'],
      [backlog.length + 1, 'MEMORY_UPDATED'],
    ]);
    s.close();
    // A browser that reconnects says where it was (Last-Event-ID): it gets the rest only.
    const again = await openStream(`${base}/api/runs/${RUNNING}/stream?${q()}`, { 'Last-Event-ID': String(backlog.length) });
    expect(((await again.next((e) => e.event === 'entries')).data as LedgerEntry[]).map((e) => e.seq)).toEqual([backlog.length + 1]);
    again.close();
  });

  it('lists the runs with their fold, and a run that starts shows up on the stream', async () => {
    const s = await openStream(`${base}/api/runs/stream?${q()}`);
    const rows = (await s.next((e) => e.event === 'rows')).data as { runId: string; status: string; waiting: boolean; goal: string }[];
    expect(rows.map((r) => r.runId).sort()).toEqual([RUNNING, WAITING]);
    expect(rows.find((r) => r.runId === WAITING)).toMatchObject({ status: 'awaiting_human', waiting: true, goal: 'add a --json flag to the export command' });
    await writeSampleRun(repo, { runId: '20260102-030405-dddddd' });
    const row = await s.next((e) => e.event === 'row' && (e.data as { runId: string; status: string }).runId === '20260102-030405-dddddd' && (e.data as { status: string }).status === 'succeeded');
    expect(row.data).toMatchObject({ tasks: { total: 2, completed: 2 } });
    // ... and is verified as `acia verify` would.
    await s.next((e) => e.event === 'row' && (e.data as { runId: string; verify: { state: string; ok?: boolean } }).runId === '20260102-030405-dddddd' && (e.data as { verify: { ok?: boolean } }).verify.ok === true);
    s.close();
  });

  it('never serves a run directory that is a link, nor a name that is not a run id', async () => {
    expect(server.hub.rows().map((r) => r.runId)).not.toContain('20260102-030405-cccccc');
    expect((await fetch(`${base}/api/runs/20260102-030405-cccccc/stream?${q()}`)).status).toBe(404);
    expect((await fetch(`${base}/api/runs/..%2F..%2Fetc/wiki?${q()}`)).status).toBe(404);
    expect((await fetch(`${base}/api/runs/${WAITING}/output/sha256:..%2F..%2Fledger.jsonl?${q()}`)).status).toBe(404);
  });

  it('serves a stored output as text with its excerpt, and the run page rendered from the ledger', async () => {
    const entries = server.hub.fold(WAITING)!;
    expect(entries.count).toBeGreaterThan(0);
    const s = await openStream(`${base}/api/runs/${WAITING}/stream?${q()}`);
    const all = (await s.next((e) => e.event === 'entries')).data as LedgerEntry[];
    s.close();
    const v = all.find((e) => e.type === 'VERIFICATION')!;
    const out = (await (await fetch(`${base}/api/runs/${WAITING}/output/${(v.data as { outputRef: string }).outputRef}?${q()}`)).json()) as { text: string; excerpt: string };
    expect(out.text).toBe('1 failed, 3 passed');
    const wiki = await (await fetch(`${base}/api/runs/${WAITING}/wiki?${q()}`)).text();
    expect(wiki).toContain('add a --json flag to the export command');
  });

  it('refuses what lacks the token or names another host or origin; an answer must fit the question', async () => {
    expect((await fetch(`${base}/`)).status).toBe(401);
    expect((await fetch(`${base}/?token=${token.slice(1)}`)).status).toBe(401);
    expect((await fetch(`${base}/api/info?${q()}`, { headers: { Origin: 'http://127.0.0.1:1' } })).status).toBe(403);
    const page = await fetch(`${base}/?${q()}`);
    expect(await page.text()).toContain(`/assets/app.js?token=${token}`);
    const post = (runId: string, body: unknown, headers: Record<string, string> = { Origin: base }) =>
      fetch(`${base}/api/runs/${runId}/actions/answer`, { method: 'POST', headers: { 'X-Acia-Token': token, 'Content-Type': 'application/json', ...headers }, body: JSON.stringify(body) });
    expect((await post(WAITING, { text: 'skip' }, {})).status).toBe(403);
    expect((await post(RUNNING, { text: 'skip' })).status).toBe(409);
    expect((await post(WAITING, { text: '   ' })).status).toBe(400);
    expect((await post(WAITING, { text: 'skip', extra: 1 })).status).toBe(400);
    expect((await fetch(`${base}/api/runs/${WAITING}/actions/delete-everything`, { method: 'POST', headers: { 'X-Acia-Token': token, Origin: base, 'Content-Type': 'application/json' }, body: '{}' })).status).toBe(404);
  });
});

describe('the token check', () => {
  it('matches only the same token, whatever the length or type of what is given', () => {
    const t = newToken();
    expect(t).toMatch(/^[\w-]{32}$/);
    expect(tokenMatches(t, t)).toBe(true);
    expect(tokenMatches(`${t}x`, t)).toBe(false);
    expect(tokenMatches('', t)).toBe(false);
    expect(tokenMatches(undefined, t)).toBe(false);
    expect(newToken()).not.toBe(t);
  });
});

describe('the run model', () => {
  it('folds a run once, entry by entry, and gathers each task\'s attempts, lanes, cost and tests', async () => {
    const repo = mkdtempSync(join(tmpdir(), 'acia-ui-model-'));
    mkdirSync(join(repo, '.acia'));
    const { runId } = await writeSampleRun(repo, { outcome: 'awaiting_human' });
    const store = localStore(repo);
    const { entries } = await store.read(runId, { seq: 0, offset: 0 });
    const fold = new RunFold();
    const activity = new ActivityIndex();
    fold.apply(entries);
    fold.apply(entries.slice(3)); // a batch sent again after a reconnect is not applied twice
    for (const e of entries) activity.apply(e);
    expect(fold.count).toBe(entries.length);
    expect(fold.row(runId)).toMatchObject({ status: 'awaiting_human', waiting: true, tasks: { total: 2, completed: 1, running: 1 }, tokens: 150 });
    expect(activity.lanes).toEqual(['t1', 't2']);
    expect(activity.tasks.get('t1')!.attempts).toEqual([expect.objectContaining({ attempt: 1, outcome: 'completed' })]);
    expect(activity.tasks.get('t2')!.testRuns).toHaveLength(1);
    // The run stopped to ask: the attempt it left open ends there.
    expect(activity.tasks.get('t2')!.attempts[0]!.outcome).toBe('interrupted');
  });
});
