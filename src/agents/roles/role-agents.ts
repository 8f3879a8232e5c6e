// The agent definitions a role from a file runs under: its own prompt, then the contract of its base
// role (how it works in the team and how it delivers its result through `return_result`).
import { defineAgent } from '../define-agent.js';
import { DevOutput } from '../dev/dev-agent.js';
import { QaOutput } from '../qa/qa-agent.js';
import { PmOutput } from '../pm/pm-agent.js';

export const roleDevAgent = defineAgent({
  role: 'dev',
  instructions: 'role-dev.md',
  promptVars: ['role_prompt'],
  tools: ['read_file', 'write_file', 'edit_file', 'list_dir', 'search', 'run_command', 'run_tests', 'git_status', 'git_diff'],
  output: DevOutput,
  maxTurns: 30,
});

export const roleQaAgent = defineAgent({
  role: 'qa',
  instructions: 'role-qa.md',
  promptVars: ['role_prompt'],
  tools: ['read_file', 'list_dir', 'search', 'write_file', 'edit_file', 'run_tests', 'run_command', 'git_diff'],
  output: QaOutput,
  maxTurns: 20,
});

export const rolePmAgent = defineAgent({
  role: 'pm',
  instructions: 'role-pm.md',
  promptVars: ['role_prompt', 'capabilities'],
  tools: ['read_file', 'list_dir', 'search'],
  output: PmOutput,
  maxTurns: 12,
});
