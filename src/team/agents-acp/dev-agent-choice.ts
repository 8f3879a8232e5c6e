// Which agent does the run's Dev tasks: ACIA's own (null), or an external ACP agent's command line.
import { AciaError } from '../../core/errors.js';
import type { RunContext } from '../run-context.js';
import type { AcpDevAgent } from './acp-dev-worker.js';

export function externalDevAgent(ctx: RunContext): AcpDevAgent | null {
  return resolveDevAgent(ctx.deps.config.devAgent, ctx.deps.config.devAgents);
}

export function resolveDevAgent(choice: string, named: Record<string, string>): AcpDevAgent | null {
  if (choice === 'acia') return null;
  if (choice.startsWith('acp:')) return { name: 'acp', command: choice.slice(4) };
  const command = named[choice];
  if (command === undefined) {
    const known = ['acia', ...Object.keys(named)].join(', ');
    throw new AciaError('CONFIG_INVALID', `devAgent "${choice}" is not defined in devAgents (known: ${known})`, { hint: 'add it: "devAgents": {"' + choice + '": "<its ACP command line>"}' });
  }
  return { name: choice, command };
}
