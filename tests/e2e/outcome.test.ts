// Trustworthy outcomes through the built CLI: saved plans run with `acia exec` and scripted agents,
// each asserting the exit code, the terminal reason and the ledger.
import { cpSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { LedgerEntry } from '../../src/core/acm/contracts.js';
import { acia, git, ledgerOf, onlyRunId, tempDir } from './helpers.js';

const BASE = join(import.meta.dirname, '..', '..', 'workspace', 'scenarios', '_base');
const TEST_CMD = 'node --test test/';
const ZERO_REF = `sha256:${'0'.repeat(64)}`;

interface Fixture {
  repo: string;
  dir: string;
}

function fixture(name: string, config: Record<string, unknown> = {}): Fixture {
  const dir = tempDir(`outcome-${name}`);
  const repo = join(dir, 'repo');
  cpSync(BASE, repo, { recursive: true });
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'add', '-A');
  git(repo, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'base');
  if (Object.keys(config).length > 0) {
    mkdirSync(join(repo, '.acia'));
    writeFileSync(join(repo, '.acia', 'config.json'), JSON.stringify(config));
  }
  return { repo, dir };
}

type T = { id: string; capability: string; input?: Record<string, unknown>; verification?: string[]; retry?: Record<string, unknown> };

/** A saved plan set as `acia plan --out` writes it. */
function savePlan(f: Fixture, tasks: T[], edges: Record<string, unknown>[], contextRef = ZERO_REF): string {
  const plan = {
    id: 'plan-A',
    goalId: 'goal-saved',
    contextRef,
    capabilityMapVersion: 'acia-caps@1',
    tasks: tasks.map((t) => ({ input: t.capability.startsWith('qa.verify') ? {} : { instructions: `do ${t.id}` }, verification: [], ...t })),
    edges,
    joins: [],
    rationale: 'saved for the test',
  };
  const file = join(f.dir, 'plan.json');
  writeFileSync(file, JSON.stringify({ goalId: 'goal-saved', contextRef, plans: [plan], selection: { method: 'human', chosenPlanId: 'plan-A', rationale: 'test' } }));
  return file;
}

const write = (caller: string, path: string, content: string) => [
  { caller, toolCalls: [{ name: 'write_file', input: { path, content } }] },
  { caller, toolCalls: [{ name: 'return_result', input: { summary: `wrote ${path}` } }] },
];
const qa = (caller: string) => [
  { caller, toolCalls: [{ name: 'run_tests', input: {} }] },
  { caller, toolCalls: [{ name: 'return_result', input: { passed: true, summary: 'ran the tests' } }] },
];

function saveScript(f: Fixture, turns: unknown[]): string {
  const file = join(f.dir, 'script.json');
  writeFileSync(file, JSON.stringify({ version: 1, turns }));
  return `scripted:${file}`;
}

const ofType = (entries: LedgerEntry[], type: string) => entries.filter((e) => e.type === type).map((e) => e.data as Record<string, unknown>);
const last = (entries: LedgerEntry[]) => entries.filter((e) => e.type === 'RUN_COMPLETED').at(-1)!.data as { reason: string; message: string };
const runFlags = (f: Fixture, model: string) => ['--repo', f.repo, '--model', model, '--sandbox', 'off', '--test-command', TEST_CMD, '--quiet'];

describe('acia exec and the Context Packet a plan was made from', () => {
  it('refuses a plan made against another packet naming both, re-binds on request (recorded), and replays identically', () => {
    const f = fixture('stale');
    const file = savePlan(f, [{ id: 't1', capability: 'dev.implement' }], []);
    const model = saveScript(f, write('dev:t1', 'src/added.js', 'export const added = 1;\n'));
    const refused = acia(['exec', file, ...runFlags(f, model)]);
    expect(refused.code, refused.stderr).toBe(2);
    const runId = onlyRunId(f.repo);
    const entries = ledgerOf(f.repo, runId);
    const packet = (ofType(entries, 'CONTEXT_BUILT')[0]!).contextRef as string;
    expect(refused.stdout + refused.stderr).toContain(ZERO_REF);
    expect(refused.stdout + refused.stderr).toContain(packet);
    expect(ofType(entries, 'PLAN_PROPOSED')).toEqual([expect.objectContaining({ valid: false })]);
    expect(last(entries).reason).toBe('error');
    expect(ofType(entries, 'TASK_STARTED')).toEqual([]);

    const rebound = acia(['exec', file, '--rebind-context', ...runFlags(f, model)]);
    expect(rebound.code, rebound.stdout + rebound.stderr).toBe(0);
    const second = ledgerOf(f.repo, otherRun(f.repo, [runId]));
    expect(ofType(second, 'GOAL_AMENDED')).toEqual([expect.objectContaining({ by: 'human', delta: expect.stringContaining(ZERO_REF) as unknown })]);
    expect(last(second).reason).toBe('succeeded');
    const id2 = second[0]!.runId;
    const replay = acia(['replay', id2, '--repo', f.repo]);
    expect(replay.stdout + replay.stderr).toContain('identical');
    expect(replay.code).toBe(0);
  });
});

function otherRun(repo: string, not: string[]): string {
  return readdirSync(join(repo, '.acia', 'runs')).find((id) => !not.includes(id))!;
}
