// cache_read_share_40_turns and input_cost_vs_uncached_happy: runs in-process against the fake Anthropic
// server (real SDK), whose prompt-cache emulation reports what each request read from and wrote to the
// cache at the breakpoints ACIA marked.
import { parseScript } from '../dist/testing.js';
import { longScript } from './long-script.mjs';
import { runScenarioInProcess } from './in-process.mjs';
import { round } from './util.mjs';

/** Anthropic's multipliers on the input price: a 5-minute cache write costs 1.25x, a read 0.1x. */
const WRITE = 1.25;
const READ = 0.1;

function sums(requests) {
  let input = 0;
  let read = 0;
  let write = 0;
  for (const q of requests) {
    input += q.inputTokens;
    read += q.cacheReadTokens;
    write += q.cacheWriteTokens;
  }
  const all = input + read + write;
  return { requests: requests.length, all, input, read, write, share: all === 0 ? 0 : read / all, cost: all === 0 ? 1 : (input + WRITE * write + READ * read) / all };
}

export async function cacheFigures({ log = () => {} } = {}) {
  // 40 turns: the PM's plan, two dev tasks of 18 and 19 turns, QA's two.
  const script = parseScript(longScript({ devTasks: 2, readsPerTask: 16, extraReads: 1 }), 'cache bench');
  const forty = await runScenarioInProcess('happy', script);
  const all40 = sums(forty.requests);
  const dev40 = sums(forty.requests.filter((q) => q.caller.startsWith('dev:')));
  const happy = sums((await runScenarioInProcess('happy')).requests);
  log(`  40 turns: ${all40.requests} requests, cache read share ${round(all40.share, 3)} (dev ${round(dev40.share, 3)}); happy input cost ${round(happy.cost, 3)}x uncached`);
  return {
    cache_read_share_40_turns: {
      value: round(all40.share, 3),
      unit: 'share',
      how: `a ${all40.requests}-request run (PM, two dev tasks of 18 and 19 turns, QA) in-process against the fake Anthropic server: sum(cache read) / sum(input + cache read + cache write)`,
      goal: '>= 0.9',
      met: all40.share >= 0.9,
      detail: { all: all40, dev: dev40 },
    },
    input_cost_vs_uncached_happy: {
      value: round(happy.cost, 3),
      unit: 'x',
      how: `happy scenario in-process: (input + ${WRITE} x cache write + ${READ} x cache read) / all input tokens, i.e. the input bill relative to the same requests with no caching`,
      goal: '<= 1.0',
      met: happy.cost <= 1.0,
      detail: happy,
    },
  };
}
