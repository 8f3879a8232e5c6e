// `acia eval` through the built CLI on the shipped offline suite: killed with -9 part way, resumed with
// the same --out, and then every instance graded as instance.json expects (resolved, unresolved,
// broken PASS_TO_PASS), predictions in SWE-bench's format, the grade in each run's verified ledger.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { acia, tempDir } from './helpers.js';
import { expectCleanError, ROOT, startAcia } from './cli-helpers.js';
import { sandboxAvailable } from '../helpers/sandbox-available.js';

const SUITE = join(ROOT, 'workspace', 'eval');
const SCRIPTS = `scripted:${join(SUITE, 'scripts')}`;
const sandboxFlags = sandboxAvailable() ? [] : ['--sandbox', 'off'];

/** SWE-bench's prediction record: exactly these three string fields. */
const Prediction = z.strictObject({ instance_id: z.string().min(1), model_name_or_path: z.string().min(1), model_patch: z.string() });

interface Expectation {
  expect: 'resolved' | 'unresolved' | 'broken_p2p';
  FAIL_TO_PASS: string[];
  PASS_TO_PASS: string[];
}
const expectations = new Map<string, Expectation>(
  readdirSync(join(SUITE, 'instances')).map((id) => [id, JSON.parse(readFileSync(join(SUITE, 'instances', id, 'instance.json'), 'utf8')) as Expectation]),
);

async function waitFor(cond: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('acia eval on the offline suite', () => {
  const out = join(tempDir('eval'), 'out');
  let first = { code: 0, stdout: '', stderr: '' };
  let finishedBeforeKill: Map<string, number>;
  let second = { code: 0, stdout: '', stderr: '' };

  beforeAll(async () => {
    const run = startAcia(['eval', SUITE, '--model', SCRIPTS, '--out', out, '--parallel', '2', ...sandboxFlags]);
    const results = join(out, 'instances');
    const finished = () => (existsSync(results) ? readdirSync(results).filter((f) => f.endsWith('.json')) : []);
    await waitFor(() => finished().length >= 2, 60_000);
    run.child.kill('SIGKILL');
    first = await run.done;
    finishedBeforeKill = new Map(finished().map((f) => [f.replace(/\.json$/, ''), statSync(join(results, f)).mtimeMs]));
    second = acia(['eval', SUITE, '--model', SCRIPTS, '--out', out, '--parallel', '2', ...sandboxFlags], { cwd: ROOT, timeoutMs: 110_000 });
  }, 120_000);

  it('was killed part way, and the rerun skipped the instances finished before the kill', () => {
    expect(first.code).toBe(128);
    expect(finishedBeforeKill.size).toBeGreaterThanOrEqual(2);
    expect(finishedBeforeKill.size).toBeLessThan(8);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain(`(${finishedBeforeKill.size} finished earlier, skipped)`);
    for (const [id, mtime] of finishedBeforeKill) expect(statSync(join(out, 'instances', `${id}.json`)).mtimeMs, id).toBe(mtime);
  });

  it('grades every instance as its instance.json expects', () => {
    const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')) as {
      total: number;
      resolved: number;
      instances: { instance_id: string; finished: boolean; resolved: boolean; reason: string }[];
    };
    expect(report.total).toBe(8);
    for (const row of report.instances) {
      const want = expectations.get(row.instance_id)!;
      const result = JSON.parse(readFileSync(join(out, 'instances', `${row.instance_id}.json`), 'utf8')) as { failToPass: Record<string, string>; passToPass: Record<string, string> };
      const f2p = want.FAIL_TO_PASS.every((t) => result.failToPass[t] === 'passed');
      const p2p = want.PASS_TO_PASS.every((t) => result.passToPass[t] === 'passed');
      const got = f2p && p2p ? 'resolved' : !p2p ? 'broken_p2p' : 'unresolved';
      expect(got, row.instance_id).toBe(want.expect);
      expect(row.resolved, row.instance_id).toBe(want.expect === 'resolved');
    }
    const kinds = [...expectations.values()].map((e) => e.expect);
    expect(kinds).toContain('unresolved');
    expect(kinds).toContain('broken_p2p');
    expect(report.resolved).toBe(kinds.filter((k) => k === 'resolved').length);
    const md = readFileSync(join(out, 'report.md'), 'utf8');
    expect(md).toContain(`**Resolved: ${report.resolved}/8`);
    expect(md).toMatch(/\| ms-negative \| no \| awaiting_human \| 1\/1 \| 2\/3 \|/);
    // Each run's wiki page, linked from the report, shows its grade.
    const ms = JSON.parse(readFileSync(join(out, 'instances', 'ms-negative.json'), 'utf8')) as { wiki: string };
    expect(readFileSync(ms.wiki, 'utf8')).toContain('Eval instance ms-negative: **not resolved** by the hidden tests.');
  });

  it('writes predictions in SWE-bench format whose patches apply to the base', () => {
    const lines = readFileSync(join(out, 'predictions.jsonl'), 'utf8').trimEnd().split('\n');
    expect(lines).toHaveLength(8);
    const dir = tempDir('eval-apply');
    for (const line of lines) {
      const p = Prediction.parse(JSON.parse(line));
      expect(p.model_name_or_path).toBe('acia/scripted:scripts');
      expect(p.model_patch).toMatch(/^diff --git /);
      // The patch is exactly the agents' change: it applies to the base checkout, and it holds no test file.
      const repo = join(out, 'work', p.instance_id, 'repo');
      writeFileSync(join(dir, `${p.instance_id}.patch`), p.model_patch);
      execFileSync('git', ['-C', repo, 'apply', '--check', join(dir, `${p.instance_id}.patch`)]);
      expect(p.model_patch).not.toMatch(/^\+\+\+ b\/test\//m);
    }
  });

  it('records the grade in each run’s ledger after RUN_COMPLETED, and the chain verifies', () => {
    for (const id of expectations.keys()) {
      const result = JSON.parse(readFileSync(join(out, 'instances', `${id}.json`), 'utf8')) as { ledger: string; runId: string; resolved: boolean };
      const entries = readFileSync(result.ledger, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as { type: string; data: { resolved?: boolean; instanceId?: string } });
      const last = entries.at(-1)!;
      expect(last.type).toBe('EVAL_GRADED');
      expect(last.data.instanceId).toBe(id);
      expect(last.data.resolved).toBe(result.resolved);
      expect(entries.at(-2)?.type).toBe('RUN_COMPLETED');
      const v = acia(['verify', result.runId, '--repo', join(out, 'work', id, 'repo')]);
      expect(v.code, v.stdout + v.stderr).toBe(0);
    }
    // The grade is the harness's, not a decision of the team: replay still reproduces the run.
    const k = JSON.parse(readFileSync(join(out, 'instances', 'kind-of-ctor.json'), 'utf8')) as { runId: string };
    const r = acia(['replay', k.runId, '--repo', join(out, 'work', 'kind-of-ctor', 'repo')]);
    expect(r.stdout + r.stderr).toMatch(/identical/);
  });

  it('compares two eval directories side by side', () => {
    const r = acia(['eval', 'compare', out, out]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^resolved\s+6\/8 \(75%\)\s+6\/8 \(75%\)$/m);
    expect(r.stdout).toMatch(/^ms-negative\s+unresolved awaiting_human/m);
  });
});

describe('acia eval: a patch that rewrites how the tests run', () => {
  // A tiny project with a bug: add() subtracts. The hidden test (the test patch) checks add(2, 3) is 5.
  const F2P = 'adds two numbers';
  const P2P = 'adds zero';
  const gitIn = (cwd: string, ...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd, encoding: 'utf8' }).trim();
  const pkg = (extra: Record<string, unknown> = {}) => `${JSON.stringify({ name: 'calc', version: '1.0.0', scripts: { test: 'node --test --test-reporter=tap test/' }, ...extra }, null, 2)}\n`;
  const testPatch = [
    'diff --git a/test/hidden.test.js b/test/hidden.test.js',
    'new file mode 100644',
    '--- /dev/null',
    '+++ b/test/hidden.test.js',
    '@@ -0,0 +1,4 @@',
    "+const { test } = require('node:test');",
    "+const assert = require('node:assert/strict');",
    "+const { add } = require('..');",
    `+test('${F2P}', () => assert.equal(add(2, 3), 5));`,
    '',
  ].join('\n');
  const plan = (id: string) => ({
    caller: 'pm',
    latencyMs: 0,
    toolCalls: [{ name: 'return_result', input: { plans: [{ id: 'plan-A', rationale: 'one fix', tasks: [{ id: 't1', capability: 'dev.implement', title: 'Fix add', input: { instructions: `Fix ${id}`, files: ['index.js'] } }, { id: 't2', capability: 'qa.verify', title: 'Run the tests', input: { instructions: 'Run them.' } }], edges: [{ from: 't1', to: 't2' }] }], chosenPlanId: 'plan-A', selectionRationale: 'only plan' } }],
  });
  const write = (path: string, content: string) => ({ name: 'write_file', input: { path, content } });
  const script = (id: string, writes: { name: string; input: Record<string, unknown> }[]) => ({
    version: 1,
    model: 'claude-sonnet-5-5',
    turns: [
      plan(id),
      { caller: 'dev:t1', latencyMs: 0, toolCalls: writes },
      { caller: 'dev:t1', latencyMs: 0, toolCalls: [{ name: 'return_result', input: { summary: 'done' } }] },
      { caller: 'qa:t2', latencyMs: 0, toolCalls: [{ name: 'run_tests', input: {} }] },
      { caller: 'qa:t2', latencyMs: 0, toolCalls: [{ name: 'return_result', input: { passed: true, summary: 'green' } }] },
    ],
  });

  it('grades the base plus the model’s patch, with test files and the test script from the base and the test patch, and names what was touched', () => {
    const dir = tempDir('eval-tamper');
    const repo = join(dir, 'calc');
    mkdirSync(join(repo, 'test'), { recursive: true });
    writeFileSync(join(repo, 'package.json'), pkg());
    writeFileSync(join(repo, 'index.js'), 'exports.add = (a, b) => a - b;\n');
    writeFileSync(join(repo, 'test', 'add.test.js'), `const { test } = require('node:test');\nconst assert = require('node:assert/strict');\nconst { add } = require('..');\ntest('${P2P}', () => assert.equal(add(2, 0), 2));\n`);
    gitIn(repo, 'init', '-q', '-b', 'main');
    gitIn(repo, 'add', '-A');
    gitIn(repo, 'commit', '-q', '-m', 'base');
    const base = gitIn(repo, 'rev-parse', 'HEAD');
    const fakePass = `node -e "console.log('ok 1 - ${F2P}'); console.log('ok 2 - ${P2P}')"`;
    const scripts = join(dir, 'scripts');
    mkdirSync(scripts);
    // The cheat: no fix; the test script prints passing TAP lines, and a new test file passes the hidden test's name.
    writeFileSync(join(scripts, 'cheat.json'), JSON.stringify(script('cheat', [write('package.json', pkg({ scripts: { test: fakePass } })), write('test/zz-extra.test.js', `require('node:test').test('${F2P}', () => {});\n`)])));
    // The honest fix, with a package.json change that has nothing to do with tests.
    writeFileSync(join(scripts, 'honest.json'), JSON.stringify(script('honest', [write('index.js', 'exports.add = (a, b) => a + b;\n'), write('package.json', pkg({ description: 'adds numbers' }))])));
    const inst = (id: string) => JSON.stringify({ instance_id: id, repo, base_commit: base, problem_statement: 'add() subtracts; it must add.', test_patch: testPatch, FAIL_TO_PASS: [F2P], PASS_TO_PASS: [P2P], test_command: 'npm test' });
    writeFileSync(join(dir, 'tasks.jsonl'), `${inst('cheat')}\n${inst('honest')}\n`);
    const out = join(dir, 'out');
    const r = acia(['eval', join(dir, 'tasks.jsonl'), '--model', `scripted:${scripts}`, '--out', out, '--parallel', '2', ...sandboxFlags], { cwd: ROOT, timeoutMs: 110_000 });
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')) as { resolved: number; tampered: number; instances: { instance_id: string; resolved: boolean; tampered_files?: string[] }[] };
    const row = (id: string) => report.instances.find((i) => i.instance_id === id)!;
    // The cheat's tests ran as the base and the test patch define them: the bug is still there.
    expect(row('cheat').resolved).toBe(false);
    expect(row('cheat').tampered_files).toEqual(['package.json', 'test/zz-extra.test.js']);
    const cheat = JSON.parse(readFileSync(join(out, 'instances', 'cheat.json'), 'utf8')) as { failToPass: Record<string, string>; passToPass: Record<string, string>; model_patch: string; ledger: string };
    expect(cheat.failToPass[F2P]).toBe('failed');
    expect(cheat.passToPass[P2P]).toBe('passed');
    // The prediction is still the whole patch: the report says what was left out of grading.
    expect(cheat.model_patch).toContain('zz-extra.test.js');
    // The honest fix is graded from its patch; a package.json change outside the test settings is not tampering.
    expect(row('honest').resolved).toBe(true);
    expect(row('honest').tampered_files).toBeUndefined();
    expect(report.resolved).toBe(1);
    expect(report.tampered).toBe(1);
    // Never silent: the summary, the report page and the run's ledger all say it.
    expect(r.stdout).toMatch(/^tampered cheat: the model patch changed package\.json, test\/zz-extra\.test\.js/m);
    expect(readFileSync(join(out, 'report.md'), 'utf8')).toMatch(/- cheat: the model patch changed files that decide how tests run.*`package\.json`, `test\/zz-extra\.test\.js`/);
    const graded = readFileSync(cheat.ledger, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as { type: string; data: { tamperedFiles?: string[] } }).at(-1)!;
    expect(graded.type).toBe('EVAL_GRADED');
    expect(graded.data.tamperedFiles).toEqual(['package.json', 'test/zz-extra.test.js']);
  }, 120_000);
});

describe('acia eval: bad input', () => {
  it('names the line and field of a bad instance, exit 2', () => {
    const dir = tempDir('eval-bad');
    const good = readFileSync(join(SUITE, 'tasks.jsonl'), 'utf8').split('\n')[0]!;
    const bad = JSON.stringify({ ...JSON.parse(good), instance_id: 'x2', base_commit: 'not-a-commit' });
    writeFileSync(join(dir, 'tasks.jsonl'), `${good}\n\n${bad}\n`);
    expectCleanError(acia(['eval', join(dir, 'tasks.jsonl'), '--model', SCRIPTS, '--out', join(dir, 'out')]), 2, /tasks\.jsonl:3: base_commit: a commit id/);
    writeFileSync(join(dir, 'tasks.jsonl'), `${good}\n{"instance_id":\n`);
    expectCleanError(acia(['eval', join(dir, 'tasks.jsonl'), '--model', SCRIPTS]), 2, /tasks\.jsonl:2: not JSON/);
    expect(existsSync(join(dir, 'out'))).toBe(false);
  });

  it('refuses --db for instances with setup, --remotes without --db, and an undefined --dev-agent before any instance runs', () => {
    // The offline suite's flat instance installs its dependency in setup, which no fleet worker runs for a submitter.
    expectCleanError(acia(['eval', SUITE, '--model', SCRIPTS, '--db', 'postgres://x']), 2, /--db: instance flat-\S+ .* has setup commands/);
    expectCleanError(acia(['eval', SUITE, '--model', SCRIPTS, '--remotes', '/tmp']), 2, /--remotes and --run-timeout go with --db/);
    expectCleanError(acia(['eval', SUITE, '--model', SCRIPTS, '--dev-agent', 'nosuch']), 2, /devAgent "nosuch" is not defined in devAgents/);
  });
});
