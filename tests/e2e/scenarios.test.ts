// The demo through the built CLI: exit code, ledger order, wiki, branch, tests, verify, replay; escalate and
// resume --answer; budget's exit 4. The fix-loop, plan-b and parallel scenarios' team logic runs in-process
// in tests/team/scenarios.test.ts (same scripts and settings, real git and tests, replayed).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { acia, git, inOrder, ledgerOf, onlyRunId, tempDir, testsPassOn } from './helpers.js';
import { AGENT_WRITTEN } from '../../src/team/lessons.js';

const SCENARIOS = join(import.meta.dirname, '..', '..', 'workspace', 'scenarios');
/** The lesson the happy scenario's Dev agent proposes (scripts/make-scenarios.mjs). */
const HELPER_LESSON = 'Each string helper lives in its own kebab-case file under src/ with a node:test file under test/; the suite runs with node run-tests.js.';

function demo(scenario: string, extra: string[] = []) {
  const repo = join(tempDir(`e2e-${scenario}`), 'repo');
  const r = acia(['demo', '--scenario', scenario, '--dir', repo, ...extra]);
  return { ...r, repo };
}

function typesOf(repo: string, runId: string) {
  return ledgerOf(repo, runId).map((e) => `${e.actor} ${e.type}`);
}

describe('acia demo scenarios (built CLI, fake Anthropic server, real SDK)', () => {
  it('happy: plans, implements, verifies with the real tests, and leaves a verified record', () => {
    const { code, stdout, stderr, repo } = demo('happy');
    expect(code, stderr).toBe(0);
    expect(stdout).toContain('succeeded');
    const runId = onlyRunId(repo);
    const seq = typesOf(repo, runId);
    expect(
      inOrder(seq, [
        'team RUN_STARTED',
        'pm CONTEXT_BUILT',
        'pm LLM_CALL',
        'pm PLAN_PROPOSED',
        'policy POLICY_DECISION',
        'pm PLAN_SELECTED',
        'team TASK_STARTED',
        'dev:t1 LLM_CALL',
        'dev:t1 TOOL_CALL',
        'dev:t1 TOOL_RESULT',
        'team CHECKPOINT',
        'team MERGE',
        'team TASK_COMPLETED',
        'qa:t2 TOOL_CALL',
        'team VERIFICATION',
        'team TASK_COMPLETED',
        'team MEMORY_UPDATED',
        'team RUN_COMPLETED',
      ]),
      seq.join('\n'),
    ).toBe(true);
    const entries = ledgerOf(repo, runId);
    const verdict = entries.find((e) => e.type === 'VERIFICATION' && (e.data as { source: string }).source !== 'check')!.data as { passed: boolean; exitCode: number; source: string };
    expect(verdict).toMatchObject({ passed: true, exitCode: 0, source: 'qa_run' });
    expect((entries.at(-1)!.data as { reason: string }).reason).toBe('succeeded');
    // the run branch has ACIA's commits and the sample repo's tests pass on it
    const log = git(repo, 'log', '--format=%s', `acia/${runId}`);
    expect(log).toContain('acia(t1): Added titleCase');
    expect(log).toContain('acia: merge t1');
    expect(testsPassOn(repo, `acia/${runId}`)).toBe(true);
    // the user's checkout is untouched
    expect(git(repo, 'status', '--porcelain')).toBe('');
    expect(existsSync(join(repo, 'src', 'title-case.js'))).toBe(false);
    // wiki pages
    const page = readFileSync(join(repo, '.acia', 'wiki', 'runs', `${runId}.md`), 'utf8');
    expect(page).toContain('mermaid');
    expect(page).toContain('plan-A');
    expect(readFileSync(join(repo, '.acia', 'wiki', 'index.md'), 'utf8')).toContain(runId);
    // the Dev agent's lesson is on the memory page, recorded with the page before and after
    const lessons = readFileSync(join(repo, '.acia', 'wiki', 'memory', 'lessons.md'), 'utf8');
    expect(lessons).toContain(`## From run ${runId}`);
    expect(lessons).toContain(`> - ${HELPER_LESSON} _(t1, run ${runId}, ledger seq `);
    const memory = entries.find((e) => e.type === 'MEMORY_UPDATED')!.data as { page: string; afterRef: string };
    expect(memory.page).toBe('lessons');
    expect(readFileSync(join(repo, '.acia', 'runs', runId, 'blobs', memory.afterRef.slice('sha256:'.length)), 'utf8')).toBe(lessons);
    // verify and replay
    expect(acia(['verify', runId, '--repo', repo]).code).toBe(0);
    const replay = acia(['replay', runId, '--repo', repo]);
    expect(replay.stdout + replay.stderr).toContain('identical');
    expect(replay.code).toBe(0);
    // the next run reads it: the lesson is in the PM's context packet; a run with no lessons leaves the page alone
    const script = join(SCENARIOS, 'happy', 'script.json');
    const next = acia(['plan', 'Add a slug option', '--repo', repo, '--model', `scripted:${script}`, '--quiet']);
    expect(next.code, next.stderr).toBe(0);
    const nextId = readdirSync(join(repo, '.acia', 'runs')).find((id) => id !== runId)!;
    const built = ledgerOf(repo, nextId).find((e) => e.type === 'CONTEXT_BUILT')!.data as { packetRef: string };
    const packet = readFileSync(join(repo, '.acia', 'runs', nextId, 'blobs', built.packetRef.slice('sha256:'.length)), 'utf8');
    expect(packet).toContain(HELPER_LESSON.slice(0, 60));
    expect(readFileSync(join(repo, '.acia', 'wiki', 'memory', 'lessons.md'), 'utf8')).toBe(lessons);
  });

  it('escalate: exits 3 with the resume command and an escalation page, and resume records the answer', () => {
    const { code, stdout, repo } = demo('escalate');
    expect(code).toBe(3);
    const runId = onlyRunId(repo);
    expect(stdout).toContain(`acia resume ${runId}`);
    const entries = ledgerOf(repo, runId);
    const esc = entries.find((e) => e.type === 'ESCALATION_REQUESTED')!;
    expect((esc.data as { reason: string }).reason).toBe('fixes_exhausted');
    expect((entries.at(-1)!.data as { reason: string }).reason).toBe('awaiting_human');
    expect(existsSync(join(repo, '.acia', 'wiki', 'escalations', `${runId}.md`))).toBe(true);
    expect(acia(['verify', runId, '--repo', repo]).code).toBe(0);
    // a run waiting for a human has not ended: its Dev agent's lesson waits too
    const lessonsPage = join(repo, '.acia', 'wiki', 'memory', 'lessons.md');
    expect(readFileSync(lessonsPage, 'utf8')).not.toContain('## From run');
    expect(entries.some((e) => e.type === 'MEMORY_UPDATED')).toBe(false);
    // answering "abort" ends the run for good, recorded as the human's decision
    const resumed = acia(['resume', runId, '--repo', repo, '--answer', 'abort', '--sandbox', 'off']);
    expect(resumed.code, resumed.stderr).toBe(130);
    const after = ledgerOf(repo, runId);
    expect(after.some((e) => e.type === 'HUMAN_RESPONSE' && (e.data as { action: string }).action === 'abort')).toBe(true);
    expect((after.at(-1)!.data as { reason: string }).reason).toBe('aborted');
    expect(acia(['verify', runId, '--repo', repo]).code).toBe(0);
    // now the lesson is on the page, once, and a replay of both sessions makes the same single update
    expect(after.filter((e) => e.type === 'MEMORY_UPDATED')).toHaveLength(1);
    expect(readFileSync(lessonsPage, 'utf8')).toContain(`## From run ${runId}\n\n${AGENT_WRITTEN}\n\n> - ${HELPER_LESSON} _(t1, run ${runId}, ledger seq `);
    const replayed = acia(['replay', runId, '--repo', repo]);
    expect(replayed.stdout, replayed.stderr).toContain('identical');
  });

  it('budget: stops before the model call that would pass the token budget, exit 4', () => {
    const { code, repo } = demo('budget');
    expect(code).toBe(4);
    const runId = onlyRunId(repo);
    const entries = ledgerOf(repo, runId);
    const breach = entries.find((e) => e.type === 'BUDGET_EXCEEDED')!.data as { limit: string; spent: number; max: number };
    expect(breach.limit).toBe('tokens');
    expect(breach.spent).toBeGreaterThan(breach.max);
    const recordedTokens = entries.filter((e) => e.type === 'LLM_CALL').reduce((n, e) => {
      const u = (e.data as { usage: Record<string, number> }).usage;
      return n + u.inputTokens! + u.outputTokens! + u.cacheReadTokens! + u.cacheWriteTokens!;
    }, 0);
    expect(recordedTokens).toBeLessThanOrEqual(breach.max);
    expect((entries.at(-1)!.data as { reason: string }).reason).toBe('budget_exhausted');
    expect(acia(['verify', runId, '--repo', repo]).code).toBe(0);
  });
});
