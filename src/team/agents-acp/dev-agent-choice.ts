// Which agents do the run's Dev tasks: ACIA's own, an external ACP agent, or several at once
// (best-of-N). `devAgent` is `acia`, `acp:<command>`, a name from `devAgents`, or names joined by commas.
import { AciaError } from '../../core/errors.js';
import type { RunContext } from '../run-context.js';
import type { AcpDevAgent } from './acp-dev-worker.js';

/** One Dev agent: `agent` is null for ACIA's own. */
export interface DevAgentChoice {
  name: string;
  agent: AcpDevAgent | null;
}

export function devAgentsOf(ctx: RunContext): DevAgentChoice[] {
  return resolveDevAgents(ctx.deps.config.devAgent, ctx.deps.config.devAgents);
}

export function resolveDevAgents(choice: string, named: Record<string, string>): DevAgentChoice[] {
  if (choice.startsWith('acp:')) return [{ name: 'acp', agent: { name: 'acp', command: choice.slice(4) } }];
  const names = choice.split(',');
  if (new Set(names).size !== names.length) throw new AciaError('CONFIG_INVALID', `devAgent "${choice}" names an agent twice`);
  return names.map((name) => {
    if (name === 'acia') return { name, agent: null };
    const command = named[name];
    if (command === undefined) {
      const known = ['acia', ...Object.keys(named)].join(', ');
      throw new AciaError('CONFIG_INVALID', `devAgent "${name}" is not defined in devAgents (known: ${known})`, { hint: `add it to your config: "devAgents": {"${name}": "<its ACP command line>"}` });
    }
    return { name, agent: { name, command } };
  });
}
