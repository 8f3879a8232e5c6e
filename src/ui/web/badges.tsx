// Status and verification badges, shared by the runs list and the run view.
import type { VerifyState } from '../run-hub.js';

const STATUS_CLASS: Record<string, string> = {
  succeeded: 'ok',
  running: 'run',
  awaiting_human: 'wait',
  budget_exhausted: 'warn',
  aborted: 'warn',
  cancelled: 'warn',
  failed: 'bad',
  verification_failed: 'bad',
  error: 'bad',
  empty: 'idle',
};

export function StatusBadge({ status }: { status: string }) {
  return <span class={`badge status-${STATUS_CLASS[status] ?? 'idle'}`}>{status.replace(/_/g, ' ')}</span>;
}

/** The result of the same check `acia verify` makes, or that it has not run yet. */
export function VerifyBadge({ verify }: { verify: VerifyState | undefined }) {
  if (verify === undefined || verify.state === 'pending') return <span class="badge verify-pending">verifying…</span>;
  if (verify.state === 'error') return <span class="badge verify-bad" title={verify.message}>not verified</span>;
  if (verify.ok) return <span class="badge verify-ok" title={`acia verify: ${verify.entries} entries, chain, blobs and anchor check out`}>verified</span>;
  const first = verify.problems[0];
  return (
    <span class="badge verify-bad" title={first ? `${first.code}${first.seq === null ? '' : ` at seq ${first.seq}`}: ${first.message}` : ''}>
      verify failed
    </span>
  );
}
