// `acia cancel`: the local run through the library's cancelRun, a fleet run through its row.
import { resolve } from 'node:path';
import { cancelRun, type CancelRunResult } from '../app/cancel-run.js';
import { EXIT } from '../app/exit-codes.js';
import { AciaError } from '../core/errors.js';
import { cancelFleetRun, type FleetCancelResult } from '../fleet/cancel.js';
import { databaseUrl, openFleetClient } from '../fleet/fleet-db.js';
import type { CancelFlags } from './commands/cancel.js';

export async function cancelCommand(runId: string, f: CancelFlags): Promise<number> {
  const seconds = Number(f.timeout);
  if (!Number.isFinite(seconds) || seconds < 0) throw new AciaError('USAGE', `--timeout expects seconds (0 or more), got "${f.timeout}"`);
  const o = { wait: f.wait, timeoutMs: seconds * 1000 };
  let result: CancelRunResult | FleetCancelResult;
  let where: string;
  if (f.db !== undefined) {
    const fleet = await openFleetClient(databaseUrl(f.db, process.env));
    try {
      result = await cancelFleetRun(fleet, runId, o);
    } finally {
      await fleet.close();
    }
    where = ' --db';
  } else {
    result = await cancelRun({ repo: resolve(f.repo), runId, ...o });
    where = '';
  }
  if (f.json) process.stdout.write(`${JSON.stringify(result)}\n`);
  else process.stdout.write(`${describe(result, where)}\n`);
  switch (result.kind) {
    case 'cancelled':
      return EXIT.OK;
    case 'requested':
      return result.timedOut ? EXIT.FAILED : EXIT.OK;
    case 'ended_first':
      return EXIT.FAILED;
  }
}

function describe(r: CancelRunResult | FleetCancelResult, where: string): string {
  const see = `acia show ${r.runId}${where}`;
  switch (r.kind) {
    case 'cancelled':
      if ('beforeStart' in r && r.beforeStart) return `cancelled ${r.runId} before it started: it never runs`;
      return r.wasRunning ? `cancelled ${r.runId}: it stopped at its next safe point (see it: ${see})` : `cancelled ${r.runId}: nothing was running it; its ledger ends cancelled (see it: ${see})`;
    case 'requested':
      return r.timedOut
        ? `asked ${r.runId} to stop, and it has not stopped yet; it stops at its next safe point (watch it: acia logs ${r.runId}${where} --follow)`
        : `asked ${r.runId} to stop: it stops at its next safe point (watch it: acia logs ${r.runId}${where} --follow)`;
    case 'ended_first':
      return `${r.runId} ended ${r.reason} before the cancel took effect (see it: ${see})`;
  }
}
