// External Dev agents are bounded like ACIA's own: an agent that never answers is cancelled at the run's
// --max-minutes deadline and killed after the stated grace, the run ending budget_exhausted, and so is
// one that keeps retrying a call the budget refused; `acia cancel`
// reaches a working agent as session/cancel and ends its whole process group, the run ending cancelled;
// an agent that asks for authentication fails its task once (no retries, no re-plan) with a message naming
// it and what to set; and a best-of-N summary says why a candidate did not finish.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeAnthropicServer, type FakeServer } from '../../src/core/llm/fake-server.js';
import { loadScript } from '../../src/core/llm/script.js';
import { CANCEL_GRACE_MS } from '../../src/team/agents-acp/acp-dev-worker.js';
import { acia, ledgerOf, onlyRunId, tempDir } from './helpers.js';
import { ROOT, sampleRepo, startAcia } from './cli-helpers.js';
import { GOAL, happy, writeScript } from './acp-scripts.js';
import { sandboxAvailable } from '../helpers/sandbox-available.js';

const STUB = join(ROOT, 'tests', 'fixtures', 'acp', 'stub-agent.mjs');

let server: FakeServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

/** The happy scenario's turns for the given callers (renamed by `as`), at zero latency. */
async function serve(callers: RegExp, as: (caller: string) => string = (c) => c): Promise<FakeServer> {
  const turns = happy.turns.filter((t) => callers.test(t.caller)).map((t) => ({ ...t, caller: as(t.caller) }));
  return startFakeAnthropicServer({ script: await loadScript(writeScript(turns, 'limits-script')) });
}

function userConfig(devAgents: Record<string, string>): string {
  const xdg = tempDir('limits-xdg');
  mkdirSync(join(xdg, 'acia'));
  writeFileSync(join(xdg, 'acia', 'config.json'), JSON.stringify({ devAgents, testCommand: 'node run-tests.js' }));
  return xdg;
}

/** Processes whose command line holds `marker` (the stub agent of one test). */
function processesWith(marker: string): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker);
      } catch {
        return false;
      }
    })
    .map(Number);
}

const env = (xdg: string) => ({ ANTHROPIC_BASE_URL: server!.url, ANTHROPIC_API_KEY: 'sk-ant-test', HOME: tempDir('limits-home'), XDG_CONFIG_HOME: xdg });
const ts = (e: { ts: string }) => Date.parse(e.ts);

describe.skipIf(!sandboxAvailable())('external Dev agents within the run’s limits', () => {
  it('an agent that never answers is cancelled at --max-minutes and killed after the grace; the run ends budget_exhausted', async () => {
    server = await serve(/^pm$/);
    const repo = sampleRepo('acp-silent');
    const marker = `silent-${process.pid}-${Date.now()}`;
    const maxMinutes = 0.1;
    const r = await startAcia(['run', GOAL, '--repo', repo, '--dev-agent', 'hung', '--max-minutes', String(maxMinutes), '--model', 'anthropic:claude-sonnet-5-5'], {
      env: env(userConfig({ hung: `node ${STUB} silent ${marker}` })),
    }).done;
    expect(r.code, r.stderr + r.stdout).toBe(4);
    const entries = ledgerOf(repo, onlyRunId(repo));
    const last = entries.at(-1)!;
    expect(last.type).toBe('RUN_COMPLETED');
    expect((last.data as { reason: string }).reason).toBe('budget_exhausted');
    const exceeded = entries.find((e) => e.type === 'BUDGET_EXCEEDED');
    expect((exceeded?.data as { limit: string }).limit).toBe('minutes');
    // The agent's session started, and the run stopped within its minutes plus the grace (and the kill's
    // own 2 s): the deadline counts from the run's start, and nothing after it waited on the agent.
    const started = entries.find((e) => e.type === 'TASK_STARTED' && (e.data as { taskId: string }).taskId === 't1')!;
    expect(started).toBeDefined();
    const runStart = ts(entries[0]!);
    const bound = maxMinutes * 60_000 + CANCEL_GRACE_MS + 2_000;
    // Slack for writing the last entries on a loaded machine; an unbounded session would run until the test's timeout.
    expect(ts(exceeded!) - runStart, `stopped ${ts(exceeded!) - runStart} ms after the start`).toBeLessThan(bound + 10_000);
    expect(ts(exceeded!) - runStart).toBeGreaterThanOrEqual(maxMinutes * 60_000);
    // It was asked to cancel first (it ignores that), then killed: no process of it is left.
    const noted = entries.find((e) => e.type === 'TOOL_CALL' && e.actor === 'dev:t1');
    expect((noted?.data as { name: string; input: { title: string } } | undefined)?.input.title).toBe('cancel received');
    expect(processesWith(marker)).toEqual([]);
    // No other task was started after the deadline.
    expect(entries.filter((e) => e.type === 'TASK_STARTED').every((e) => ts(e) - runStart < maxMinutes * 60_000)).toBe(true);
  }, 120_000);

  it('acia cancel while an external agent works: it gets session/cancel, its process group is gone, the ledger ends cancelled and verifies', async () => {
    server = await serve(/^pm$/);
    const repo = sampleRepo('acp-cancel');
    const marker = `busy-${process.pid}-${Date.now()}`;
    const run = startAcia(['run', GOAL, '--repo', repo, '--dev-agent', 'busy', '--model', 'anthropic:claude-sonnet-5-5'], { env: env(userConfig({ busy: `node ${STUB} busy ${marker}` })) });
    // Working: the agent has the prompt (its "working" call is in the task's trace) and a child of its own running.
    const working = (): string | null => {
      const runs = join(repo, '.acia', 'runs');
      const id = existsSync(runs) ? readdirSync(runs)[0] : undefined;
      if (id === undefined || processesWith(`${marker}-child`).length === 0) return null;
      try {
        return ledgerOf(repo, id).some((e) => e.type === 'TOOL_CALL' && e.actor === 'dev:t1' && (e.data as { input: { title: string } }).input.title === 'working') ? id : null;
      } catch {
        return null; // a line still being written
      }
    };
    const deadline = Date.now() + 60_000;
    let runId: string | null = null;
    while ((runId = working()) === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(runId, run.output()).not.toBeNull();
    const cancel = acia(['cancel', runId!, '--repo', repo]);
    expect(cancel.code, cancel.stdout + cancel.stderr).toBe(0);
    const r = await run.done;
    expect(r.code, r.stderr + r.stdout).toBe(5);
    const entries = ledgerOf(repo, runId!);
    const titles = entries.filter((e) => e.type === 'TOOL_CALL' && e.actor === 'dev:t1').map((e) => (e.data as { input: { title: string } }).input.title);
    expect(titles).toEqual(['working', 'cancel received']);
    // The agent and the child it left running: its whole process group ended with the session.
    expect(processesWith(marker)).toEqual([]);
    expect(entries.at(-2)).toMatchObject({ type: 'CANCEL_REQUESTED', data: { via: 'local', wasRunning: true } });
    expect(entries.at(-1)).toMatchObject({ type: 'RUN_COMPLETED', data: { reason: 'cancelled' } });
    expect(entries.some((e) => e.type === 'MERGE' || e.type === 'TASK_COMPLETED')).toBe(false);
    const verify = acia(['verify', runId!, '--repo', repo]);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
  }, 120_000);

  it('an agent that keeps retrying a call the budget refused is cancelled at once and killed after the grace', async () => {
    server = await serve(/^pm$/);
    const repo = sampleRepo('acp-retry');
    const marker = `retry-${process.pid}-${Date.now()}`;
    // Room for the PM's call on a cheap model, not for the agent's (Sonnet, 8,192 tokens out at worst).
    const r = await startAcia(['run', GOAL, '--repo', repo, '--dev-agent', 'stubborn', '--max-cost-usd', '0.06', '--model', 'anthropic:claude-haiku-4-5'], {
      env: env(userConfig({ stubborn: `node ${STUB} retry ${marker}` })),
    }).done;
    expect(r.code, r.stderr + r.stdout).toBe(4);
    const entries = ledgerOf(repo, onlyRunId(repo));
    expect(entries.find((e) => e.type === 'BUDGET_EXCEEDED')?.data).toMatchObject({ limit: 'cost' });
    expect(entries.at(-1)).toMatchObject({ type: 'RUN_COMPLETED', data: { reason: 'budget_exhausted' } });
    // Stopped by the refusal, not by the attempt's time limit (6 × commandTimeoutS): within the grace and the kill's.
    const started = ts(entries.find((e) => e.type === 'TASK_STARTED' && (e.data as { taskId: string }).taskId === 't1')!);
    const exceeded = ts(entries.find((e) => e.type === 'BUDGET_EXCEEDED')!);
    expect(exceeded - started).toBeLessThan(CANCEL_GRACE_MS + 2_000 + 20_000);
    expect(server.requests.filter((q) => q.caller.startsWith('acp:'))).toHaveLength(0);
    expect(processesWith(marker)).toEqual([]);
  }, 120_000);

  it('an agent that asks for authentication fails its task once, with a message naming it and what to set', async () => {
    server = await serve(/^pm$/);
    const repo = sampleRepo('acp-auth');
    const r = await startAcia(['run', GOAL, '--repo', repo, '--dev-agent', 'locked', '--model', 'anthropic:claude-sonnet-5-5'], {
      env: env(userConfig({ locked: `node ${STUB} auth` })),
    }).done;
    expect(r.code, r.stderr + r.stdout).toBe(3);
    const entries = ledgerOf(repo, onlyRunId(repo));
    const of = (type: string) => entries.filter((e) => e.type === type);
    expect(of('TASK_STARTED').filter((e) => (e.data as { taskId: string }).taskId === 't1')).toHaveLength(1);
    expect(of('RETRY_SCHEDULED')).toHaveLength(0);
    expect(of('REPLAN_TRIGGERED')).toHaveLength(0);
    const failed = of('TASK_FAILED');
    expect(failed).toHaveLength(1);
    const message = (failed[0]!.data as { message: string }).message;
    expect(message).toMatch(/external agent locked asks for authentication \(Authentication required\)/);
    expect(message).toContain('ANTHROPIC_API_KEY');
    expect(message).toContain('devAgents.locked');
    expect(message).toContain('it offers: Stub API key');
    const escalation = of('ESCALATION_REQUESTED')[0]?.data as { reason: string; message: string };
    expect(escalation.reason).toBe('environment_broken');
    expect(r.stdout + r.stderr).toContain('asks for authentication');
  }, 120_000);

  it('best of N says why a candidate did not finish', async () => {
    // ACIA's own Dev agent's turns are the happy scenario's, under its candidate's caller.
    server = await serve(/^(pm|dev:t1|qa:)/, (c) => (c === 'dev:t1' ? 'dev:t1-acia' : c));
    const repo = sampleRepo('acp-reasons');
    const r = await startAcia(['run', GOAL, '--repo', repo, '--dev-agents', 'acia,locked', '--model', 'anthropic:claude-sonnet-5-5'], {
      env: env(userConfig({ locked: `node ${STUB} auth` })),
    }).done;
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const entries = ledgerOf(repo, onlyRunId(repo));
    const judged = entries.find((e) => e.type === 'CANDIDATES_JUDGED')!.data as { winner: string; rationale: string; candidates: { agent: string; notFinished?: string }[] };
    expect(judged.winner).toBe('acia');
    expect(judged.rationale).toMatch(/locked: did not finish \(auth_required: the external agent locked asks for authentication/);
    expect(judged.candidates.find((c) => c.agent === 'locked')?.notFinished).toMatch(/^auth_required: /);
    expect(judged.candidates.find((c) => c.agent === 'acia')?.notFinished).toBeUndefined();
  }, 120_000);
});
