// `acia mcp list` underneath: starts each configured server once, in a throwaway directory, and reports
// whether it started and what it offers — the same path a run takes, so what it says is what a run gets.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CatalogServer } from './catalog.js';
import type { McpServerSet } from './config.js';
import type { SandboxChoice } from './connection.js';
import { McpHub } from './hub.js';

export type ProbedServer = CatalogServer & { trusted: boolean };

export async function probeServers(set: McpServerSet, o: { sandbox: SandboxChoice; parentEnv: NodeJS.ProcessEnv; clientVersion: string; warn?: (line: string) => void }): Promise<ProbedServer[]> {
  const dir = mkdtempSync(join(tmpdir(), 'acia-mcp-list-'));
  // Failures are in the listing; only "still starting" lines are worth saying while the user waits.
  const warn = o.warn ?? (() => undefined);
  const hub = new McpHub(set.servers, { ...o, warn: (line) => (/ is still starting /.test(line) ? warn(line) : undefined), unusable: set.blocked.filter((b) => b.unusable === true) });
  try {
    const catalog = await hub.open(dir);
    const blocked: ProbedServer[] = set.blocked
      .filter((b) => b.unusable !== true)
      .map((b) => ({ name: b.name, source: b.source, transport: 'stdio', sandboxed: true, error: b.reason, tools: [], trusted: false }));
    return [...catalog.servers.map((s) => ({ ...s, trusted: true })), ...blocked];
  } finally {
    await hub.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
