// prompt_overhead_tokens (and, for cache.mjs, any script): runs scenarios in-process through the library against
// the fake Anthropic server (as `acia demo` does) so the server's request records can be read.
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import { loadScript, startFakeAnthropicServer } from '../dist/testing.js';
import { createDeps } from '../dist/app/create-deps.js';
import { loadConfig } from '../dist/core/config/load.js';
import { loadScenario, prepareDemoRepo } from '../dist/cli/demo-action.js';
import { startRun } from '../dist/team/team.js';
import { noHuman } from '../dist/team/deps.js';
import { SCENARIOS, round, scratch } from './util.mjs';

/** Runs one scenario through the team with the fake server; returns the result and the server's records. */
export async function runScenarioInProcess(name, scriptOverride = null) {
  const scenario = loadScenario(name);
  const root = scratch(`inproc-${name}`);
  const repo = await prepareDemoRepo(scenario, join(root, 'repo'));
  const script = scriptOverride ?? (await loadScript(join(SCENARIOS, name, 'script.json')));
  const server = await startFakeAnthropicServer({ script });
  try {
    const { config } = loadConfig({
      repo,
      env: {},
      userFile: null,
      flags: { model: `anthropic:${script.model ?? 'claude-sonnet-5-5'}`, parallel: scenario.settings.parallel, maxIterations: scenario.settings.maxIterations },
    });
    const deps = await createDeps({
      kind: 'local',
      repo,
      config,
      env: { PATH: process.env.PATH, HOME: process.env.HOME },
      escalator: noHuman,
      warn: () => undefined,
      anthropic: { baseURL: server.url, apiKey: 'acia-bench-key' },
      allowSandboxFallback: true,
    });
    const result = await startRun(deps, { dir: repo, goal: scenario.goal });
    if (result.reason !== scenario.expect.reason) throw new Error(`${name}: ended ${result.reason}, expected ${scenario.expect.reason}: ${result.message}`);
    if (server.violations.length > 0) throw new Error(`${name}: request invariants broken: ${server.violations.join('; ')}`);
    return { result, requests: [...server.requests] };
  } finally {
    await server.close();
    rmSync(root, { recursive: true, force: true });
  }
}

export async function inProcessFigures({ log = () => {} } = {}) {
  // The cache figures that replaced cache_prefix_ratio (a share over two short runs) are in cache.mjs.
  const { requests } = await runScenarioInProcess('happy');
  const firstDev = requests.find((q) => q.caller.startsWith('dev:')) ?? null;
  if (!firstDev) throw new Error('no dev request seen in the happy scenario');
  const overhead = Math.round((firstDev.systemChars + firstDev.toolsChars) / 4);
  log(`  happy: ${requests.length} requests, the Dev's system + tools ${overhead} tokens`);
  return {
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
