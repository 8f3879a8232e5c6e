// The human checkpoint after fixes ran out, through the built CLI: the escalate demo (scripted model
// served by the fake Anthropic server, real SDK) stops at the question; each answer is then given with
// `acia resume --answer` (which resumes the demo offline, with no API key) or typed on a terminal.
// What an answer makes the team do without the CLI's part (skip's outcome) is in tests/team/executor.test.ts.
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { LedgerEntry } from '../../src/core/ledger/entry.js';
import { CLI, acia, git, ledgerOf, onlyRunId, tempDir, testsPassOn } from './helpers.js';
import { cliEnv, expectCleanError } from './cli-helpers.js';

const GUIDANCE = 'Capitalise every word, not only the first letter of the text';

function escalated(prefix: string): { repo: string; runId: string; stdout: string } {
  const repo = join(tempDir(prefix), 'repo');
  const r = acia(['demo', '--scenario', 'escalate', '--dir', repo, '--quiet']);
  expect(r.code, r.stderr).toBe(3);
  return { repo, runId: onlyRunId(repo), stdout: r.stdout };
}

/** Runs a command exactly as ACIA printed it, through a shell, with `acia` standing for the built CLI. */
function runPrinted(line: string, env: Record<string, string> = {}): { code: number; stdout: string; stderr: string } {
  expect(line.startsWith('acia ')).toBe(true);
  const r = spawnSync('sh', ['-c', `'${process.execPath}' '${CLI}' ${line.slice('acia '.length)}`], { env: cliEnv(env), encoding: 'utf8', timeout: 120_000 });
  return { code: r.status ?? 1, stdout: r.stdout, stderr: r.stderr };
}

function printedNext(stdout: string, pattern: RegExp): string {
  const line = stdout
    .split('\n')
    .map((l) => l.replace(/^\s+(next|or)\s+/, '').replace(/\s+\(.*\)$/, ''))
    .find((l) => pattern.test(l));
  expect(line, stdout).toBeDefined();
  return line!;
}

/** The text of the first model request a caller made (the task message is in it). */
function promptOf(repo: string, runId: string, entries: LedgerEntry[], caller: string): string {
  const call = entries.find((e) => e.type === 'LLM_CALL' && (e.data as { caller: string }).caller === caller);
  expect(call, `no model call by ${caller}`).toBeDefined();
  const ref = (call!.data as { requestHash: string }).requestHash.replace(/^sha256:/, '');
  return readFileSync(join(repo, '.acia', 'runs', runId, 'blobs', ref), 'utf8');
}

function expectFinal(entries: LedgerEntry[], reason: string): void {
  expect(entries.at(-1)).toMatchObject({ type: 'RUN_COMPLETED', data: { reason } });
}

function expectNoWorktrees(repo: string, runId: string): void {
  expect(git(repo, 'worktree', 'list').split('\n')).toHaveLength(1);
  git(repo, 'checkout', '-q', `acia/${runId}`);
  git(repo, 'checkout', '-q', 'main');
}

describe('after fixes ran out, answered with --answer', () => {
  it('offers exactly the answers that apply, each as a command that runs as printed', () => {
    const { repo, runId, stdout } = escalated('ck-offer');
    const esc = ledgerOf(repo, runId).find((e) => e.type === 'ESCALATION_REQUESTED')!;
    expect(esc.data).toMatchObject({ reason: 'fixes_exhausted', options: ['guidance', 'retry', 'skip', 'abort'] });
    expect(stdout).toContain(`--repo ${repo}`);
    expect(stdout).not.toMatch(/--answer approve/);
    // approve does not apply to this question: refused before anything is recorded
    const before = ledgerOf(repo, runId).length;
    expectCleanError(acia(['resume', runId, '--repo', repo, '--answer', 'approve']), 2, /does not take "approve"; it takes guidance text or one of: retry, skip, abort/);
    expect(ledgerOf(repo, runId)).toHaveLength(before);

    // retry, run exactly as printed: one more fix iteration, without guidance
    const r = runPrinted(printedNext(stdout, /--answer retry$/));
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const entries = ledgerOf(repo, runId);
    expect(entries.find((e) => e.type === 'HUMAN_RESPONSE')).toMatchObject({ actor: 'human', data: { action: 'retry' } });
    const added = entries.filter((e) => e.type === 'TASK_ADDED').map((e) => (e.data as { task: { id: string } }).task.id);
    expect(added).toEqual(['t2-fix1', 't2-r1', 't2-fix2', 't2-r2']);
    expect(promptOf(repo, runId, entries, 'dev:t2-fix2')).not.toContain('Guidance from the human');
    expectFinal(entries, 'succeeded');
    expect(testsPassOn(repo, `acia/${runId}`)).toBe(true);
  });

  it('guidance starts another fix iteration that receives it; resume without an id, and without a key, picks this run', () => {
    const { repo, runId } = escalated('ck-guidance');
    const r = acia(['resume', '--repo', repo, '--answer', GUIDANCE]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^run ${runId}: succeeded`));
    const entries = ledgerOf(repo, runId);
    expect(entries.find((e) => e.type === 'HUMAN_RESPONSE')?.data).toEqual({ escalationSeq: expect.any(Number) as number, action: 'guidance', text: GUIDANCE });
    const fix = entries.find((e) => e.type === 'TASK_ADDED' && (e.data as { task: { id: string } }).task.id === 't2-fix2')!;
    expect(JSON.stringify(fix.data)).toContain(GUIDANCE);
    expect(promptOf(repo, runId, entries, 'dev:t2-fix2')).toContain(`Guidance from the human: ${GUIDANCE}`);
    expectFinal(entries, 'succeeded');
    expectNoWorktrees(repo, runId);
    expect(acia(['verify', runId, '--repo', repo]).code).toBe(0);
  });

  it('abort ends the run for good: no resume hint, and resuming it is refused', () => {
    const { repo, runId } = escalated('ck-abort');
    const r = acia(['resume', runId, '--repo', repo, '--answer', 'abort']);
    expect(r.code, r.stderr).toBe(130);
    expect(r.stdout).not.toContain('acia resume');
    expect(r.stdout).toContain('cannot be resumed');
    const entries = ledgerOf(repo, runId);
    expect(entries.find((e) => e.type === 'HUMAN_RESPONSE')?.data).toMatchObject({ action: 'abort' });
    expectFinal(entries, 'aborted');
    expectCleanError(acia(['resume', runId, '--repo', repo]), 2, new RegExp(`run ${runId} is finished \\(a human aborted it\\)`));
    expectCleanError(acia(['resume', '--repo', repo]), 2, new RegExp(`no run in .* can go on: the latest, ${runId}, is finished \\(a human aborted it\\)`));
    expect(ledgerOf(repo, runId)).toHaveLength(entries.length);
    expectNoWorktrees(repo, runId);
  });
});

describe('a budget stop', () => {
  it('says how to go on: --answer approve goes past the limit', () => {
    const repo = join(tempDir('ck-budget'), 'repo');
    const first = acia(['demo', '--scenario', 'budget', '--dir', repo, '--quiet']);
    expect(first.code, first.stderr).toBe(4);
    const runId = onlyRunId(repo);
    const approve = printedNext(first.stdout, /--answer approve$/);
    expect(printedNext(first.stdout, /--max-tokens \d+$/)).toMatch(new RegExp(`^acia resume ${runId} --repo \\S+ --max-tokens \\d+$`));
    const r = runPrinted(approve);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const entries = ledgerOf(repo, runId);
    expect(entries.find((e) => e.type === 'HUMAN_RESPONSE')?.data).toMatchObject({ action: 'approve' });
    expectFinal(entries, 'succeeded');
  });

  it('a higher limit flag answers it and the run goes on under the new limit', () => {
    const repo = join(tempDir('ck-budget-raise'), 'repo');
    expect(acia(['demo', '--scenario', 'budget', '--dir', repo, '--quiet']).code).toBe(4);
    const runId = onlyRunId(repo);
    const r = acia(['resume', '--repo', repo, '--max-tokens', '400000', '--quiet']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const entries = ledgerOf(repo, runId);
    expect(entries.find((e) => e.type === 'HUMAN_RESPONSE')?.data).toMatchObject({ action: 'retry', text: 'token limit raised from 15000 to 400000' });
    expectFinal(entries, 'succeeded');
  });
});

describe('a killed demo', () => {
  it('resumes offline like the demo itself, with no API key', { timeout: 180_000 }, async () => {
    const repo = join(tempDir('ck-killed'), 'repo');
    const child = spawn(process.execPath, [CLI, 'demo', '--scenario', 'happy', '--dir', repo, '--quiet'], { env: cliEnv(), stdio: 'ignore' });
    const ledger = () => {
      try {
        return readFileSync(join(repo, '.acia', 'runs', onlyRunId(repo), 'ledger.jsonl'), 'utf8');
      } catch {
        return '';
      }
    };
    // A deadline, not a count of polls: on a loaded machine the demo takes a while to reach its first tool call.
    const deadline = Date.now() + 60_000;
    while (!ledger().includes('"TOOL_CALL"')) {
      if (Date.now() > deadline) throw new Error('the demo made no tool call within 60 s');
      await new Promise((r) => setTimeout(r, 50));
    }
    child.kill('SIGKILL');
    await new Promise((r) => child.on('close', r));
    const runId = onlyRunId(repo);
    expect(ledgerOf(repo, runId).some((e) => e.type === 'RUN_COMPLETED')).toBe(false);
    const r = acia(['resume', '--repo', repo, '--quiet']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stderr).not.toContain('ANTHROPIC_API_KEY');
    expectFinal(ledgerOf(repo, runId), 'succeeded');
    expect(acia(['verify', runId, '--repo', repo]).code).toBe(0);
  });
});

const hasScript = spawnSync('script', ['--version'], { encoding: 'utf8' }).stdout.includes('util-linux');
if (!hasScript && process.env.ACIA_TEST_REQUIRE_SANDBOX === '1') throw new Error('util-linux `script` is missing; .ci/run installs bsdutils');

/**
 * The demo on a pty; when the question shows, waits `holdMs` (the live view would have redrawn by
 * then) and types `answer`. Returns the exit code, the whole transcript and what was on screen
 * between the question and the answer.
 */
function onTty(args: string[], answers: string | string[], holdMs: number): Promise<{ code: number; transcript: string; whileAsking: string }> {
  const queue = typeof answers === 'string' ? [answers] : [...answers];
  const cmd = [process.execPath, CLI, ...args].map((s) => `'${s.replace(/'/g, `'\\''`)}'`).join(' ');
  const child = spawn('script', ['-qec', cmd, '/dev/null'], { env: cliEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
  let transcript = '';
  let askedAt = -1;
  let whileAsking = '';
  let typed = 0;
  const onData = (d: Buffer) => {
    transcript += d.toString();
    const prompts = transcript.match(/one of: [a-z, ]+\)/g)?.length ?? 0;
    if (prompts > typed && queue.length > 0) {
      typed = prompts;
      const answer = queue.shift()!;
      if (askedAt < 0) askedAt = transcript.length;
      setTimeout(() => {
        if (whileAsking === '') whileAsking = transcript.slice(askedAt);
        child.stdin.write(`${answer}\r`);
      }, holdMs);
    }
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  return new Promise((resolve) => child.on('close', (code) => resolve({ code: code ?? 1, transcript, whileAsking })));
}

describe.skipIf(!hasScript)('after fixes ran out, answered on a terminal', () => {
  it('guidance: the live view stops drawing while asking, the typed text stays, and a new fix receives it', async () => {
    const repo = join(tempDir('ck-tty-guidance'), 'repo');
    const r = await onTty(['demo', '--scenario', 'escalate', '--dir', repo], GUIDANCE, 1600);
    expect(r.code, r.transcript).toBe(0);
    expect(r.transcript).toContain('(type guidance for the team, or one of: retry, skip, abort)');
    // nothing redrawn over the open question (the view redraws every second otherwise)
    expect(r.whileAsking).not.toContain('acia executing');
    expect(r.transcript).toContain(GUIDANCE);
    const runId = onlyRunId(repo);
    const entries = ledgerOf(repo, runId);
    expect(entries.find((e) => e.type === 'HUMAN_RESPONSE')?.data).toMatchObject({ action: 'guidance', text: GUIDANCE });
    expect(promptOf(repo, runId, entries, 'dev:t2-fix2')).toContain(`Guidance from the human: ${GUIDANCE}`);
    expectFinal(entries, 'succeeded');
  });

  it('retry: one more fix iteration, then the run succeeds ("approve" does not apply and is asked again)', async () => {
    const repo = join(tempDir('ck-tty-retry'), 'repo');
    const r = await onTty(['demo', '--scenario', 'escalate', '--dir', repo], ['approve', 'retry'], 0);
    expect(r.transcript).toContain('"approve" does not apply here. Please answer with guidance text or retry, skip, abort.');
    expect(r.code, r.transcript).toBe(0);
    const entries = ledgerOf(repo, onlyRunId(repo));
    expect(entries.filter((e) => e.type === 'HUMAN_RESPONSE').map((e) => e.data)).toEqual([expect.objectContaining({ action: 'retry' })]);
    expect(entries.some((e) => e.type === 'TASK_STARTED' && (e.data as { taskId: string }).taskId === 't2-fix2')).toBe(true);
    expectFinal(entries, 'succeeded');
  });

  it('an answer the question does not take is asked again; abort then ends the run for good', async () => {
    const repo = join(tempDir('ck-tty-abort'), 'repo');
    const r = await onTty(['demo', '--scenario', 'budget', '--dir', repo], ['retry', 'abort'], 0);
    // a budget stop takes approve or abort only
    expect(r.transcript).toContain('(one of: approve, abort)');
    expect(r.transcript).toContain('Please answer approve, abort.');
    expect(r.code, r.transcript).toBe(130);
    const runId = onlyRunId(repo);
    expect(ledgerOf(repo, runId).filter((e) => e.type === 'HUMAN_RESPONSE').map((e) => e.data)).toEqual([expect.objectContaining({ action: 'abort' })]);
    expect(r.transcript).not.toContain('acia resume');
    expectCleanError(acia(['resume', '--repo', repo]), 2, /can go on: the latest, .* is finished \(a human aborted it\)/);
  });

});
