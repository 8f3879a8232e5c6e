// The work of `acia mcp` and `acia mcp list`, loaded only when they run.
import { resolve } from 'node:path';
import chalk from 'chalk';
import { loadConfig, userConfigPath } from '../core/config/load.js';
import { AciaError } from '../core/errors.js';
import { detectSandbox } from '../core/sandbox/detect.js';
import type { Config } from '../core/config/schema.js';
import { configuredMcpServers } from '../app/mcp-trust.js';
import type { SandboxChoice } from '../core/tools/mcp/connection.js';
import { probeServers } from '../core/tools/mcp/probe.js';
import type { McpListFlags, McpServeFlags } from './commands/mcp.js';
import { EXIT } from '../app/exit-codes.js';
import { readVersion } from '../app/version.js';
import { packagePath } from '../core/package-root.js';


export async function mcpListCommand(flags: McpListFlags): Promise<number> {
  const repo = resolve(flags.repo);
  const { config } = loadConfig({ repo, env: process.env, flags: {} });
  const set = configuredMcpServers(repo, config, process.env);
  const probed = await probeServers(set, { sandbox: sandboxChoice(config), parentEnv: process.env, clientVersion: readVersion(), warn: (line) => process.stderr.write(`acia: ${line}\n`) });
  if (flags.json) {
    process.stdout.write(`${JSON.stringify({ servers: probed }, null, 2)}\n`);
  } else if (probed.length === 0) {
    process.stdout.write(`no MCP servers configured; add "mcpServers" to ${userConfigPath(process.env)} or a .mcp.json to the repository\n`);
  } else {
    for (const s of probed) {
      const how = s.transport === 'stdio' ? `stdio, ${s.sandboxed ? 'sandboxed' : chalk.yellow('NOT sandboxed')}` : s.transport === 'sse' ? 'sse (legacy HTTP+SSE)' : 'http';
      const state = s.error === null ? chalk.green(`starts, ${s.tools.length} tool(s)`) : chalk.red(s.trusted ? `does not start: ${s.error}` : s.error);
      process.stdout.write(`${chalk.bold(s.name)}  (${s.source}; ${how})  ${state}\n`);
      for (const t of s.tools) {
        process.stdout.write(`  ${t.name}${t.readOnly ? ' [read-only]' : ''}  agents: ${t.roles.join(', ') || 'none'}  ${chalk.dim(t.description.slice(0, 70))}\n`);
      }
    }
  }
  return probed.some((s) => s.error !== null && s.trusted) ? EXIT.FAILED : EXIT.OK;
}

/** The same decision as a run: bubblewrap unless the config turns the sandbox off. */
export function sandboxChoice(config: Config): SandboxChoice {
  if (config.sandbox === 'off') return 'off';
  const sb = detectSandbox();
  if (sb.status === 'unavailable') {
    throw new AciaError('SANDBOX_UNAVAILABLE', `MCP servers start in the sandbox, and none can start here: ${sb.reason}`, { hint: `install it (${sb.install}), or set "sandbox": false for a server in your user config` });
  }
  return 'bwrap';
}

export async function mcpServeCommand(flags: McpServeFlags): Promise<number> {
  const { serveMcp } = await import('../serve/mcp/serve.js');
  const port = flags.http === undefined ? undefined : Number(flags.http);
  if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535)) throw new AciaError('USAGE', `--http expects a port number, got "${flags.http}"`);
  const token = process.env.ACIA_MCP_TOKEN;
  // Each run in a child process of its own (`acia mcp run-job`), so a run outlives a client that leaves.
  const jobCommand = { command: process.execPath, args: [packagePath('dist', 'bin', 'acia.js'), 'mcp', 'run-job'] };
  await serveMcp({ repo: resolve(flags.repo), env: process.env, version: readVersion(), jobCommand, ...(port === undefined ? {} : { httpPort: port }), ...(token ? { httpToken: token } : {}) });
  return EXIT.OK;
}

/** `acia mcp run-job`: one run of `acia mcp`, in its own process (see src/serve/mcp/run-job.ts). */
export async function mcpRunJobCommand(): Promise<number> {
  const { runJobMain } = await import('../serve/mcp/run-job.js');
  return runJobMain();
}

/** The MCP servers for `acia config`: each with its source, and the repository's untrusted ones marked. */
export function mcpServerLines(repo: string, config: Config): { lines: string[]; json: unknown[] } {
  const set = configuredMcpServers(repo, config, process.env);
  const json = [
    ...set.servers.map((s) => ({ name: s.name, source: s.source, transport: s.transport, command: s.command ?? null, args: s.args, url: s.url ?? null, sandbox: s.sandbox, trusted: true })),
    ...set.blocked.map((b) => ({ name: b.name, source: b.source, trusted: false, reason: b.reason })),
  ];
  const lines = json.length === 0 ? ['mcpServers  none'] : ['mcpServers'];
  for (const s of set.servers) {
    const what = s.transport === 'stdio' ? [s.command ?? '', ...s.args].join(' ') : (s.url ?? '');
    lines.push(`  ${s.name}  ${s.transport} ${what}${s.transport === 'stdio' && !s.sandbox ? '  NOT sandboxed' : ''}  (${s.source})`);
  }
  for (const b of set.blocked) lines.push(`  ${b.name}  not started: ${b.reason}  (${b.source})`);
  return { lines, json };
}
