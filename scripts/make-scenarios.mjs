// Regenerates workspace/scenarios/<name>/{scenario.json,script.json} from the definitions below.
// The scripts are data for the scripted model (docs/scripted-model.md); this file keeps them consistent.
import { mkdirSync, writeFileSync } from 'node:fs';

const HELPERS = {
  titleCase: {
    good: `/** Capitalise the first letter of every word: "hello world" -> "Hello World". */\nexport function titleCase(text) {\n  return text.replace(/[A-Za-z]+/g, (w) => w[0].toUpperCase() + w.slice(1).toLowerCase());\n}\n`,
    bad: `/** Capitalise the first letter of every word. */\nexport function titleCase(text) {\n  return text.charAt(0).toUpperCase() + text.slice(1);\n}\n`,
    test: `import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { titleCase } from '../src/title-case.js';\n\ntest('titleCase capitalises every word', () => {\n  assert.equal(titleCase('hello big world'), 'Hello Big World');\n});\n`,
  },
  reverseWords: {
    good: `/** Reverse the order of words: "a b c" -> "c b a". */\nexport function reverseWords(text) {\n  return text.trim().split(/\\s+/).reverse().join(' ');\n}\n`,
    test: `import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { reverseWords } from '../src/reverse-words.js';\n\ntest('reverseWords reverses word order', () => {\n  assert.equal(reverseWords(' one two  three '), 'three two one');\n});\n`,
  },
  countVowels: {
    good: `/** Count the vowels a, e, i, o, u in any case. */\nexport function countVowels(text) {\n  return (text.match(/[aeiou]/gi) ?? []).length;\n}\n`,
    test: `import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { countVowels } from '../src/count-vowels.js';\n\ntest('countVowels counts vowels in any case', () => {\n  assert.equal(countVowels('Programming In JS'), 4);\n});\n`,
  },
  truncate: {
    good: `/** Shorten text to at most max characters, ending with an ellipsis when cut. */\nexport function truncate(text, max) {\n  return text.length <= max ? text : text.slice(0, Math.max(0, max - 1)) + '\\u2026';\n}\n`,
    test: `import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { truncate } from '../src/truncate.js';\n\ntest('truncate cuts long text with an ellipsis', () => {\n  assert.equal(truncate('abcdefgh', 5), 'abcd\\u2026');\n  assert.equal(truncate('abc', 5), 'abc');\n});\n`,
  },
};

const kebab = (s) => s.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
const srcPath = (name) => `src/${kebab(name)}.js`;
const testPath = (name) => `test/${kebab(name)}.test.js`;

const devTask = (id, name) => ({
  id,
  capability: 'dev.implement',
  title: `Add ${name}`,
  input: { instructions: `Add an exported ${name} in ${srcPath(name)} with a node:test test in ${testPath(name)}.`, files: [srcPath(name), testPath(name)] },
});
const qaTask = (id) => ({ id, capability: 'qa.verify', title: 'Run the test suite', input: { instructions: 'Run the whole test suite and report.' } });

const pm = (plans, chosen = plans[0].id, latencyMs = 0) => ({
  caller: 'pm',
  latencyMs,
  text: 'Here are two plans; the first is smaller.',
  toolCalls: [{ name: 'return_result', input: { plans, chosenPlanId: chosen, selectionRationale: `${chosen} is the smallest change that meets the goal.` } }],
});

/** A dev session: look, write the function and its test, run the tests, report. */
function dev(caller, name, variant = 'good', latencyMs = 0, lessons = []) {
  return [
    { caller, latencyMs, text: 'Let me look at the existing helpers first.', toolCalls: [{ name: 'list_dir', input: { path: 'src' } }] },
    {
      caller,
      latencyMs,
      toolCalls: [
        { name: 'write_file', input: { path: srcPath(name), content: HELPERS[name][variant] } },
        { name: 'write_file', input: { path: testPath(name), content: HELPERS[name].test } },
      ],
    },
    { caller, latencyMs, toolCalls: [{ name: 'run_tests', input: {} }] },
    { caller, latencyMs, toolCalls: [{ name: 'return_result', input: { summary: `Added ${name} in ${srcPath(name)} and a test in ${testPath(name)}.`, ...(lessons.length ? { lessons } : {}) } }] },
  ];
}

/** A fix session: the failure output is in the task; rewrite the function and finish. */
function fix(caller, name, variant = 'good', lessons = []) {
  return [
    { caller, toolCalls: [{ name: 'read_file', input: { path: srcPath(name) } }] },
    { caller, toolCalls: [{ name: 'write_file', input: { path: srcPath(name), content: HELPERS[name][variant] } }] },
    { caller, toolCalls: [{ name: 'return_result', input: { summary: `Rewrote ${name} to handle every word.`, ...(lessons.length ? { lessons } : {}) } }] },
  ];
}

/** QA runs the real tests; its claimed verdict is deliberately optimistic to show it is not trusted. */
function qa(caller, claim = true) {
  return [
    { caller, toolCalls: [{ name: 'run_tests', input: {} }] },
    { caller, toolCalls: [{ name: 'return_result', input: { passed: claim, summary: 'Ran the full suite.' } }] },
  ];
}

const planA = {
  id: 'plan-A',
  rationale: 'One dev task adds the function and its test; QA runs the suite.',
  tasks: [devTask('t1', 'titleCase'), qaTask('t2')],
  edges: [{ from: 't1', to: 't2' }],
};
const planB = {
  id: 'plan-B',
  rationale: 'Same change made by a fresh task, in case the first approach fails.',
  tasks: [devTask('b1', 'titleCase'), qaTask('b2')],
  edges: [{ from: 'b1', to: 'b2' }],
};

// Lessons the Dev agent proposes for the team's memory (appended to .acia/wiki/memory/lessons.md).
const HELPER_LESSON = 'Each string helper lives in its own kebab-case file under src/ with a node:test file under test/; the suite runs with node run-tests.js.';
const FIX_LESSON = 'Word helpers must handle every word of multi-word input; a single-word test does not catch that.';

const titleGoal = 'Add a titleCase(text) helper that capitalises every word, with a test';

const scenarios = {
  happy: {
    description: 'The default demo: PM plans, Dev implements with a test, QA verifies with the real test run.',
    goal: titleGoal,
    settings: { parallel: 2, maxIterations: 2 },
    expect: { exitCode: 0, reason: 'succeeded' },
    turns: [pm([planA, planB]), ...dev('dev:t1', 'titleCase', 'good', 0, [HELPER_LESSON]), ...qa('qa:t2')],
  },
  'fix-loop': {
    description: 'The first implementation is wrong: QA fails on the real exit code, a dev.fix task repairs it, re-verification passes.',
    goal: titleGoal,
    settings: { parallel: 2, maxIterations: 2 },
    expect: { exitCode: 0, reason: 'succeeded' },
    turns: [pm([planA, planB]), ...dev('dev:t1', 'titleCase', 'bad'), ...qa('qa:t2', true), ...fix('dev:t2-fix1', 'titleCase', 'good', [FIX_LESSON]), ...qa('qa:t2-r1')],
  },
  escalate: {
    description: 'The fix never works: after maxIterations the team escalates to the human (exit 3 without a TTY).',
    goal: titleGoal,
    settings: { parallel: 2, maxIterations: 1 },
    expect: { exitCode: 3, reason: 'awaiting_human' },
    turns: [
      pm([{ ...planA, rationale: 'Only one sensible approach.' }]),
      ...dev('dev:t1', 'titleCase', 'bad', 0, [HELPER_LESSON]),
      ...qa('qa:t2'),
      ...fix('dev:t2-fix1', 'titleCase', 'bad'),
      ...qa('qa:t2-r1'),
      // Served only when the human answers guidance or retry: the one more fix iteration works.
      ...fix('dev:t2-fix2', 'titleCase', 'good'),
      ...qa('qa:t2-r2'),
    ],
  },
  parallel: {
    description: 'Four independent dev tasks with model latency run in parallel worktrees, then QA joins them.',
    goal: 'Add four string helpers: titleCase, reverseWords, countVowels and truncate, each with a test',
    settings: { parallel: 4, maxIterations: 1 },
    expect: { exitCode: 0, reason: 'succeeded' },
    turns: [
      pm([
        {
          id: 'plan-A',
          rationale: 'Four independent helpers in four parallel tasks, joined by one QA run.',
          tasks: [devTask('t1', 'titleCase'), devTask('t2', 'reverseWords'), devTask('t3', 'countVowels'), devTask('t4', 'truncate'), qaTask('t5')],
          edges: ['t1', 't2', 't3', 't4'].map((from) => ({ from, to: 't5' })),
          joins: [{ task: 't5', mode: 'all', waitFor: ['t1', 't2', 't3', 't4'] }],
        },
        {
          id: 'plan-B',
          rationale: 'One task writes all four helpers; slower but no merges.',
          tasks: [{ ...devTask('b1', 'titleCase'), title: 'Add all four helpers' }, qaTask('b2')],
          edges: [{ from: 'b1', to: 'b2' }],
        },
      ]),
      // 2.5 s a turn, about what a real model takes: the run is dominated by waiting on the model.
      ...dev('dev:t1', 'titleCase', 'good', 2500),
      ...dev('dev:t2', 'reverseWords', 'good', 2500),
      ...dev('dev:t3', 'countVowels', 'good', 2500),
      ...dev('dev:t4', 'truncate', 'good', 2500),
      ...qa('qa:t5'),
    ],
  },
  'plan-b': {
    description: 'Plan-A fails verification with no fix iterations allowed; the team re-plans to Plan-B, which passes.',
    goal: titleGoal,
    settings: { parallel: 2, maxIterations: 0 },
    expect: { exitCode: 0, reason: 'succeeded' },
    turns: [pm([planA, planB]), ...dev('dev:t1', 'titleCase', 'bad'), ...qa('qa:t2'), ...dev('dev:b1', 'titleCase'), ...qa('qa:b2')],
  },
  budget: {
    description: 'A token budget too small for the work: the run stops before the call that would pass it (exit 4).',
    goal: titleGoal,
    settings: { parallel: 2, maxIterations: 1, maxTokens: 15000 },
    expect: { exitCode: 4, reason: 'budget_exhausted' },
    turns: [pm([planA, planB]), ...dev('dev:t1', 'titleCase'), ...qa('qa:t2')],
  },
};

for (const [name, s] of Object.entries(scenarios)) {
  const dir = new URL(`../workspace/scenarios/${name}/`, import.meta.url);
  mkdirSync(dir, { recursive: true });
  const { turns, ...meta } = s;
  // The sample repo's tests run in one node process (run-tests.js): npm's start-up would double every test
  // run, and `node --test test/` starts a process per test file.
  const settings = { testCommand: 'node run-tests.js', ...meta.settings };
  writeFileSync(new URL('scenario.json', dir), JSON.stringify({ name, ...meta, settings, repo: '../_base' }, null, 2) + '\n');
  writeFileSync(new URL('script.json', dir), JSON.stringify({ version: 1, model: 'claude-sonnet-5-5', turns }, null, 2) + '\n');
}
console.log(`wrote ${Object.keys(scenarios).length} scenarios`);
