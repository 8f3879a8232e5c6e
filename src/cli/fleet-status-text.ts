// `acia fleet status` as text: one block per part of the fleet, every name from the database shown with
// terminal controls stripped.
import { forTerminal } from '../core/text/terminal.js';
import type { FleetStatus } from '../fleet/status.js';

const usd = (n: number | null) => (n === null ? 'no limit' : `$${n.toFixed(4)}`);
const mb = (n: number | null) => (n === null ? '? MB' : `${(n / 1024 / 1024).toFixed(1)} MB`);

export function renderFleetStatus(st: FleetStatus): string {
  const d = st.database;
  const lines = [
    `database: PostgreSQL ${forTerminal(d.version)}, ${d.latencyMs} ms round trip, ${d.connections}/${d.maxConnections} connections, ${mb(d.sizeBytes)}, up since ${d.startedAt}`,
    `  you are ${forTerminal(d.role)}${d.owner ? ' (the fleet’s owner: every run, the queue and the budgets)' : ' (a submitter: your own runs only)'}`,
    `runs: ${Object.entries(st.runs).map(([k, v]) => `${v} ${k}`).join(', ') || 'none'}`,
    `queue: ${st.queued} run(s) waiting for a worker`,
    'leases:',
    ...st.leases.map((l) => `  ${l.runId}  held by ${forTerminal(l.worker)} since ${l.since ?? '?'}${l.heldSeconds === null ? '' : ` (${l.heldSeconds}s)`}`),
  ];
  if (st.leases.length === 0) lines.push('  none');
  const t = st.taskJobs;
  if (t === null) lines.push('task jobs: not visible to a submitter’s role');
  else {
    lines.push(`task jobs: ${t.queued} queued, ${t.active} active, ${t.retrying} retrying, ${t.failed} failed, ${t.expired} expired, ${t.cancelled} cancelled, ${t.completed} completed`);
    for (const s of t.stuck) lines.push(`  stuck: ${s.jobId} (${s.runId} task ${forTerminal(s.taskId)}) active ${s.activeSeconds}s on ${forTerminal(s.worker ?? 'no worker')}, which stopped answering`);
  }
  lines.push(`workers (gone and stopped ones are forgotten ${st.forgetAfterHours} h after their last heartbeat):`);
  for (const w of st.workers) {
    const outage = w.lastOutage === null ? '' : `, last outage ${w.lastOutage.seconds} s at ${w.lastOutage.at}`;
    lines.push(`  ${forTerminal(w.name).padEnd(24)} ${w.state.padEnd(7)} ${String(w.running).padStart(2)}/${w.concurrency} running, ${w.tasks} task(s), last seen ${w.lastSeenSeconds}s ago, ${w.dbErrors} db error(s)${outage}`);
  }
  if (st.workers.length === 0) lines.push('  none');
  if (st.budgets === null) lines.push('budgets: not visible to a submitter’s role');
  else {
    lines.push('budgets (unfinished runs):');
    for (const b of st.budgets) {
      const tokens = `${b.spentTokens}${b.maxTokens === null ? '' : ` of ${b.maxTokens}`} tokens`;
      lines.push(`  ${b.runId}  ${b.status.padEnd(16)} ${usd(b.spentUsd)} of ${usd(b.maxCostUsd)} spent, ${usd(b.reservedUsd)} reserved by ${b.callsInFlight} call(s) in flight; ${tokens}`);
    }
    if (st.budgets.length === 0) lines.push('  none');
  }
  return lines.join('\n');
}
