#!/usr/bin/env node
// Builds workspace/eval/tasks.jsonl and workspace/eval/scripts/<id>.json from workspace/eval/instances/:
// each instance's buggy sources (repo/), the tests its upstream fix made pass (hidden/, which become
// test_patch and never reach the agents), and instance.json (problem, tests, the scripted fix).
// `--check` also applies each scripted fix and the hidden tests in a scratch copy and confirms the
// outcome instance.json expects (resolved, unresolved, broken_p2p) and that the base fails FAIL_TO_PASS.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../workspace/eval/', import.meta.url));
const check = process.argv.includes('--check');
// The identity and dates `acia eval` commits a source directory with (src/eval/checkout.ts), so the
// base commit named here is the one an eval run makes. Run `npm run build` first.
const { MATERIALISE_ENV } = await import(new URL('../dist/eval/checkout.js', import.meta.url).href).catch(() => {
  console.error('make-eval-suite: dist/eval/checkout.js is missing: run npm run build first');
  process.exit(2);
});
const ENV = { ...process.env, ...MATERIALISE_ENV, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' };

function files(dir) {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort();
}

/** A git patch that adds each hidden file (they are new test files). */
function newFilesPatch(dir) {
  return files(dir)
    .map((f) => {
      const lines = readFileSync(join(dir, f), 'utf8').replace(/\n$/, '').split('\n');
      return [`diff --git a/${f} b/${f}`, 'new file mode 100644', '--- /dev/null', `+++ b/${f}`, `@@ -0,0 +1,${lines.length} @@`, ...lines.map((l) => `+${l}`)].join('\n');
    })
    .join('\n')
    .concat('\n');
}

/** The commit `acia eval` makes of repo/ (same identity, dates and message as src/eval/checkout.ts). */
function baseCommit(id, repoDir) {
  const tmp = mkdtempSync(join(tmpdir(), 'acia-suite-'));
  try {
    cpSync(repoDir, tmp, { recursive: true });
    const git = (...args) => execFileSync('git', args, { cwd: tmp, env: ENV, encoding: 'utf8' }).trim();
    git('init', '-q', '-b', 'acia-eval-base');
    git('add', '-A');
    git('commit', '-q', '--no-verify', '-m', `${id} at its base`);
    return git('rev-parse', 'HEAD');
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

function scriptOf(def) {
  const plan = (p, dev, qa) => ({
    id: p,
    rationale: p === 'plan-A' ? 'One dev task fixes the bug; QA runs the suite.' : 'The same fix by a fresh task, in case the first attempt fails.',
    tasks: [
      { id: dev, capability: 'dev.implement', title: 'Fix the bug', input: { instructions: `Fix: ${def.problem_statement}`, files: [def.fix.file] } },
      { id: qa, capability: 'qa.verify', title: 'Run the test suite', input: { instructions: 'Run the whole test suite and report.' } },
    ],
    edges: [{ from: dev, to: qa }],
  });
  return {
    version: 1,
    model: 'claude-sonnet-5-5',
    turns: [
      { caller: 'pm', text: 'A one-file fix; plan-A.', toolCalls: [{ name: 'return_result', input: { plans: [plan('plan-A', 't1', 't2'), plan('plan-B', 'b1', 'b2')], chosenPlanId: 'plan-A', selectionRationale: 'plan-A is the smallest change.' } }] },
      { caller: 'dev:t1', text: `Reading ${def.fix.file}.`, toolCalls: [{ name: 'read_file', input: { path: def.fix.file } }] },
      { caller: 'dev:t1', toolCalls: def.fix.edits.map((e) => ({ name: 'edit_file', input: { path: def.fix.file, old: e.old, new: e.new } })) },
      { caller: 'dev:t1', toolCalls: [{ name: 'run_tests', input: {} }] },
      { caller: 'dev:t1', toolCalls: [{ name: 'return_result', input: { summary: def.fix.summary } }] },
      { caller: 'qa:t2', toolCalls: [{ name: 'run_tests', input: {} }] },
      { caller: 'qa:t2', toolCalls: [{ name: 'return_result', input: { passed: true, summary: 'Ran the full suite.' } }] },
      // When the team's own test run catches the breakage, each fix task gives up honestly.
      // plan-A abandoned, plan-B makes the same change; its fixes give up too and the run stops on it.
      ...(def.expect === 'broken_p2p'
        ? [
            ...giveUps('t2'),
            { caller: 'dev:b1', toolCalls: def.fix.edits.map((e) => ({ name: 'edit_file', input: { path: def.fix.file, old: e.old, new: e.new } })) },
            { caller: 'dev:b1', toolCalls: [{ name: 'return_result', input: { summary: def.fix.summary } }] },
            { caller: 'qa:b2', toolCalls: [{ name: 'run_tests', input: {} }] },
            { caller: 'qa:b2', toolCalls: [{ name: 'return_result', input: { passed: false, summary: 'A test fails.' } }] },
            ...giveUps('b2'),
          ]
        : []),
    ],
  };
}

/** Three fix rounds for verification task `qa` in which the fix task gives up and QA reports the failure. */
function giveUps(qa) {
  return Array.from({ length: 3 }, () => [
    { caller: `dev:${qa}-fix*`, toolCalls: [{ name: 'return_result', input: { summary: 'I could not find a pattern that keeps both signs and fractions; left as is.' } }] },
    { caller: `qa:${qa}-r*`, toolCalls: [{ name: 'run_tests', input: {} }] },
    { caller: `qa:${qa}-r*`, toolCalls: [{ name: 'return_result', input: { passed: false, summary: 'Still failing.' } }] },
  ]).flat();
}

function outcomes(output) {
  const m = new Map();
  for (const line of output.split('\n')) {
    const r = /^\s*(not ok|ok) \d+ - (.*?)\s*$/.exec(line);
    if (r && m.get(r[2]) !== 'failed') m.set(r[2], r[1] === 'ok' ? 'passed' : 'failed');
  }
  return m;
}

function runTests(dir, def) {
  for (const cmd of def.setup ?? []) execFileSync('sh', ['-c', cmd], { cwd: dir });
  const r = spawnSync('sh', ['-c', def.test_command], { cwd: dir, encoding: 'utf8' });
  return outcomes(`${r.stdout}${r.stderr}`);
}

function verify(id, dir, def) {
  const tmp = mkdtempSync(join(tmpdir(), `acia-suite-${id}-`));
  try {
    cpSync(join(dir, 'repo'), tmp, { recursive: true });
    cpSync(join(dir, 'hidden'), tmp, { recursive: true });
    const before = runTests(tmp, def);
    if (def.FAIL_TO_PASS.some((t) => before.get(t) === 'passed')) throw new Error(`${id}: a FAIL_TO_PASS test passes before the fix`);
    if (def.PASS_TO_PASS.some((t) => before.get(t) !== 'passed')) throw new Error(`${id}: a PASS_TO_PASS test fails before the fix`);
    const file = join(tmp, def.fix.file);
    let text = readFileSync(file, 'utf8');
    for (const e of def.fix.edits) {
      if (text.split(e.old).length !== 2) throw new Error(`${id}: scripted edit anchor is not unique in ${def.fix.file}: ${e.old.slice(0, 40)}`);
      text = text.replace(e.old, () => e.new);
    }
    writeFileSync(file, text);
    const after = runTests(tmp, def);
    const f2p = def.FAIL_TO_PASS.every((t) => after.get(t) === 'passed');
    const p2p = def.PASS_TO_PASS.every((t) => after.get(t) === 'passed');
    const got = f2p && p2p ? 'resolved' : !p2p ? 'broken_p2p' : 'unresolved';
    if (got !== def.expect) throw new Error(`${id}: the scripted fix is ${got}, instance.json expects ${def.expect}`);
    console.log(`checked ${id}: ${got}`);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

const lines = [];
mkdirSync(join(root, 'scripts'), { recursive: true });
for (const id of readdirSync(join(root, 'instances')).sort()) {
  const dir = join(root, 'instances', id);
  const def = JSON.parse(readFileSync(join(dir, 'instance.json'), 'utf8'));
  if (check) verify(id, dir, def);
  lines.push(
    JSON.stringify({
      instance_id: id,
      repo: `instances/${id}/repo`,
      base_commit: baseCommit(id, join(dir, 'repo')),
      problem_statement: def.problem_statement,
      test_patch: newFilesPatch(join(dir, 'hidden')),
      FAIL_TO_PASS: def.FAIL_TO_PASS,
      PASS_TO_PASS: def.PASS_TO_PASS,
      test_command: def.test_command,
      ...(def.setup ? { setup: def.setup } : {}),
    }),
  );
  writeFileSync(join(root, 'scripts', `${id}.json`), `${JSON.stringify(scriptOf(def), null, 2)}\n`);
}
writeFileSync(join(root, 'tasks.jsonl'), `${lines.join('\n')}\n`);
console.log(`wrote ${lines.length} instances to ${join(root, 'tasks.jsonl')}`);
