// Which agents do the run's Dev tasks: ACIA's own, an external ACP agent, or several at once
// (best-of-N). `devAgent` is `acia`, `acp:<command>`, a name from `devAgents` or a built-in one
// (`claude`, `codex`, `gemini`), or names joined by commas.
import { AciaError } from '../../core/errors.js';
import type { Config } from '../../core/config/schema.js';
import type { RunContext } from '../run-context.js';
import type { AgentApi } from './proxy-common.js';

export interface AcpDevAgent {
  /** The name the config gives it (`claude-code`), recorded with its work. */
  name: string;
  /** Its command line, run with /bin/sh -c (inside the sandbox when the run's sandbox is on). */
  command: string;
  /** The model API it speaks to ACIA's metering proxy. */
  api: AgentApi;
}

/** One Dev agent: `agent` is null for ACIA's own. */
export interface DevAgentChoice {
  name: string;
  agent: AcpDevAgent | null;
}

/**
 * Agents known by name without any config: their npm packages' commands, on the PATH. Claude Code's
 * adapter was renamed upstream (`@zed-industries/claude-code-acp`, then `@agentclientprotocol/claude-agent-acp`,
 * whose agent SDK runs Claude Code's native build and boots in about half the time): `claude` runs the
 * current one when it is installed, else the earlier one.
 */
export const BUILTIN_AGENTS: Readonly<Record<string, { command: string; api: AgentApi; pkg: string }>> = {
  claude: {
    command: 'command -v claude-agent-acp >/dev/null 2>&1 && exec claude-agent-acp; exec claude-code-acp',
    api: 'anthropic',
    pkg: '@agentclientprotocol/claude-agent-acp (or @zed-industries/claude-code-acp)',
  },
  codex: { command: 'codex-acp', api: 'openai', pkg: '@zed-industries/codex-acp' },
  gemini: { command: 'gemini --acp', api: 'gemini', pkg: '@google/gemini-cli' },
};

export function devAgentsOf(ctx: RunContext): DevAgentChoice[] {
  return resolveDevAgents(ctx.deps.config.devAgent, ctx.deps.config.devAgents);
}

export function resolveDevAgents(choice: string, named: Config['devAgents']): DevAgentChoice[] {
  if (choice.startsWith('acp:')) return [{ name: 'acp', agent: { name: 'acp', command: choice.slice(4), api: 'anthropic' } }];
  const names = choice.split(',');
  if (new Set(names).size !== names.length) throw new AciaError('CONFIG_INVALID', `devAgent "${choice}" names an agent twice`);
  return names.map((name) => {
    if (name === 'acia') return { name, agent: null };
    const entry = named[name];
    const builtin = BUILTIN_AGENTS[name];
    if (entry === undefined && builtin === undefined) {
      const known = ['acia', ...Object.keys(BUILTIN_AGENTS), ...Object.keys(named)].join(', ');
      throw new AciaError('CONFIG_INVALID', `devAgent "${name}" is not defined in devAgents (known: ${known})`, { hint: `add it to your config: "devAgents": {"${name}": "<its ACP command line>"}` });
    }
    const command = entry === undefined ? builtin!.command : typeof entry === 'string' ? entry : entry.command;
    const api = (typeof entry === 'object' ? entry.api : undefined) ?? builtin?.api ?? 'anthropic';
    return { name, agent: { name, command, api } };
  });
}
