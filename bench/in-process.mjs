// cache_prefix_ratio and prompt_overhead_tokens: runs scenarios in-process through the library against
// the fake Anthropic server (as `acia demo` does) so the server's request records can be read.
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import { loadScript, startFakeAnthropicServer } from '../dist/index.js';
import { buildDeps } from '../dist/cli/build-deps.js';
import { loadConfig } from '../dist/core/config/load.js';
import { loadScenario, prepareDemoRepo } from '../dist/cli/demo-action.js';
import { startRun } from '../dist/team/team.js';
import { noHuman } from '../dist/team/deps.js';
import { SCENARIOS, round, scratch } from './util.mjs';

/** Runs one scenario through the team with the fake server; returns the result and the server's records. */
export async function runScenarioInProcess(name) {
  const scenario = loadScenario(name);
  const root = scratch(`inproc-${name}`);
  const repo = await prepareDemoRepo(scenario, join(root, 'repo'));
  const script = await loadScript(join(SCENARIOS, name, 'script.json'));
  const server = await startFakeAnthropicServer({ script });
  try {
    const { config } = loadConfig({
      repo,
      env: {},
      userFile: null,
      flags: { model: `anthropic:${script.model ?? 'claude-sonnet-5-5'}`, parallel: scenario.settings.parallel, maxIterations: scenario.settings.maxIterations },
    });
    const deps = await buildDeps({
      repo,
      config,
      env: { PATH: process.env.PATH, HOME: process.env.HOME },
      escalator: noHuman,
      warn: () => undefined,
      anthropic: { baseURL: server.url, apiKey: 'acia-bench-key' },
      allowSandboxFallback: true,
    });
    const result = await startRun(deps, { dir: repo, goal: scenario.goal });
    if (result.reason !== scenario.expect.reason) throw new Error(`${name}: ended ${result.reason}, expected ${scenario.expect.reason}`);
    return { result, requests: [...server.requests] };
  } finally {
    await server.close();
    rmSync(root, { recursive: true, force: true });
  }
}

export async function inProcessFigures({ log = () => {} } = {}) {
  const perScenario = {};
  let read = 0;
  let total = 0;
  let firstDev = null;
  for (const name of ['happy', 'parallel']) {
    const { requests } = await runScenarioInProcess(name);
    let r = 0;
    let t = 0;
    for (const q of requests) {
      r += q.cacheReadTokens;
      t += q.inputTokens + q.cacheReadTokens + q.cacheWriteTokens;
    }
    read += r;
    total += t;
    perScenario[name] = { requests: requests.length, cacheReadTokens: r, inputTokensAll: t, ratio: round(r / t, 3) };
    log(`  ${name}: ${requests.length} requests, cache read ${r} of ${t} input tokens`);
    if (name === 'happy') firstDev = requests.find((q) => q.caller.startsWith('dev:')) ?? null;
  }
  const ratio = read / total;
  if (!firstDev) throw new Error('no dev request seen in the happy scenario');
  const overhead = Math.round((firstDev.systemChars + firstDev.toolsChars) / 4);
  return {
    cache_prefix_ratio: {
      value: round(ratio, 3),
      unit: 'share',
      how: 'happy + parallel scenarios in-process against the fake Anthropic server (real SDK); sum(cacheRead) / sum(input + cacheRead + cacheWrite) over every request the server saw',
      goal: '>= 0.85',
      met: ratio >= 0.85,
      detail: perScenario,
    },
    prompt_overhead_tokens: {
      value: overhead,
      unit: 'tokens (chars/4)',
      how: "the Dev agent's first request in the happy scenario as the fake server received it: JSON of `system` plus JSON of `tools` (return_result included), characters / 4",
      goal: '<= 5000',
      met: overhead <= 5000,
      detail: { systemChars: firstDev.systemChars, toolsChars: firstDev.toolsChars, toolCount: firstDev.toolCount },
    },
  };
}
