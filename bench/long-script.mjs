// A generated script for long runs: seven dev tasks of 28 turns (26 reads, a write, the result; one more read in
// the first), the PM's plan and QA's two — 200 model turns in all, under the Dev agent's 30-turn limit and without tripping the loop guard.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SCENARIOS } from './util.mjs';

export const DEV_TASKS = 7;
const READS_PER_TASK = 26;

/**
 * `devTasks` tasks of `readsPerTask` reads, a write and the result each (the first task gets `extraReads`
 * more), after the PM's plan and before QA's two turns. The default is the 200-turn run.
 */
export function longScript({ devTasks = DEV_TASKS, readsPerTask = READS_PER_TASK, extraReads = 1 } = {}) {
  const happy = JSON.parse(readFileSync(join(SCENARIOS, 'happy', 'script.json'), 'utf8'));
  const pmTurn = happy.turns.find((t) => t.caller === 'pm');
  const result = pmTurn.toolCalls[0].input;
  const planA = result.plans.find((p) => p.id === result.chosenPlanId);
  const devIds = Array.from({ length: devTasks }, (_, k) => `t${k + 1}`);
  const qaId = `t${devTasks + 1}`;
  const tasks = [
    ...devIds.map((id, k) => ({
      id,
      capability: 'dev.implement',
      title: `Add helper ${k + 1}`,
      input: { instructions: `Read the helpers, then add src/helper-${k + 1}.js.`, files: [`src/helper-${k + 1}.js`] },
    })),
    { ...planA.tasks.find((t) => t.capability === 'qa.verify'), id: qaId },
  ];
  const plan = { ...planA, tasks, edges: devIds.map((id) => ({ from: id, to: qaId })) };
  const turns = [{ ...pmTurn, latencyMs: 0, toolCalls: [{ name: 'return_result', input: { ...result, plans: [plan, ...result.plans.filter((p) => p !== planA)] } }] }];
  devIds.forEach((id, k) => {
    // One extra read in the first task brings the total to exactly 200.
    for (let i = 0; i < readsPerTask + (k === 0 ? extraReads : 0); i++) {
      // Distinct inputs every turn: the loop guard stops an agent that repeats a call.
      const call = i % 2 === 0 ? { name: 'read_file', input: { path: 'src/strings.js', offset: 1 + (i % 13), limit: 5 + i } } : { name: 'list_dir', input: { path: i % 4 === 1 ? 'src' : 'test', depth: 1 + ((i >> 2) % 6) } };
      turns.push({ caller: `dev:${id}`, latencyMs: 0, toolCalls: [call] });
    }
    turns.push({ caller: `dev:${id}`, latencyMs: 0, toolCalls: [{ name: 'write_file', input: { path: `src/helper-${k + 1}.js`, content: `export const helper${k + 1} = (s) => s.repeat(${k + 1});\n` } }] });
    turns.push({ caller: `dev:${id}`, latencyMs: 0, toolCalls: [{ name: 'return_result', input: { summary: `Added src/helper-${k + 1}.js.` } }] });
  });
  for (const t of happy.turns.filter((t) => t.caller.startsWith('qa:'))) turns.push({ ...t, caller: `qa:${qaId}`, latencyMs: 0 });
  return { ...happy, turns };
}
