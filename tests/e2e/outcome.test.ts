// Trustworthy outcomes through the built CLI: saved plans run with `acia exec` and scripted agents,
// each asserting the exit code, the terminal reason and the ledger. What only the executor decides
// (compensation edges, test-first, QA under task.post, verification expressions) is tested in-process
// in tests/team/executor.test.ts; these keep the CLI paths: exec, resume --answer, show, replay, bundle.
import { cpSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { LedgerEntry } from '../../src/core/ledger/entry.js';
import { acia, git, ledgerOf, onlyRunId, tempDir } from './helpers.js';

const BASE = join(import.meta.dirname, '..', '..', 'workspace', 'scenarios', '_base');
const TEST_CMD = 'node run-tests.js';
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
    // The saved plan set is kept as a blob the ledger names, so verify checks it too.
    expect(ofType(second, 'RUN_STARTED')[0]).toMatchObject({ exec: { rebindContext: true } });
    expect(acia(['verify', id2, '--repo', f.repo]).code).toBe(0);
    const goalCard = JSON.parse(readFileSync(join(f.repo, '.acia', 'bundles', id2, 'goal', 'goal.json'), 'utf8')) as Record<string, unknown>;
    // The Goal Card in the spec's form (its contextRef the spec's sha256-), which acia validate accepts as a goal.
    expect(goalCard).toMatchObject({ kind: 'GoalCard', id: 'goal-saved', context_required: true, contextRef: String(ofType(second, 'CONTEXT_BUILT')[0]!.contextRef).replace('sha256:', 'sha256-') });
    for (const field of ['actors', 'acceptance', 'policy_context', 'metadata']) expect(goalCard[field], field).toBeDefined();
    const validated = acia(['validate', '--kind', 'goal', join(f.repo, '.acia', 'bundles', id2, 'goal', 'goal.json')]);
    expect(validated.code, validated.stdout + validated.stderr).toBe(0);
    const replay = acia(['replay', id2, '--repo', f.repo]);
    expect(replay.stdout + replay.stderr).toContain('identical');
    expect(replay.code).toBe(0);
  });
});

function otherRun(repo: string, not: string[]): string {
  return readdirSync(join(repo, '.acia', 'runs')).find((id) => !not.includes(id))!;
}

describe('compensation edges, answered through the CLI', () => {
  it('with no compensation edge a human is asked; `skip` skips that task, the plan goes on, and the run is not a success', () => {
    const f = fixture('skip', { protectedPaths: ['src/'] });
    const file = savePlan(f, [{ id: 't1', capability: 'dev.implement' }, { id: 't2', capability: 'dev.implement' }, { id: 'q', capability: 'qa.verify' }], [
      { from: 't1', to: 't2' },
      { from: 't2', to: 'q' },
    ]);
    const model = saveScript(f, [...write('dev:t1', 'src/x.js', 'export const x = 1;\n'), ...write('dev:t2', 'docs/t2.md', 'done\n'), ...qa('qa:q')]);
    const first = acia(['exec', file, '--rebind-context', ...runFlags(f, model)]);
    expect(first.code, first.stdout + first.stderr).toBe(3);
    const runId = onlyRunId(f.repo);
    expect(ofType(ledgerOf(f.repo, runId), 'ESCALATION_REQUESTED')).toEqual([expect.objectContaining({ reason: 'policy_denied', taskId: 't1' })]);
    const second = acia(['resume', runId, '--answer', 'skip', ...runFlags(f, model)]);
    expect(second.code, second.stdout + second.stderr).toBe(1);
    const entries = ledgerOf(f.repo, runId);
    expect(ofType(entries, 'TASK_SKIPPED')).toEqual([expect.objectContaining({ taskId: 't1', cause: 'human' })]);
    expect(ofType(entries, 'TASK_COMPLETED').map((d) => d.taskId)).toEqual(['t2', 'q']);
    expect(last(entries)).toMatchObject({ reason: 'failed', message: expect.stringContaining('task t1 was skipped by a human') as unknown });
    expect(acia(['show', runId, '--repo', f.repo]).stdout).toContain('outcome rule: failed — task t1 was skipped by a human');
    expect(readFileSync(join(f.repo, '.acia', 'wiki', 'runs', `${runId}.md`), 'utf8')).toMatch(/\| t1 \| dev\.implement \|.*\| skipped \|/);
    const replay = acia(['replay', runId, '--repo', f.repo]);
    expect(replay.stdout + replay.stderr).toContain('identical');
  });
});

describe('guards over recorded facts and policy, across a resume', () => {
  it('after a resume guards read the recorded packet and the recorded PDP response; the resumed run replays identically', () => {
    const f = fixture('guards', { protectedPaths: ['src/'] });
    const file = savePlan(
      f,
      [{ id: 't1', capability: 'dev.implement' }, { id: 'fast', capability: 'dev.implement' }, { id: 'review', capability: 'dev.implement' }],
      [
        { from: 't1', to: 'fast', guard: 'policy.allow' },
        { from: 't1', to: 'review', guard: `!policy.allow && facts.testCommand == '${TEST_CMD}'` },
      ],
    );
    const model = saveScript(f, [...write('dev:t1', 'src/x.js', 'export const x = 1;\n'), ...write('dev:review', 'docs/review.md', 'reviewed src/x.js\n')]);
    const first = acia(['exec', file, '--rebind-context', ...runFlags(f, model)]);
    expect(first.code, first.stdout + first.stderr).toBe(3);
    const runId = onlyRunId(f.repo);
    // A different test command now: a rebuilt packet would have other facts; the recorded one must win.
    const flags = runFlags(f, model).map((x) => (x === TEST_CMD ? 'node  run-tests.js' : x));
    const second = acia(['resume', runId, '--answer', 'approve', ...flags]);
    expect(second.code, second.stdout + second.stderr).toBe(0);
    const entries = ledgerOf(f.repo, runId);
    const branches = ofType(entries, 'BRANCH_TAKEN');
    expect(branches).toContainEqual(expect.objectContaining({ to: 'fast', value: false, policy: { allow: false, reason: 'changed protected path src/x.js' } }));
    expect(branches).toContainEqual(expect.objectContaining({ to: 'review', value: true }));
    expect(ofType(entries, 'TASK_SKIPPED')).toEqual([expect.objectContaining({ taskId: 'fast', cause: 'guard' })]);
    expect(last(entries).reason).toBe('succeeded');
    const replay = acia(['replay', runId, '--repo', f.repo]);
    expect(replay.stdout + replay.stderr).toContain('identical');
    expect(replay.code).toBe(0);
  });
});

describe('the replay bundle, written when the run ends', () => {
  it('after a re-plan it holds the plan actually executed, every task spec that ran, the real capability map and the planner prompts', () => {
    const repo = join(tempDir('outcome-bundle'), 'repo');
    const r = acia(['demo', '--scenario', 'plan-b', '--dir', repo, '--quiet']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const runId = onlyRunId(repo);
    const entries = ledgerOf(repo, runId);
    expect(ofType(entries, 'REPLAN_TRIGGERED')).toEqual([expect.objectContaining({ fromPlanId: 'plan-A', toPlanId: 'plan-B', diff: expect.stringContaining('2 task(s) dropped, 2 added') as unknown })]);
    expect(ofType(entries, 'RUN_STARTED')[0]).toMatchObject({ acmVersion: 'v0.5' });
    const dir = join(repo, '.acia', 'bundles', runId);
    const read = (p: string) => JSON.parse(readFileSync(join(dir, p), 'utf8')) as Record<string, unknown>;
    const manifest = read('manifest.json') as { acmVersion: string; head: { seq: number }; files: Record<string, string> };
    expect(manifest.acmVersion).toBe('v0.5');
    // Complete: its head is the ledger's last entry (RUN_COMPLETED), and it verifies.
    expect(manifest.head.seq).toBe(entries.at(-1)!.seq);
    expect(entries.at(-1)!.type).toBe('RUN_COMPLETED');
    // The plan in force (metadata.json), each plan of the set in its own file, the re-plan beside them.
    expect(read('metadata.json')).toMatchObject({ version: '0.5', runId, planId: 'plan-B' });
    const selection = JSON.parse(readFileSync(join(dir, 'plans', 'selection.yaml'), 'utf8').replace(/^#.*\n/, '')) as { replans: unknown[]; executed: { id: string } };
    expect(selection.executed.id).toBe('plan-B');
    expect(selection.replans).toHaveLength(1);
    const started = new Set(ofType(entries, 'TASK_STARTED').map((d) => d.taskId as string));
    const specs = Object.keys(manifest.files).filter((p) => p.startsWith('task-specs/')).map((p) => p.slice('task-specs/'.length, -'.json'.length));
    expect(new Set(specs)).toEqual(started);
    expect(started.has('t1') && started.has('b1')).toBe(true);
    const caps = read('capability-map/capability-map.json') as { version: string; capabilities: { name: string }[] };
    expect(caps.version).toBe('acia-caps@1');
    expect(caps.capabilities.map((c) => c.name)).toContain('qa.write_tests');
    const pmCalls = ofType(entries, 'LLM_CALL').filter((d) => d.caller === 'pm');
    expect(pmCalls.length).toBeGreaterThan(0);
    for (const c of pmCalls) expect(manifest.files).toHaveProperty(`planner/prompts/${(c.requestHash as string).slice('sha256:'.length)}`);
    expect(read('plans/plan-B.json')).toMatchObject({ id: 'plan-B', alternatives: ['plan-A'], tasks: expect.arrayContaining([expect.objectContaining({ capabilityRef: 'dev.implement@acia-caps@1' })]) as unknown });
    expect(acia(['verify', dir]).code).toBe(0);
    // A third party holding only the bundle replays the run, re-planning included, without the repository.
    const copy = join(tempDir('outcome-bundle-copy'), 'bundle');
    cpSync(dir, copy, { recursive: true });
    const replay = acia(['replay', copy], { cwd: tempDir('outcome-elsewhere') });
    expect(replay.stdout + replay.stderr).toContain('identical');
    expect(replay.code).toBe(0);
    // The wiki reads the same executed plan: plan-B, not the plan first selected.
    expect(readFileSync(join(repo, '.acia', 'wiki', 'runs', `${runId}.md`), 'utf8')).toContain('**plan-B** (chosen)');
  });
});

describe('plan, then exec', () => {
  const pm = {
    caller: 'pm',
    toolCalls: [
      {
        name: 'return_result',
        input: {
          plans: [{ id: 'plan-A', rationale: 'one task', tasks: [{ id: 't1', capability: 'dev.implement', input: { instructions: 'add a note' } }], edges: [] }],
          chosenPlanId: 'plan-A',
          selectionRationale: 'the only plan',
        },
      },
    ],
  };

  it('a plan saved by `acia plan` executes with no flag on an unchanged repository: the contextRef matches', () => {
    const f = fixture('roundtrip');
    const model = saveScript(f, [pm, ...write('dev:t1', 'docs/note.md', 'a note\n')]);
    const out = join(f.dir, 'saved.json');
    const planned = acia(['plan', 'add a note', '--out', out, ...runFlags(f, model)]);
    expect(planned.code, planned.stdout + planned.stderr).toBe(0);
    const saved = JSON.parse(readFileSync(out, 'utf8')) as { contextRef: string };
    const first = onlyRunId(f.repo);
    const exec = acia(['exec', out, ...runFlags(f, model)]);
    expect(exec.code, exec.stdout + exec.stderr).toBe(0);
    const entries = ledgerOf(f.repo, otherRun(f.repo, [first]));
    expect(ofType(entries, 'CONTEXT_BUILT')[0]!.contextRef).toBe(saved.contextRef);
    expect(ofType(entries, 'GOAL_AMENDED')).toEqual([]);
    expect(last(entries).reason).toBe('succeeded');
  });

  it('`acia plan --context` plans from a given Context Packet (YAML), recorded as given; a malformed one is refused with its path', () => {
    const f = fixture('packet');
    const model = saveScript(f, [pm]);
    const packet = join(f.dir, 'packet.yaml');
    writeFileSync(packet, ['id: ctx-1', 'goalId: goal-given', 'sources:', '  - uri: "doc:brief"', 'facts:', '  tier: gold', '  testCommand: "node run-tests.js"', 'assumptions: []', 'constraints: {}', 'provenance: { builder: hand }'].join('\n'));
    const r = acia(['plan', 'add a note', '--context', packet, ...runFlags(f, model)]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const entries = ledgerOf(f.repo, onlyRunId(f.repo));
    const built = ofType(entries, 'CONTEXT_BUILT')[0]!;
    const stored = JSON.parse(readFileSync(join(f.repo, '.acia', 'runs', onlyRunId(f.repo), 'blobs', (built.packetRef as string).slice(7)), 'utf8')) as { facts: { tier: string } };
    expect(stored.facts.tier).toBe('gold');
    expect(ofType(entries, 'RUN_STARTED')[0]).toMatchObject({ goal: { id: 'goal-given' }, planOnly: true });
    const plans = ofType(entries, 'PLAN_PROPOSED')[0]!.planSet as { contextRef: string };
    expect(plans.contextRef).toBe(built.contextRef);
    writeFileSync(packet, 'id: ctx-1\ngoalId: goal-given\nsources: nope\n');
    const bad = acia(['plan', 'add a note', '--context', packet, ...runFlags(f, model)]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/packet\.yaml is not a Context Packet: \$\.sources/);
  });
});
