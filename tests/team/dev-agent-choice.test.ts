// The built-in agent names: what `claude` starts, run as ACIA runs an agent's command (/bin/sh -c), with
// stand-ins for the two adapters on the PATH.
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveDevAgents } from '../../src/team/agents-acp/dev-agent-choice.js';
import { tempDir } from '../e2e/helpers.js';

function binDir(names: string[]): string {
  const dir = join(tempDir('builtin-bin'), 'bin');
  mkdirSync(dir);
  for (const name of names) {
    writeFileSync(join(dir, name), `#!/bin/sh\necho "${name} $*"\n`);
    chmodSync(join(dir, name), 0o755);
  }
  return dir;
}

function run(command: string, path: string): string {
  try {
    return execFileSync('/bin/sh', ['-c', command], { env: { PATH: path }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  } catch (e) {
    return `exit ${(e as { status: number }).status}: ${String((e as { stderr: string }).stderr).trim()}`;
  }
}

describe('the built-in claude agent', () => {
  const [claude] = resolveDevAgents('claude', {});
  const command = claude!.agent!.command;

  it('starts Claude Code’s current adapter when both are installed', () => {
    expect(claude!.agent!.api).toBe('anthropic');
    expect(run(command, binDir(['claude-agent-acp', 'claude-code-acp']))).toBe('claude-agent-acp');
  });

  it('starts the earlier adapter when only it is installed', () => {
    expect(run(command, binDir(['claude-code-acp']))).toBe('claude-code-acp');
  });

  it('fails like a missing command when neither is, naming the earlier one', () => {
    const out = run(command, binDir([]));
    expect(out).toMatch(/^exit 127: .*claude-code-acp/);
  });

  it('a name in devAgents still wins over the built-in', () => {
    expect(resolveDevAgents('claude', { claude: 'my-claude --flag' })[0]!.agent!.command).toBe('my-claude --flag');
  });
});
