// The live state of the page: the runs list (rows from the server's hub) and the run being viewed, folded
// here from its entries with the same reducer the team uses (../run-model). Each stream sends what is
// new only; a dropped stream resumes from the last entry it delivered (Last-Event-ID).
import type { RunListRow } from '../run-hub.js';
import { ActivityIndex, RunFold, type LedgerEntry } from '../run-model.js';
import { runPath, stream } from './api.js';

type Listener = () => void;

/** Calls `fn` at most once per animation frame, however many batches arrive. */
function batched(fn: Listener): Listener {
  let pending = false;
  return () => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      fn();
    });
  };
}

export class LiveList {
  readonly rows = new Map<string, RunListRow>();
  connected = false;
  private readonly es: EventSource;

  constructor(onChange: Listener) {
    const changed = batched(onChange);
    this.es = stream('/api/runs/stream');
    this.es.addEventListener('rows', (ev) => {
      this.rows.clear();
      for (const r of JSON.parse((ev as MessageEvent<string>).data) as RunListRow[]) this.rows.set(r.runId, r);
      this.connected = true;
      changed();
    });
    this.es.addEventListener('row', (ev) => {
      const r = JSON.parse((ev as MessageEvent<string>).data) as RunListRow;
      this.rows.set(r.runId, r);
      changed();
    });
    this.es.onerror = () => {
      this.connected = false;
      changed();
    };
  }

  close(): void {
    this.es.close();
  }
}

export class LiveRun {
  readonly entries: LedgerEntry[] = [];
  readonly fold = new RunFold();
  readonly activity = new ActivityIndex();
  private readonly es: EventSource;

  constructor(
    readonly runId: string,
    onChange: Listener,
  ) {
    const changed = batched(onChange);
    this.es = stream(runPath(runId, 'stream'));
    this.es.addEventListener('entries', (ev) => {
      // The server read these with the ledger's parser (each payload checked against its type's schema) and
      // sends them as JSON; parsing them again here would put every schema into the page's bundle.
      // eslint-disable-next-line ledger/no-ledger-casts -- parsed on the server, see above
      const batch = JSON.parse((ev as MessageEvent<string>).data) as LedgerEntry[];
      for (const e of batch) {
        if (e.seq !== this.entries.length) continue;
        this.entries.push(e);
        this.fold.apply([e]);
        this.activity.apply(e);
      }
      changed();
    });
  }

  close(): void {
    this.es.close();
  }
}
