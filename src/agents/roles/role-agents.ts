// The agent definitions a role from a file runs under: its own prompt, then the contract of its base
// role (how it works in the team and how it delivers its result through `return_result`).
import { editFile, gitDiff, gitStatus, listDir, readFile, runCommand, runTests, search, writeFile } from '../../core/tools/tool-sets.js';
import { defineAgent } from '../define-agent.js';
import { DevOutput } from '../dev/dev-agent.js';
import { QaOutput } from '../qa/qa-agent.js';
import { PmOutput } from '../pm/pm-agent.js';

export const roleDevAgent = defineAgent({
  role: 'dev',
  instructions: 'role-dev.md',
  promptVars: ['role_prompt'],
  tools: [readFile, writeFile, editFile, listDir, search, runCommand, runTests, gitStatus, gitDiff],
  output: DevOutput,
  maxTurns: 30,
});

export const roleQaAgent = defineAgent({
  role: 'qa',
  instructions: 'role-qa.md',
  promptVars: ['role_prompt'],
  tools: [readFile, listDir, search, writeFile, editFile, runTests, runCommand, gitDiff],
  output: QaOutput,
  maxTurns: 20,
});

export const rolePmAgent = defineAgent({
  role: 'pm',
  instructions: 'role-pm.md',
  promptVars: ['role_prompt', 'capabilities'],
  tools: [readFile, listDir, search],
  output: PmOutput,
  maxTurns: 12,
});
