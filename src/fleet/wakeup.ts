// Task jobs wake the workers at once instead of waiting for their next poll: the orchestrator sends a
// NOTIFY after each task job, and every worker with task slots LISTENs and nudges its pg-boss task
// workers. Polling (every 0.5 s) stays the fallback, so a lost notification only costs that delay.
import type pg from 'pg';
import type { Fleet } from './fleet-db.js';

const CHANNEL = 'acia_task_jobs';

/** After sending a task job: any listening worker fetches it now. */
export async function announceTaskJob(fleet: Fleet): Promise<void> {
  await fleet.db.query(`NOTIFY ${CHANNEL}`).catch(() => undefined);
}

/** Nudges `wake` on every announcement until stopped; a lost connection falls back to polling. */
export async function listenForTaskJobs(fleet: Fleet, wake: () => void): Promise<{ stop(): Promise<void> }> {
  let client: pg.PoolClient | null = null;
  try {
    client = await fleet.db.connect();
    client.on('notification', () => wake());
    // A broken listener connection is not fatal: the workers keep polling.
    client.on('error', () => undefined);
    await client.query(`LISTEN ${CHANNEL}`);
  } catch {
    client?.release(true);
    client = null;
  }
  return {
    stop: async () => {
      if (!client) return;
      await client.query(`UNLISTEN ${CHANNEL}`).catch(() => undefined);
      client.release(true);
    },
  };
}
