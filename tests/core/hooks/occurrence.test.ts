// Which hooks an occurrence selects, and the document each gets: ACIA's fields, Claude Code's names for
// the same facts, and Claude Code's tool names and inputs for a hook configured under a Claude Code event.
import { describe, expect, it } from 'vitest';
import { HookConfig, resolveHooks } from '../../../src/core/hooks/config.js';
import { HookInput } from '../../../src/core/hooks/input.js';
import { hookInput, matchingHooks, type HookOccurrence } from '../../../src/core/hooks/occurrence.js';

const base: HookOccurrence = {
  event: 'tool.pre',
  cwd: '/wt/t1',
  ledgerPath: '/repo/.acia/runs/r1/ledger.jsonl',
  ledgerSeq: 41,
  run: { id: 'r1', goal: 'add a flag', branch: 'acia/r1', baseCommit: 'abc' },
  plan: { id: 'plan-A', taskCount: 2 },
  task: { id: 't1', kind: 'dev.implement', title: 'Add the flag', input: { instructions: 'Add --json.\nWith a test.' }, attempt: 1, branch: 'acia-tasks/r1/t1', worktree: '/wt/t1' },
  agent: { name: 'dev:t1', role: 'dev', attempt: 1 },
  tool: { name: 'write_file', useId: 'toolu_1', input: { path: 'infra/main.tf', content: 'x' } },
};

const hooks = resolveHooks([
  HookConfig.parse({ name: 'infra', on: 'tool.pre', tool: ['write_file', 'edit_file'], paths: 'infra/**', command: 'x' }),
  HookConfig.parse({ name: 'lock', on: 'tool.pre', paths: '*.lock', command: 'x' }),
  HookConfig.parse({ name: 'qa-only', on: 'tool.pre', kind: 'qa.*', command: 'x' }),
  HookConfig.parse({ name: 'cc', on: 'PreToolUse', tool: 'Write|Edit', command: 'x' }),
  HookConfig.parse({ name: 'later', on: 'tool.post', command: 'x' }),
]);

describe('matchingHooks', () => {
  it('selects by point, tool name (ACIA or Claude Code), path glob and task kind', () => {
    expect(matchingHooks(hooks, base).map((h) => h.id)).toEqual(['infra', 'cc']);
    const lock = { ...base, tool: { name: 'edit_file', useId: 'u', input: { path: 'sub/yarn.lock', old: 'a', new: 'b' } } };
    expect(matchingHooks(hooks, lock).map((h) => h.id)).toEqual(['lock', 'cc']);
    const qa = { ...base, task: { ...base.task!, kind: 'qa.verify' }, tool: { name: 'run_command', useId: 'u', input: { command: 'ls' } } };
    expect(matchingHooks(hooks, qa).map((h) => h.id)).toEqual(['qa-only']);
  });
});

describe('hookInput', () => {
  it('says which run, task and teammate, in ACIA terms, and validates against its schema', () => {
    const doc = hookInput(hooks[0]!, base);
    expect(HookInput.parse(doc)).toEqual(doc);
    expect(doc).toMatchObject({
      hook_event_name: 'tool.pre',
      acia_event: 'tool.pre',
      hook_name: 'infra',
      session_id: 'r1',
      cwd: '/wt/t1',
      ledger_seq: 41,
      agent: { name: 'dev:t1', role: 'dev', attempt: 1 },
      teammate_name: 'dev:t1',
      task_id: 't1',
      task_subject: 'Add the flag',
      task_description: 'Add --json.\nWith a test.',
      tool_name: 'write_file',
      tool_input: { path: 'infra/main.tf', content: 'x' },
    });
  });

  it("gives a Claude Code hook Claude Code's tool names and inputs", () => {
    const doc = hookInput(hooks[3]!, base);
    expect(doc).toMatchObject({ hook_event_name: 'PreToolUse', acia_event: 'tool.pre', tool_name: 'Write', tool_input: { file_path: '/wt/t1/infra/main.tf', content: 'x' }, tool_use_id: 'toolu_1' });
    const bash = hookInput(hooks[3]!, { ...base, tool: { name: 'run_command', useId: 'u2', input: { command: 'rm -rf build', timeout_s: 5 } } });
    expect(bash).toMatchObject({ tool_name: 'Bash', tool_input: { command: 'rm -rf build', timeout: 5000 } });
    const post = hookInput({ ...hooks[3]!, event: 'tool.post', claudeCode: 'PostToolUse' }, { ...base, event: 'tool.post', tool: { name: 'run_command', useId: 'u2', input: { command: 'ls' }, result: { ok: true, output: 'a\nb' } } });
    expect(post).toMatchObject({ hook_event_name: 'PostToolUse', tool_response: { stdout: 'a\nb', stderr: '', interrupted: false } });
  });

  it("fills a completion gate's Stop/TaskCompleted fields", () => {
    const stop = resolveHooks([HookConfig.parse({ on: 'Stop', command: 'x' })])[0]!;
    const { tool: _tool, ...rest } = base;
    const doc = hookInput(stop, { ...rest, event: 'task.post', result: { summary: 'added --json' }, repeat: true });
    expect(doc).toMatchObject({ hook_event_name: 'Stop', stop_hook_active: true, last_assistant_message: 'added --json', result: { summary: 'added --json' } });
  });
});
