// The runs list: every run with its status, goal, outcome, cost, duration, branch and verification,
// newest first, filtered by status, updated live.
import { useState } from 'preact/hooks';
import type { RunListRow } from '../run-hub.js';
import { StatusBadge, VerifyBadge } from './badges.js';
import { duration, money, oneLine } from './text.js';

const FILTERS: { id: string; label: string; test: (r: RunListRow) => boolean }[] = [
  { id: 'all', label: 'All', test: () => true },
  { id: 'running', label: 'Running', test: (r) => r.status === 'running' },
  { id: 'waiting', label: 'Waiting for you', test: (r) => r.waiting || r.status === 'awaiting_human' || r.status === 'budget_exhausted' },
  { id: 'succeeded', label: 'Succeeded', test: (r) => r.status === 'succeeded' },
  { id: 'failed', label: 'Failed', test: (r) => ['failed', 'verification_failed', 'error', 'aborted'].includes(r.status) },
];

export function RunsPage({ rows }: { rows: RunListRow[] }) {
  const [filter, setFilter] = useState('all');
  const test = FILTERS.find((f) => f.id === filter)?.test ?? (() => true);
  const shownRows = rows.filter(test).sort((a, b) => (a.runId < b.runId ? 1 : a.runId > b.runId ? -1 : 0));
  return (
    <section aria-labelledby="runs-title">
      <div class="bar">
        <h1 id="runs-title">Runs</h1>
        <div class="filters" role="group" aria-label="Filter by status">
          {FILTERS.map((f) => (
            <button type="button" key={f.id} class={filter === f.id ? 'chip on' : 'chip'} aria-pressed={filter === f.id} onClick={() => setFilter(f.id)}>
              {f.label} ({rows.filter(f.test).length})
            </button>
          ))}
        </div>
      </div>
      {shownRows.length === 0 ? (
        <p class="empty">{rows.length === 0 ? 'No runs yet: start one with acia run "<task>" (or acia demo); it appears here as it starts.' : 'No run matches this filter.'}</p>
      ) : (
        <table class="runs">
          <thead>
            <tr>
              <th scope="col">Run</th>
              <th scope="col">Status</th>
              <th scope="col">Goal</th>
              <th scope="col">Outcome</th>
              <th scope="col" class="num">Cost</th>
              <th scope="col" class="num">Duration</th>
              <th scope="col">Branch</th>
              <th scope="col">Ledger</th>
            </tr>
          </thead>
          <tbody>
            {shownRows.map((r) => (
              <tr key={r.runId} data-run={r.runId} data-status={r.status}>
                <td>
                  <a href={`#/run/${encodeURIComponent(r.runId)}`} class="mono">
                    {r.runId}
                  </a>
                </td>
                <td>
                  <StatusBadge status={r.status} />
                  {r.waiting ? <span class="badge status-wait">question</span> : null}
                </td>
                <td class="goal">{r.error ? <span class="error">{oneLine(r.error)}</span> : oneLine(r.goal, 120)}</td>
                <td class="outcome-cell">{r.outcome === null ? progress(r) : oneLine(r.outcome, 120)}</td>
                <td class="num">{money(r.costUsd)}</td>
                <td class="num">{duration(r.durationMs)}</td>
                <td class="mono">{r.branch === null ? '—' : oneLine(r.branch, 60)}</td>
                <td>
                  <VerifyBadge verify={r.verify} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function progress(r: RunListRow): string {
  const t = r.tasks;
  if (t.total === 0) return 'planning';
  return `${t.completed}/${t.total} tasks done${t.running > 0 ? `, ${t.running} running` : ''}${t.failed > 0 ? `, ${t.failed} failed` : ''}`;
}
