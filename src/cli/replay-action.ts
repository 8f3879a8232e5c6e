// The work behind `acia replay`.
import { forTerminal } from '../core/text/terminal.js';
import * as nodeFs from 'node:fs';
import { loadConfig } from '../core/config/load.js';
import { randomIds, type Clock } from '../core/acm/ids.js';
import { readMemory } from '../core/wiki/memory.js';
import { replayRun } from '../team/replay.js';
import type { CommandRunner } from '../core/tools/types.js';
import { AciaError } from '../core/errors.js';
import { staticDeps } from './build-deps.js';
import { readEntries, resolveRun } from './runs-action.js';

/** Replay never runs a command; a call here means the replay tried a side effect. */
const refuseRunner: CommandRunner = {
  run: () => Promise.reject(new AciaError('REPLAY_DIVERGED', 'replay tried to run a command')),
};

export async function replayCommand(dir: string, runId: string, json: boolean): Promise<number> {
  const { repo } = await resolveRun(dir, runId);
  const entries = await readEntries(`${repo}/.acia/runs/${runId}`);
  const { config } = loadConfig({ repo, env: process.env, flags: {} });
  const frozen: Clock = { now: () => new Date(entries[0]?.ts ?? 0) };
  const report = await replayRun(
    {
      ...staticDeps(config, () => undefined),
      model: '',
      modelSpec: '',
      clock: frozen,
      ids: randomIds,
      runnerFor: () => refuseRunner,
      fs: nodeFs,
      readMemory: async (r) => (await readMemory(r)).map((p) => ({ page: p.page, content: p.content })),
    },
    repo,
    runId,
    entries,
  );
  if (json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else if (report.identical) process.stdout.write(`replay of ${runId}: identical (${report.recordedEntries} recorded entries, ${report.replayedEntries} replayed)\n`);
  else {
    const d = report.divergence!;
    process.stdout.write(`replay of ${runId}: DIVERGED for ${forTerminal(d.actor)} at its entry ${d.index}: ${forTerminal(d.reason)}\n`);
    if (d.recorded) process.stdout.write(`  recorded seq ${d.recorded.seq}: ${d.recorded.type} ${JSON.stringify(d.recorded.data).slice(0, 300)}\n`);
    if (d.replayed) process.stdout.write(`  replayed:     ${d.replayed.type} ${JSON.stringify(d.replayed.data).slice(0, 300)}\n`);
    if (report.error) process.stdout.write(`  the replay stopped: ${forTerminal(report.error)}\n`);
  }
  return report.identical ? 0 : 1;
}
