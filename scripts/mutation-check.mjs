// Checks that the tests docs/acm-conformance.md cites can fail: applies each mutation of scripts/mutations.mjs
// (one small edit that removes a feature) to the source, runs the tests it names, and expects them to FAIL;
// the source is restored after each, whatever happens. Slow (one vitest run per mutation, about 5-15 s on
// the in-process tier), so not part of `npm test`.
//
//   node scripts/mutation-check.mjs              every mutation
//   node scripts/mutation-check.mjs any-joins    those whose id contains the word
//   node scripts/mutation-check.mjs --json out.json
//
// Exit 0 when every mutation is caught (a cited test ran and failed), 1 when one survives (its tests passed
// with the feature removed), is broken (no test failed; the run did not get that far) or no longer applies
// (its `find` text is gone from the source), 2 on a usage error.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MUTATIONS } from './mutations.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const jsonAt = args.indexOf('--json');
const jsonOut = jsonAt === -1 ? null : args[jsonAt + 1];
if (jsonAt !== -1 && !jsonOut) {
  process.stderr.write('--json needs a file name\n');
  process.exit(2);
}
const filters = jsonAt === -1 ? args : args.filter((_, i) => i !== jsonAt && i !== jsonAt + 1);
const chosen = MUTATIONS.filter((m) => filters.length === 0 || filters.some((f) => m.id.includes(f)));
if (chosen.length === 0) {
  process.stderr.write(`no mutation matches ${filters.join(' ')}; ids: ${MUTATIONS.map((m) => m.id).join(', ')}\n`);
  process.exit(2);
}

// Restore whatever is mutated on Ctrl-C too, so an interrupted check never leaves a broken source behind.
let restore = null;
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    restore?.();
    process.exit(130);
  });
}

const results = [];
for (const m of chosen) {
  const path = join(root, m.file);
  const original = readFileSync(path, 'utf8');
  const count = original.split(m.find).length - 1;
  if (count !== 1) {
    results.push({ id: m.id, rows: m.rows, outcome: 'stale', detail: `find text occurs ${count} times in ${m.file}` });
    process.stdout.write(`STALE   ${m.id}: the find text occurs ${count} times in ${m.file}\n`);
    continue;
  }
  restore = () => writeFileSync(path, original);
  const t0 = Date.now();
  let run;
  try {
    writeFileSync(path, original.replace(m.find, m.replace));
    run = spawnSync('npx', ['vitest', 'run', '--reporter=dot', ...m.tests], { cwd: root, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  } finally {
    restore();
    restore = null;
  }
  const secs = ((Date.now() - t0) / 1000).toFixed(1);
  const output = run.stdout + run.stderr;
  // Caught only by a test that ran and failed: a run that exits non-zero because a file no longer loads
  // (a mutation that breaks the syntax) proves nothing about the tests.
  const failedTests = /Tests\s+\d+ failed/.test(output);
  const outcome = run.status !== 0 && failedTests ? 'caught' : run.status !== 0 ? 'broken' : 'survived';
  const summary = output.split('\n').filter((l) => /Tests\s+\d|FAIL|×|Error:/.test(l)).slice(0, 4).map((l) => l.trim());
  results.push({ id: m.id, rows: m.rows, why: m.why, tests: m.tests, outcome, seconds: Number(secs), summary });
  process.stdout.write(`${{ caught: 'caught ', broken: 'BROKEN  ', survived: 'SURVIVED' }[outcome]} ${m.id} (${m.rows.join(', ')}; ${secs} s): ${m.why}\n${summary.map((l) => `         ${l}\n`).join('')}`);
}

const bad = results.filter((r) => r.outcome !== 'caught');
process.stdout.write(`\n${results.length - bad.length} of ${results.length} mutations caught${bad.length > 0 ? `; not caught: ${bad.map((r) => r.id).join(', ')}` : ''}\n`);
if (jsonOut) writeFileSync(jsonOut, `${JSON.stringify({ results }, null, 2)}\n`);
process.exit(bad.length === 0 ? 0 : 1);
