// One task up close: what it was asked, its attempts, cost and tokens, the agent's turns (model calls,
// tool calls and results), its test runs with the failing excerpt, and its checkpoint's diff.
import { useState } from 'preact/hooks';
import type { ActivityIndex, EntryOf, LedgerEntry, RunState } from '../run-model.js';
import { getJson, getText, runPath } from './api.js';
import { DiffView } from './diff-view.js';
import { useFetched } from './fetched.js';
import { money, oneLine, shown } from './text.js';

interface Output {
  text: string;
  excerpt: string;
  truncated: boolean;
}

const TURNS_SHOWN = 150;

export function TaskPanel({ runId, taskId, state, activity, entries }: { runId: string; taskId: string; state: RunState; activity: ActivityIndex; entries: readonly LedgerEntry[] }) {
  const t = state.tasks.get(taskId);
  const a = activity.tasks.get(taskId);
  if (!t) return <p class="empty">No task {shown(taskId)} in this run.</p>;
  const input = Object.entries(t.spec.input).filter(([, v]) => typeof v === 'string' || Array.isArray(v));
  const mine = (a?.seqs ?? []).map((s) => entries[s]!).filter((e) => e !== undefined);
  const tests = (a?.testRuns ?? []).map((s) => entries[s]).filter((e): e is EntryOf<'VERIFICATION'> => e?.type === 'VERIFICATION');
  const checkpoints = (a?.checkpoints ?? []).map((s) => entries[s]).filter((e): e is EntryOf<'CHECKPOINT'> => e?.type === 'CHECKPOINT');
  return (
    <section class="task-panel" aria-labelledby="task-title" data-task-panel={taskId}>
      <h2 id="task-title">
        Task <span class="mono">{shown(taskId)}</span> <span class={`badge st-${t.status}`}>{t.status}</span>
      </h2>
      <p>
        <span class="mono">{shown(t.spec.capability)}</span>
        {t.spec.title ? ` — ${oneLine(t.spec.title, 200)}` : ''}
        {t.addedBy ? ` (added by the team: ${t.addedBy})` : ''}
        {` · attempt ${t.attempts}`}
      </p>
      <dl class="facts">
        <dt>cost</dt>
        <dd>{money(a?.costUsd ?? 0)}</dd>
        <dt>tokens</dt>
        <dd>{a ? `${a.tokens.input} in, ${a.tokens.output} out, ${a.tokens.cacheRead} cache read, ${a.tokens.cacheWrite} cache write` : '0'}</dd>
        <dt>model calls</dt>
        <dd>{a?.modelCalls ?? 0}</dd>
        <dt>tool calls</dt>
        <dd>{a?.toolCalls ?? 0}</dd>
      </dl>
      {t.lastError ? (
        <p class="error">
          {t.lastError.kind}: {shown(t.lastError.message)}
        </p>
      ) : null}
      {input.map(([k, v]) => (
        <details key={k} open={k === 'instructions' || k === 'failure'}>
          <summary>{k}</summary>
          <pre tabIndex={0} class="text">{shown(typeof v === 'string' ? v : JSON.stringify(v, null, 2)).slice(0, 8000)}</pre>
        </details>
      ))}
      <h3>Test runs</h3>
      {tests.length === 0 ? <p class="empty">None.</p> : tests.map((e) => <TestRun key={e.seq} runId={runId} entry={e} />)}
      <h3>Checkpoints</h3>
      {checkpoints.length === 0 ? <p class="empty">None.</p> : checkpoints.map((e, i) => <Checkpoint key={e.seq} runId={runId} entry={e} entries={entries} open={i === checkpoints.length - 1} />)}
      <h3>Turns and tool calls</h3>
      <Turns runId={runId} entries={mine} />
    </section>
  );
}

function TestRun({ runId, entry }: { runId: string; entry: EntryOf<'VERIFICATION'> }) {
  const v = entry.data;
  const [open, setOpen] = useState(!v.passed);
  const out = useFetched<Output>(open ? `out:${runId}:${v.outputRef}` : null, () => getJson<Output>(runPath(runId, `output/${v.outputRef}`)));
  return (
    <div class={`test-run ${v.passed ? 'passed' : 'failed'}`} data-test-seq={entry.seq} data-passed={String(v.passed)}>
      <p>
        <span class={`badge ${v.passed ? 'st-completed' : 'st-failed'}`}>{v.passed ? 'passed' : 'failed'}</span> <span class="mono">{shown(v.command)}</span> exit {String(v.exitCode)}
        {v.passedCount !== null ? `, ${v.passedCount} passed` : ''}
        {v.failedCount !== null ? `, ${v.failedCount} failed` : ''} ({v.source === 'qa_run' ? 'run by QA' : 'run by the team'})
        {v.cannotRun ? ` — ${shown(v.cannotRun)}` : ''}{' '}
        <button type="button" class="link" aria-expanded={open} onClick={() => setOpen(!open)}>
          {open ? 'hide output' : 'show output'}
        </button>
      </p>
      {open ? out.state === 'done' ? <pre tabIndex={0} class="text excerpt" aria-label={v.passed ? 'test output' : 'failing excerpt'}>{shown(out.value.excerpt)}</pre> : <p class="empty">{out.state === 'error' ? out.message : 'loading…'}</p> : null}
    </div>
  );
}

function Checkpoint({ runId, entry, entries, open: initiallyOpen }: { runId: string; entry: EntryOf<'CHECKPOINT'>; entries: readonly LedgerEntry[]; open: boolean }) {
  const c = entry.data;
  const [open, setOpen] = useState(initiallyOpen);
  // The attempt's base: the TASK_STARTED of the same attempt, else the commit's parent.
  const started = entries.find((e): e is EntryOf<'TASK_STARTED'> => e.type === 'TASK_STARTED' && e.data.taskId === c.taskId && e.data.attempt === c.attempt);
  const base = started?.data.baseCommit ?? '';
  const diff = useFetched<string | null>(open ? `diff:${runId}:${base}:${c.commit}` : null, () => getText(`${runPath(runId, 'diff')}?base=${encodeURIComponent(base)}&commit=${encodeURIComponent(c.commit)}`));
  return (
    <div class="checkpoint" data-checkpoint={c.commit}>
      <p>
        attempt {c.attempt}: <span class="mono">{shown(c.commit.slice(0, 12))}</span> on <span class="mono">{shown(c.branch)}</span>, {c.files.length} file(s){' '}
        <button type="button" class="link" aria-expanded={open} onClick={() => setOpen(!open)}>
          {open ? 'hide diff' : 'show diff'}
        </button>
      </p>
      {open ? diff.state === 'done' ? diff.value === null ? <p class="empty">This diff is not available here (a fleet run's commits live in its git remote).</p> : <DiffView diff={diff.value} /> : <p class="empty">{diff.state === 'error' ? diff.message : 'loading…'}</p> : null}
    </div>
  );
}

function Turns({ runId, entries }: { runId: string; entries: readonly LedgerEntry[] }) {
  const [all, setAll] = useState(false);
  const items = entries.filter((e) => e.type === 'LLM_CALL' || e.type === 'TOOL_CALL' || e.type === 'TOOL_RESULT' || e.type === 'TASK_STARTED' || e.type === 'TASK_FAILED' || e.type === 'TASK_COMPLETED' || e.type === 'RETRY_SCHEDULED');
  const shownItems = all ? items : items.slice(-TURNS_SHOWN);
  let turn = items.slice(0, items.length - shownItems.length).filter((e) => e.type === 'LLM_CALL').length;
  return (
    <>
      {shownItems.length < items.length ? (
        <button type="button" class="link" onClick={() => setAll(true)}>
          show the {items.length - shownItems.length} earlier steps
        </button>
      ) : null}
      <ol class="turns">
        {shownItems.map((e) => {
          if (e.type === 'LLM_CALL') turn++;
          return (
            <li key={e.seq} class={`step step-${e.type.toLowerCase()}`}>
              <Step runId={runId} entry={e} turn={turn} />
            </li>
          );
        })}
      </ol>
    </>
  );
}

function Step({ runId, entry, turn }: { runId: string; entry: LedgerEntry; turn: number }) {
  const [open, setOpen] = useState(false);
  switch (entry.type) {
    case 'LLM_CALL': {
      const d = entry.data;
      return (
        <>
          <p>
            <strong>turn {turn}</strong> · model {shown(d.model)} → {shown(d.stopReason)} · {d.usage.inputTokens + d.usage.cacheReadTokens + d.usage.cacheWriteTokens} in / {d.usage.outputTokens} out · {money(d.costUsd)} · {d.durationMs} ms{' '}
            <button type="button" class="link" aria-expanded={open} onClick={() => setOpen(!open)}>
              {open ? 'hide reply' : 'show reply'}
            </button>
          </p>
          {open ? <Reply runId={runId} refName={d.responseRef} /> : null}
        </>
      );
    }
    case 'TOOL_CALL': {
      const d = entry.data;
      return (
        <p>
          <span class="tool">{shown(d.name)}</span> <span class="mono">{oneLine(JSON.stringify(d.input) ?? '', 200)}</span>
        </p>
      );
    }
    case 'TOOL_RESULT': {
      const d = entry.data;
      return (
        <>
          <p>
            <span class={d.ok ? 'ok' : 'error'}>{d.ok ? '✓' : '✗'}</span> {shown(d.name)} {d.ok ? 'ok' : 'failed'} · {d.durationMs} ms{' '}
            <button type="button" class="link" aria-expanded={open} onClick={() => setOpen(!open)}>
              {open ? 'hide output' : 'show output'}
            </button>
          </p>
          {open ? <ToolOutput runId={runId} refName={d.outputRef} /> : null}
        </>
      );
    }
    case 'TASK_STARTED':
      return <p class="muted">attempt {entry.data.attempt} started</p>;
    case 'RETRY_SCHEDULED':
      return <p class="muted">retry scheduled: {shown(entry.data.reason)}</p>;
    case 'TASK_FAILED':
      return <p class="error">failed: {shown(entry.data.message)}</p>;
    case 'TASK_COMPLETED':
      return <p class="ok">completed: {shown(entry.data.summary)}</p>;
    default:
      return null;
  }
}

function ToolOutput({ runId, refName }: { runId: string; refName: string }) {
  const out = useFetched<Output>(`out:${runId}:${refName}`, () => getJson<Output>(runPath(runId, `output/${refName}`)));
  if (out.state !== 'done') return <p class="empty">{out.state === 'error' ? out.message : 'loading…'}</p>;
  return <pre tabIndex={0} class="text">{shown(out.value.text)}{out.value.truncated ? '\n… (cut)' : ''}</pre>;
}

/** The model's reply: its text blocks and the tool calls it asked for, as text. */
function Reply({ runId, refName }: { runId: string; refName: string }) {
  const out = useFetched<Output>(`out:${runId}:${refName}`, () => getJson<Output>(runPath(runId, `output/${refName}`)));
  if (out.state !== 'done') return <p class="empty">{out.state === 'error' ? out.message : 'loading…'}</p>;
  type Block = { type?: string; text?: string; name?: string; input?: unknown };
  let blocks: Block[] | null = null;
  try {
    const v = JSON.parse(out.value.text) as { content?: unknown };
    if (Array.isArray(v.content)) blocks = v.content as Block[];
  } catch {
    blocks = null;
  }
  if (blocks === null) return <pre tabIndex={0} class="text">{shown(out.value.text)}</pre>;
  return (
    <div class="reply">
      {blocks.map((b, i) => (b.type === 'text' ? <pre key={i} tabIndex={0} class="text">{shown(b.text ?? '')}</pre> : <p key={i} class="mono">{`${b.type ?? '?'} ${b.name ?? ''} ${oneLine(JSON.stringify(b.input ?? {}), 300)}`}</p>))}
    </div>
  );
}
