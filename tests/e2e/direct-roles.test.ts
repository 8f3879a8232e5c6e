// Roles as files through the built CLI: the user's role file gives the Dev role its own model (a second
// scripted model) and budget, and `acia show` splits the cost per role; a repository's Claude Code agent
// file is ignored (with a warning) until `acia trust` covers it, and used after; a user's Agent Skill
// (`SKILL.md`) is offered by its description and loaded by the Dev agent with `load_skill`; a role over its
// own budget stops the run (exit 4, naming the role) and `--answer approve` goes on.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { LedgerEntry } from '../../src/core/ledger/entry.js';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { acia, git, ledgerOf, onlyRunId, tempDir } from './helpers.js';
import { SCENARIOS, sampleRepo } from './cli-helpers.js';
import { recordedRequest } from '../helpers/recorded-request.js';

const GOAL = 'Add a titleCase(text) helper that capitalises every word, with a test';

interface Script {
  model?: string;
  turns: { caller: string; latencyMs?: number }[];
}

/** The happy scenario split in two scripts: the Dev agent's turns (with `devModel`), and everybody else's. */
function splitScripts(dir: string, devModel: string): { rest: string; dev: string } {
  const all = JSON.parse(readFileSync(join(SCENARIOS, 'happy', 'script.json'), 'utf8')) as Script;
  for (const t of all.turns) t.latencyMs = 0;
  const rest = join(dir, 'rest.json');
  const dev = join(dir, `dev-${devModel}.json`);
  writeFileSync(rest, JSON.stringify({ ...all, turns: all.turns.filter((t) => !t.caller.startsWith('dev:')) }));
  writeFileSync(dev, JSON.stringify({ ...all, model: devModel, turns: all.turns.filter((t) => t.caller.startsWith('dev:')) }));
  return { rest, dev };
}

const devModels = (repo: string, runId: string) => [...new Set(ledgerOf(repo, runId).flatMap((e) => (e.type === 'LLM_CALL' && (e.data as { caller: string }).caller === 'dev:t1' ? [(e.data as { model: string }).model] : [])))];

describe('roles as files', () => {
  it("a user role with its own model and budget; a repository's agent file ignored until trusted", () => {
    const dir = tempDir('roles');
    const { rest, dev } = splitScripts(dir, 'claude-haiku-4-5');
    const config = join(dir, 'config');
    mkdirSync(join(config, 'acia', 'roles'), { recursive: true });
    writeFileSync(join(config, 'acia', 'roles', 'dev.md'), `---\nname: dev\ndescription: a frugal developer\nbase: dev\nmodel: scripted:${dev}\nbudget:\n  maxCostUsd: 5\n---\nYou are a careful developer who keeps changes small.\n`);
    const repo = sampleRepo('roles-repo');
    // The clone ships its own Dev: a model of its choosing (here a script that would make a different change).
    const hostile = splitScripts(tempDir('roles-hostile'), 'claude-opus-4-1').dev;
    mkdirSync(join(repo, '.claude', 'agents'), { recursive: true });
    writeFileSync(join(repo, '.claude', 'agents', 'dev.md'), `---\nname: dev\ndescription: the repository's developer\nmodel: scripted:${hostile}\n---\nDo what the repository says.\n`);
    git(repo, 'add', '-A');
    git(repo, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', 'agents');
    const env = { XDG_CONFIG_HOME: config, XDG_STATE_HOME: join(dir, 'state') };
    const args = ['run', GOAL, '--repo', repo, '--model', `scripted:${rest}`, '--test-command', 'node run-tests.js', '--sandbox', 'off', '--json'];

    const first = acia(args, { env });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toContain("ignored the repository's role files .claude/agents/dev.md: not trusted as they are now");
    const runId = (JSON.parse(first.stdout.trim().split('\n').at(-1)!) as { result: { runId: string; roleCosts: { role: string; costUsd: number | null }[] } }).result;
    expect(devModels(repo, runId.runId)).toEqual(['claude-haiku-4-5']);
    expect(runId.roleCosts.map((c) => c.role).sort()).toEqual(['dev', 'pm', 'qa']);
    expect(runId.roleCosts.every((c) => typeof c.costUsd === 'number' && c.costUsd > 0)).toBe(true);
    const loaded = ledgerOf(repo, runId.runId).find((e) => e.type === 'ROLES_LOADED')!;
    expect(JSON.stringify(loaded.data)).not.toContain('.claude/agents');
    const started = ledgerOf(repo, runId.runId).find((e) => e.type === 'TASK_STARTED' && (e.data as { taskId: string }).taskId === 't1')!;
    expect(started.data).toMatchObject({ role: { name: 'dev', digest: expect.stringMatching(/^[0-9a-f]{64}$/) } });
    const show = acia(['show', runId.runId, '--repo', repo], { env });
    expect(show.stdout).toMatch(/cost by role: .*pm \$\d+\.\d{4} \(\d+ calls?, \d+ tokens\).*dev \$\d+\.\d{4} \(4 calls, \d+ tokens\)/);

    // Trusted as it is now, the repository's agent file is the Dev role (it overrides the user's).
    const trust = acia(['trust', '--repo', repo], { env });
    expect(trust.code, trust.stderr).toBe(0);
    expect(trust.stdout).toMatch(/trusted \S*\/.claude\/agents\/dev.md \(sha256/);
    const second = acia(args, { env });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).not.toContain('ignored the repository');
    const secondId = (JSON.parse(second.stdout.trim().split('\n').at(-1)!) as { result: { runId: string } }).result.runId;
    expect(devModels(repo, secondId)).toEqual(['claude-opus-4-1']);
  }, 180_000);

  it("a role over its own budget stops the run as the run's budget does; approve goes on", () => {
    const dir = tempDir('roles-budget');
    const { rest, dev } = splitScripts(dir, 'claude-haiku-4-5');
    const config = join(dir, 'config');
    mkdirSync(join(config, 'acia', 'roles'), { recursive: true });
    // A budget the Dev role's first call passes; the run's own budget (none) never stops it.
    writeFileSync(join(config, 'acia', 'roles', 'dev.md'), `---\nname: dev\ndescription: a developer on a short leash\nbase: dev\nmodel: scripted:${dev}\nbudget:\n  maxTokens: 50\n---\nKeep changes small.\n`);
    const repo = sampleRepo('roles-budget-repo');
    const env = { XDG_CONFIG_HOME: config, XDG_STATE_HOME: join(dir, 'state') };
    const stop = acia(['run', GOAL, '--repo', repo, '--model', `scripted:${rest}`, '--test-command', 'node run-tests.js', '--sandbox', 'off'], { env });
    expect(stop.code, stop.stdout + stop.stderr).toBe(4);
    const runId = onlyRunId(repo);
    // The stop names the role, and offers approve: the run's own --max-tokens would not raise the role's budget.
    expect(stop.stdout).toMatch(new RegExp(`acia resume ${runId} .*--answer approve`));
    expect(stop.stdout).toMatch(/budget exhausted: role dev's own budget: \d+ tokens would pass the limit of 50/);
    expect(stop.stdout).not.toContain('--max-tokens');
    const entries = ledgerOf(repo, runId);
    expect(entries.find((e) => e.type === 'BUDGET_EXCEEDED')).toMatchObject({ data: { limit: 'tokens', max: 50, role: 'dev' } });
    expect(entries.find((e) => e.type === 'ESCALATION_REQUESTED')).toMatchObject({ data: { reason: 'budget_exceeded', options: ['approve', 'abort'] } });
    expect(devModels(repo, runId)).toEqual([]);
    const go = acia(['resume', runId, '--repo', repo, '--answer', 'approve'], { env });
    expect(go.code, go.stdout + go.stderr).toBe(0);
    expect(devModels(repo, runId)).toEqual(['claude-haiku-4-5']);
    expect(ledgerOf(repo, runId).at(-1)).toMatchObject({ type: 'RUN_COMPLETED', data: { reason: 'succeeded' } });
  }, 120_000);

  it('an Agent Skill (SKILL.md) is offered by description and loaded with load_skill when the agent uses it', () => {
    const dir = tempDir('skills');
    const all = JSON.parse(readFileSync(join(SCENARIOS, 'happy', 'script.json'), 'utf8')) as Script & { turns: Record<string, unknown>[] };
    for (const t of all.turns) t.latencyMs = 0;
    // The Dev agent's first turn loads the skill; the rest of its turns are the happy scenario's.
    const firstDev = all.turns.findIndex((t) => t.caller === 'dev:t1');
    all.turns.splice(firstDev, 0, { caller: 'dev:t1', latencyMs: 0, text: 'A skill applies.', toolCalls: [{ name: 'load_skill', input: { name: 'small-changes' } }] });
    const script = join(dir, 'script.json');
    writeFileSync(script, JSON.stringify(all));
    const config = join(dir, 'config');
    mkdirSync(join(config, 'acia', 'skills', 'small-changes'), { recursive: true });
    const body = 'Touch only the files the task names; add one test per behaviour. MARKER-7f3a';
    writeFileSync(join(config, 'acia', 'skills', 'small-changes', 'SKILL.md'), `---\nname: small-changes\ndescription: how to keep a change small and tested\n---\n${body}\n`);
    const repo = sampleRepo('skills-repo');
    const env = { XDG_CONFIG_HOME: config, XDG_STATE_HOME: join(dir, 'state') };
    const run = acia(['run', GOAL, '--repo', repo, '--model', `scripted:${script}`, '--test-command', 'node run-tests.js', '--sandbox', 'off', '--quiet'], { env });
    expect(run.code, run.stderr).toBe(0);
    const runId = onlyRunId(repo);
    const ledger = ledgerOf(repo, runId);
    const blob = (ref: string) => readFileSync(join(repo, '.acia', 'runs', runId, 'blobs', ref.replace(/^sha256:/, '')), 'utf8');
    const loaded = ledger.find((e): e is Extract<LedgerEntry, { type: 'ROLES_LOADED' }> => e.type === 'ROLES_LOADED');
    expect(loaded?.data.skills.map((k) => k.name)).toEqual(['small-changes']);
    // Offered by its description in the Dev agent's prompt, not by its body...
    const devCalls = ledger.filter((e): e is Extract<LedgerEntry, { type: 'LLM_CALL' }> => e.type === 'LLM_CALL' && e.data.caller === 'dev:t1');
    const firstRequest = recordedRequest(repo, runId, devCalls[0]!.data.requestHash);
    expect(firstRequest).toContain('small-changes: how to keep a change small and tested');
    expect(firstRequest).not.toContain('MARKER-7f3a');
    // ...and its body is what load_skill returns, in the agent's next request.
    const result = ledger.find((e): e is Extract<LedgerEntry, { type: 'TOOL_RESULT' }> => e.type === 'TOOL_RESULT' && e.data.name === 'load_skill');
    expect(result?.data.ok).toBe(true);
    expect(blob(result!.data.outputRef)).toContain('MARKER-7f3a');
    expect(recordedRequest(repo, runId, devCalls[1]!.data.requestHash)).toContain('MARKER-7f3a');
  }, 120_000);
});
