// One run: its goal and state, the question it waits on, its budget, the plan as a graph, the timeline,
// the selected task up close, and what it left for the next run (lessons, its wiki page). Live: the
// entries stream in and the view follows.
import { useEffect, useMemo, useState } from 'preact/hooks';
import type { RunListRow } from '../run-hub.js';
import { budgetOf, openEscalationOf, plansOf, type LedgerEntry } from '../run-model.js';
import { getText, runPath } from './api.js';
import { StatusBadge, VerifyBadge } from './badges.js';
import { Escalation } from './escalation.js';
import { useFetched } from './fetched.js';
import { LiveRun } from './live.js';
import { PlanGraph, type Link } from './plan-graph.js';
import { TaskPanel } from './task-panel.js';
import { Timeline } from './timeline.js';
import { duration, money, oneLine, shortTime, shown } from './text.js';

function select(runId: string, taskId: string): void {
  location.hash = `#/run/${encodeURIComponent(runId)}/task/${encodeURIComponent(taskId)}`;
}

export function RunPage({ runId, taskId, row }: { runId: string; taskId: string | null; row: RunListRow | null }) {
  const [, setTick] = useState(0);
  const live = useMemo(() => new LiveRun(runId, () => setTick((n) => n + 1)), [runId]);
  useEffect(() => () => live.close(), [live]);
  const [now, setNow] = useState(() => new Date().toISOString());
  const s = live.fold.state;
  const running = s.completed === null && live.entries.length > 0;
  useEffect(() => {
    if (!running) return;
    const t = setInterval(() => setNow(new Date().toISOString()), 1000);
    return () => clearInterval(t);
  }, [running]);
  const [planTab, setPlanTab] = useState<string | null>(null);
  const [notice, setNotice] = useState<{ ok: boolean; message: string } | null>(null);
  if (live.entries.length === 0) return <p class="loading">Loading run {runId}…</p>;

  const end = running ? now : (live.fold.lastTs ?? now);
  const elapsed = Date.parse(end) - Date.parse(live.fold.firstTs ?? end);
  const esc = openEscalationOf(s);
  const { executed, alternatives } = plansOf(s);
  const plans = [...(executed ? [executed] : []), ...alternatives];
  const shownPlan = plans.find((p) => p.id === planTab) ?? plans[0] ?? null;
  const selected = taskId ?? [...s.tasks.entries()].find(([, t]) => t.status === 'running' || t.status === 'failed')?.[0] ?? null;
  const planned = live.entries.find((e) => e.type === 'PLAN_SELECTED')?.ts ?? null;
  const status = row?.status ?? (s.completed?.reason ?? 'running');
  return (
    <article class="run" data-run={runId} data-status={s.completed?.reason ?? 'running'} data-entries={live.entries.length}>
      <div class="bar">
        <h1>
          Run <span class="mono">{runId}</span>
        </h1>
        <StatusBadge status={status} />
        <VerifyBadge verify={row?.verify} />
      </div>
      <p class="goal-text" aria-label="goal">
        {shown(s.started?.goal.intent ?? '')}
      </p>
      {s.goalAmendments.map((g, i) => (
        <p key={i} class="muted">
          amended: {shown(g)}
        </p>
      ))}
      <dl class="facts">
        <dt>branch</dt>
        <dd class="mono">{shown(s.started?.runBranch ?? '—')}</dd>
        <dt>model</dt>
        <dd class="mono">{shown(s.started?.model ?? '—')}</dd>
        <dt>started</dt>
        <dd>{shortTime(live.fold.firstTs)}</dd>
        <dt>duration</dt>
        <dd>{duration(s.completed?.durationMs ?? elapsed)}</dd>
        <dt>cost</dt>
        <dd>
          {s.costKnown ? money(s.costUsd) : 'unknown'}, {s.tokens} tokens, {s.modelCalls} model calls
        </dd>
        <dt>entries</dt>
        <dd>{live.entries.length}</dd>
      </dl>
      {s.completed ? (
        <p class={`outcome ${s.completed.reason === 'succeeded' ? 'ok' : s.completed.reason === 'awaiting_human' || s.completed.reason === 'budget_exhausted' ? 'wait' : 'error'}`}>
          <strong>{s.completed.reason.replace(/_/g, ' ')}</strong>: {shown(s.completed.message)}
        </p>
      ) : null}
      <p class={`notice ${notice === null ? '' : notice.ok ? 'ok' : 'error'}`} role="status">
        {notice === null ? '' : shown(notice.message)}
      </p>
      {esc ? <Escalation key={esc.seq} runId={runId} esc={esc} entries={live.entries} onResult={setNotice} /> : null}
      <Budget lines={budgetOf(s, elapsed)} />
      <section aria-labelledby="plan-title">
        <h2 id="plan-title">Plan</h2>
        {shownPlan === null ? (
          <p class="empty">No plan yet: the PM is planning.</p>
        ) : (
          <>
            <div class="tabs" role="group" aria-label="Plans">
              {plans.map((p) => (
                <button type="button" key={p.id} class={p.id === shownPlan.id ? 'chip on' : 'chip'} aria-pressed={p.id === shownPlan.id} onClick={() => setPlanTab(p.id)}>
                  {shown(p.id)} {p === executed ? '(running)' : '(alternative, not run)'}
                </button>
              ))}
            </div>
            <p class="muted">{oneLine(shownPlan.rationale, 300)}</p>
            <div class="graph-wrap" tabIndex={0} role="region" aria-label="plan graph">
              <PlanGraph plan={shownPlan} state={s} links={linksOf(live.entries)} executed={shownPlan === executed} selected={selected} onSelect={(id) => select(runId, id)} />
            </div>
            <Legend />
          </>
        )}
      </section>
      <section aria-labelledby="tasks-title">
        <h2 id="tasks-title">Tasks</h2>
        <ul class="task-list">
          {[...s.tasks.entries()].map(([id, t]) => (
            <li key={id} data-task-row={id} data-status={t.status}>
              <a href={`#/run/${encodeURIComponent(runId)}/task/${encodeURIComponent(id)}`} aria-current={id === selected ? 'true' : undefined}>
                <span class={`dot st-${t.status}`} aria-hidden="true" />
                <span class="mono">{shown(id)}</span> {shown(t.spec.capability)} — {t.status}
                {t.attempts > 1 ? ` (attempt ${t.attempts})` : ''}
                {t.addedBy ? ` · added: ${t.addedBy}` : ''}
              </a>
            </li>
          ))}
        </ul>
      </section>
      <section aria-labelledby="timeline-title">
        <h2 id="timeline-title">Timeline</h2>
        <Timeline activity={live.activity} start={live.fold.firstTs} end={end} planned={planned} selected={selected} onSelect={(id) => select(runId, id)} />
      </section>
      {selected ? <TaskPanel runId={runId} taskId={selected} state={s} activity={live.activity} entries={live.entries} /> : null}
      <Lessons runId={runId} entries={live.entries} lessons={s.lessons} done={s.completed !== null} />
    </article>
  );
}

/** Each task the team added, tied to the task it came from (a fix to the failed check, a merge fix to its task). */
function linksOf(entries: readonly LedgerEntry[]): Link[] {
  return entries.flatMap((e) => (e.type === 'TASK_ADDED' && e.data.parent !== undefined ? [{ from: e.data.parent, to: e.data.task.id, label: e.data.reason }] : []));
}

function Budget({ lines }: { lines: ReturnType<typeof budgetOf> }) {
  const fmt = (what: string, n: number) => (what === 'cost' ? money(n) : what === 'minutes' ? n.toFixed(1) : String(Math.round(n)));
  return (
    <section aria-labelledby="budget-title">
      <h2 id="budget-title">Budget</h2>
      <ul class="budget">
        {lines.map((l) => (
          <li key={l.what}>
            <span class="budget-what">{l.what}</span>
            {l.max === null ? (
              <span>
                {fmt(l.what, l.spent)} <span class="muted">(no limit)</span>
              </span>
            ) : (
              <>
                <meter min={0} max={l.max} value={Math.min(l.spent, l.max)} high={l.max * 0.8} aria-label={`${l.what} spent of its limit`} />
                <span>
                  {fmt(l.what, l.spent)} of {fmt(l.what, l.max)}
                </span>
              </>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}

function Legend() {
  return (
    <ul class="legend" aria-label="legend">
      {['pending', 'running', 'completed', 'failed', 'skipped'].map((st) => (
        <li key={st}>
          <span class={`dot st-${st}`} aria-hidden="true" /> {st}
        </li>
      ))}
      <li>
        <span class="line edge-plain" aria-hidden="true" /> order
      </li>
      <li>
        <span class="line edge-guard" aria-hidden="true" /> guard
      </li>
      <li>
        <span class="line edge-error" aria-hidden="true" /> on error
      </li>
      <li>
        <span class="line edge-added" aria-hidden="true" /> added by the team
      </li>
    </ul>
  );
}

function Lessons({ runId, entries, lessons, done }: { runId: string; entries: readonly LedgerEntry[]; lessons: { taskId: string; text: string }[]; done: boolean }) {
  const [open, setOpen] = useState(false);
  const wiki = useFetched<string | null>(open ? `wiki:${runId}:${entries.length}` : null, () => getText(runPath(runId, 'wiki')));
  const memory = entries.flatMap((e) => (e.type === 'MEMORY_UPDATED' ? [e.data] : []));
  return (
    <section aria-labelledby="memory-title">
      <h2 id="memory-title">What it left for the next run</h2>
      {lessons.length === 0 ? (
        <p class="empty">No lessons{done ? '' : ' yet'}.</p>
      ) : (
        <ul class="lessons">
          {lessons.map((l, i) => (
            <li key={i}>
              <span class="mono">{shown(l.taskId)}</span>: {shown(l.text)}
            </li>
          ))}
        </ul>
      )}
      {memory.map((m, i) => (
        <p key={i} class="muted">
          memory page {shown(m.page)} updated: {shown(m.reason)}
        </p>
      ))}
      <button type="button" class="link" aria-expanded={open} onClick={() => setOpen(!open)}>
        {open ? 'hide the wiki page' : 'show the wiki page'}
      </button>
      {open ? wiki.state === 'done' ? <pre tabIndex={0} class="text wiki">{shown(wiki.value ?? '')}</pre> : <p class="empty">{wiki.state === 'error' ? wiki.message : 'loading…'}</p> : null}
    </section>
  );
}
