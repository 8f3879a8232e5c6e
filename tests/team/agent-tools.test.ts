// Agents name their tools by reference; the run supplies the implementations, and a tool it lacks is an error.
import { describe, expect, it } from 'vitest';
import { defineAgent } from '../../src/agents/define-agent.js';
import { devAgent } from '../../src/agents/dev/dev-agent.js';
import { qaAgent } from '../../src/agents/qa/qa-agent.js';
import { DevOutput } from '../../src/agents/dev/dev-agent.js';
import { readFile, runTests } from '../../src/core/tools/tool-sets.js';
import { devTools } from '../../src/core/tools/tool-sets.js';
import type { RunContext } from '../../src/team/run-context.js';
import { toolsFor } from '../../src/team/task-common.js';

const ctxWith = (builtin: typeof devTools) => ({ deps: { tools: { builtin } } }) as unknown as RunContext;

describe('agent tools', () => {
  it("gives an agent the run's own tools, in the run's order", () => {
    expect(toolsFor(ctxWith(devTools), qaAgent.tools).map((t) => t.name)).toEqual(['read_file', 'write_file', 'edit_file', 'list_dir', 'search', 'run_command', 'run_tests', 'git_diff']);
    expect(toolsFor(ctxWith(devTools), devAgent.tools)).toHaveLength(9);
  });

  it('refuses, rather than drops, a tool the run does not provide', () => {
    expect(() => toolsFor(ctxWith(devTools.filter((t) => t.name !== 'run_tests')), qaAgent.tools)).toThrow(/the run_tests tool an agent uses is not one of this run's tools/);
  });

  it('refuses a definition that names a tool twice', () => {
    expect(() => defineAgent({ role: 'dev', instructions: 'dev.md', promptVars: [], tools: [readFile, runTests, readFile], output: DevOutput, maxTurns: 1 })).toThrow(/read_file is named twice/);
  });
});
