// `acia say`: the local run's inbox through the library's sayToRun; a fleet run's table with --db.
import { resolve } from 'node:path';
import { sayToRun, type SayResult } from '../app/say-run.js';
import { databaseUrl, openFleetClient } from '../fleet/fleet-db.js';
import { sayToFleetRun } from '../fleet/messages.js';
import { EXIT } from '../app/exit-codes.js';
import { MessageMode } from '../core/contain/message-request.js';
import { AciaError } from '../core/errors.js';
import type { SayFlags } from './commands/say.js';

export async function sayCommand(runId: string, message: string, f: SayFlags): Promise<number> {
  const mode = MessageMode.safeParse(f.mode);
  if (!mode.success) throw new AciaError('USAGE', `--mode expects queue, steer or interrupt, got "${f.mode}"`);
  const o = { runId, text: message, mode: mode.data, ...(f.task === undefined ? {} : { task: f.task }) };
  let r: SayResult;
  if (f.db !== undefined) {
    const fleet = await openFleetClient(databaseUrl(f.db, process.env));
    try {
      r = await sayToFleetRun(fleet, o);
    } finally {
      await fleet.close();
    }
  } else {
    r = await sayToRun({ repo: resolve(f.repo), ...o });
  }
  const where = f.db !== undefined ? ' --db' : '';
  if (f.json) process.stdout.write(`${JSON.stringify(r)}\n`);
  else process.stdout.write(`sent ${r.id} to ${r.to === 'pm' ? 'the PM' : `task ${r.to}`} of ${r.runId} (${r.mode}); it is recorded when the run takes it in (see it: acia show ${r.runId}${where})\n`);
  return EXIT.OK;
}
