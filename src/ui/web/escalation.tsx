// The team's question, answered from the page: the options the escalation offers as buttons, guidance
// as text. The answer goes to the server's `answer` action, which records it as
// `acia resume <run> --answer "..."` does (it runs that command), and the run goes on.
import { useState } from 'preact/hooks';
import type { LedgerEntry, PendingEscalation } from '../run-model.js';
import { postJson, runPath } from './api.js';
import { shown } from './text.js';

const OPTION_HELP: Record<string, string> = {
  retry: 'try again as it is',
  skip: 'go on without this task',
  approve: 'accept and go on',
  abort: 'end the run for good',
};

export function Escalation({ runId, esc, entries, onResult }: { runId: string; esc: PendingEscalation; entries: readonly LedgerEntry[]; onResult: (r: { ok: boolean; message: string }) => void }) {
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);
  const at = entries[esc.seq];
  const asked = at?.type === 'ESCALATION_REQUESTED' ? at.data : undefined;
  const send = async (answer: string): Promise<void> => {
    setBusy(true);
    try {
      const r = await postJson<{ ok: boolean; message?: string }>(runPath(runId, 'actions/answer'), { text: answer });
      // Once recorded, the question is answered and this section goes: the run page keeps the result.
      onResult(r.value.ok ? { ok: true, message: 'Answer recorded; the team goes on.' } : { ok: false, message: r.value.message ?? `refused (HTTP ${r.status})` });
    } catch (e) {
      onResult({ ok: false, message: e instanceof Error ? e.message : String(e) });
    } finally {
      setBusy(false);
    }
  };
  const actions = esc.options.filter((o) => o !== 'guidance');
  return (
    <section class="escalation" aria-labelledby="esc-title" data-escalation={esc.seq}>
      <h2 id="esc-title">The team needs you</h2>
      <p class="reason">
        {esc.reason.replace(/_/g, ' ')}
        {esc.taskId ? ` — task ${shown(esc.taskId)}` : ''}
      </p>
      <p class="question">{shown(esc.message)}</p>
      {asked?.lastFailure ? (
        <details>
          <summary>last failure</summary>
          <pre tabIndex={0} class="text">{shown(asked.lastFailure)}</pre>
        </details>
      ) : null}
      {esc.options.includes('guidance') ? (
        <form
          class="guidance"
          onSubmit={(ev) => {
            ev.preventDefault();
            if (text.trim() !== '') void send(text);
          }}
        >
          <label for="guidance">Guidance for the team</label>
          <textarea id="guidance" rows={3} value={text} onInput={(ev) => setText((ev.target as HTMLTextAreaElement).value)} disabled={busy} />
          <button type="submit" disabled={busy || text.trim() === ''}>
            Send guidance
          </button>
        </form>
      ) : null}
      <div class="options" role="group" aria-label="Answers">
        {actions.map((o) => (
          <button type="button" key={o} class={`answer answer-${o}`} disabled={busy} onClick={() => void send(o)} title={OPTION_HELP[o] ?? ''}>
            {o}
          </button>
        ))}
      </div>
      <p class="muted">
        The same as <code>acia resume {runId} --answer …</code> in a terminal.
      </p>
    </section>
  );
}
