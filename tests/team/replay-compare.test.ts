// The replay's comparison of decisions (src/team/replay.ts `compare`): reads that ran side by side land in
// completion order, which a loaded machine changes from run to run; the comparison must not.
import { describe, expect, it } from 'vitest';
import type { LedgerEntry } from '../../src/core/ledger/entry.js';
import { compare } from '../../src/team/replay.js';

function entries(order: ('a' | 'b')[]): LedgerEntry[] {
  const base = { runId: 'r', ts: '2026-01-01T00:00:00.000Z', prevHash: '', hash: '' };
  const call = (id: string) => ({ type: 'TOOL_CALL', data: { taskId: 'plan', toolUseId: id, name: 'read_file', input: { path: id } } });
  const pair = (id: string) => [
    { type: 'TOOL_RESULT', data: { taskId: 'plan', toolUseId: id, name: 'read_file', ok: true, outputRef: `sha256:${id}`, durationMs: 1 } },
    { type: 'CONTEXT_INTERNALIZED', data: { taskId: 'plan', artifacts: [{ uri: `read_file:${id}`, tool: 'read_file', toolUseId: id, input: { path: id }, digest: `sha256:${id}`, scope: 'internal' }], rationale: 'read' } },
  ];
  const raw = [call('a'), call('b'), ...order.flatMap(pair)];
  return raw.map((e, i) => ({ ...base, seq: i + 1, actor: 'pm', ...e }) as unknown as LedgerEntry);
}

describe('replay comparison', () => {
  it('compares side-by-side reads and their internal-context records in call order, whichever finished first', () => {
    expect(compare(entries(['a', 'b']), entries(['b', 'a']), 'r')).toMatchObject({ identical: true });
  });

  it('still sees a read whose recorded content differs', () => {
    const changed = entries(['b', 'a']);
    const last = changed.at(-1) as unknown as { data: { artifacts: { digest: string }[] } };
    last.data.artifacts[0]!.digest = 'sha256:other';
    expect(compare(entries(['a', 'b']), changed, 'r')).toMatchObject({ identical: false, divergence: { reason: 'CONTEXT_INTERNALIZED differs' } });
  });
});
