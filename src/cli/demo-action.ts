// The demo: copy a scenario's sample repo, make it a git repo, serve the scenario's script from the
// fake Anthropic server, and run the team against it exactly as `acia run` would.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { packagePath } from '../core/package-root.js';
import { z } from 'zod';
import { AciaError } from '../core/errors.js';
import { Git } from '../team/git.js';
import { systemClock } from '../core/acm/ids.js';
import type { DemoFlags } from './commands/demo.js';
import { runCommand, type RunKind } from './run-action.js';
import type { RunFlags } from './commands/run.js';
import { demoScenarioOf, markDemoRepo } from './demo-marker.js';

export const SCENARIOS_DIR = `${packagePath('workspace', 'scenarios')}/`;

const Scenario = z.object({
  name: z.string(),
  description: z.string(),
  goal: z.string(),
  repo: z.string(),
  settings: z.object({ parallel: z.number(), maxIterations: z.number(), maxTokens: z.number().optional(), testCommand: z.string().optional() }),
  expect: z.object({ exitCode: z.number(), reason: z.string() }),
});
export type Scenario = z.infer<typeof Scenario>;

export function listScenarios(): Scenario[] {
  return readdirSync(SCENARIOS_DIR)
    .filter((d) => existsSync(join(SCENARIOS_DIR, d, 'scenario.json')))
    .map((d) => loadScenario(d))
    .sort((a, b) => (a.name === 'happy' ? -1 : b.name === 'happy' ? 1 : a.name.localeCompare(b.name)));
}

export function loadScenario(name: string): Scenario {
  const file = join(SCENARIOS_DIR, name, 'scenario.json');
  if (!/^[a-z0-9-]+$/.test(name) || !existsSync(file)) {
    const known = readdirSync(SCENARIOS_DIR).filter((d) => existsSync(join(SCENARIOS_DIR, d, 'scenario.json')));
    throw new AciaError('USAGE', `no scenario "${name}"; known: ${known.join(', ')}`);
  }
  return Scenario.parse(JSON.parse(readFileSync(file, 'utf8')));
}

/** Copies the sample repo to `dir` and commits it, so the run has a base commit. */
export async function prepareDemoRepo(scenario: Scenario, dir: string | undefined): Promise<string> {
  const target = dir ? resolve(dir) : mkdtempSync(join(tmpdir(), `acia-demo-${scenario.name}-`));
  if (existsSync(target) && readdirSync(target).length > 0) {
    throw new AciaError('USAGE', `${target} is not empty; pass --dir with a new or empty directory`);
  }
  mkdirSync(target, { recursive: true });
  cpSync(join(SCENARIOS_DIR, scenario.name, scenario.repo), target, { recursive: true });
  const git = new Git(systemClock);
  await git.run(target, ['init', '-q', '-b', 'main']);
  await git.run(target, ['add', '-A']);
  await git.run(target, ['commit', '-q', '--no-verify', '-m', `sample repo for the ${scenario.name} scenario`]);
  return target;
}

export async function demoCommand(flags: DemoFlags): Promise<number> {
  if (flags.list) {
    for (const s of listScenarios()) process.stdout.write(`${s.name.padEnd(10)} ${s.description}\n`);
    return 0;
  }
  const scenario = loadScenario(flags.scenario);
  // Checked before the sample repo is created, so a typo leaves nothing behind.
  if (flags.parallel !== undefined && !/^[1-9][0-9]*$/.test(flags.parallel)) throw new AciaError('USAGE', `--parallel expects a positive whole number, got "${flags.parallel}"`);
  const repo = await prepareDemoRepo(scenario, flags.dir);
  markDemoRepo(repo, scenario.name);
  if (!flags.quiet) process.stderr.write(`demo "${scenario.name}": ${scenario.description}\nsample repo: ${repo}\n`);
  return withDemoServer(
    scenario,
    { kind: 'run', goal: scenario.goal },
    {
      repo,
      ...(flags.parallel === undefined ? {} : { parallel: flags.parallel }),
      ...(flags.json ? { json: true } : {}),
      ...(flags.quiet ? { quiet: true } : {}),
      ...(flags.debug ? { debug: true } : {}),
    },
  );
}

/**
 * Runs (or resumes) a demo repo's run against the fake Anthropic server serving the scenario's script,
 * so a killed or stopped demo goes on offline like the demo itself.
 */
export async function withDemoServer(scenario: Scenario, what: RunKind, flags: RunFlags): Promise<number> {
  const { startFakeAnthropicServer } = await import('../core/llm/fake-server.js');
  const { loadScript } = await import('../core/llm/script.js');
  const script = await loadScript(join(SCENARIOS_DIR, scenario.name, 'script.json'));
  const server = await startFakeAnthropicServer({ script });
  // Not on resume: there a refused answer must stay a one-line error.
  if (!flags.quiet && what.kind !== 'resume') process.stderr.write(`fake Anthropic server: ${server.url} (the real SDK talks to it; no key, no network)\n\n`);
  try {
    return await runCommand(
      what,
      { ...flags, ...(what.kind === 'resume' ? {} : { model: `anthropic:${script.model ?? 'claude-sonnet-5-5'}` }) },
      {
        anthropic: { baseURL: server.url, apiKey: 'acia-demo-key' },
        defaults: {
          parallel: scenario.settings.parallel,
          maxIterations: scenario.settings.maxIterations,
          ...(scenario.settings.testCommand === undefined ? {} : { testCommand: scenario.settings.testCommand }),
          ...(scenario.settings.maxTokens === undefined ? {} : { budget: { maxTokens: scenario.settings.maxTokens } }),
        },
        allowSandboxFallback: true,
        demo: true,
      },
    );
  } finally {
    await server.close();
  }
}

/**
 * `acia resume` in a repo `acia demo` created, of a run on the demo's model: resumes it against the
 * scenario's script (no key, no network). Null when this is not such a run; the caller then resumes
 * normally.
 */
export async function demoResume(repo: string, recordedModel: string, what: RunKind, flags: RunFlags): Promise<number | null> {
  const name = demoScenarioOf(repo);
  if (name === null) return null;
  let scenario: Scenario;
  try {
    scenario = loadScenario(name);
  } catch {
    return null;
  }
  const { loadScript } = await import('../core/llm/script.js');
  const script = await loadScript(join(SCENARIOS_DIR, scenario.name, 'script.json'));
  if (recordedModel !== `anthropic:${script.model ?? 'claude-sonnet-5-5'}`) return null;
  return withDemoServer(scenario, what, flags);
}
