// The run's MCP wiring: the repository's .mcp.json reaches the agents only through the trust predicate
// createDeps is given (the trust step), and an untrusted one costs the user one warning line.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createDeps } from '../../src/app/create-deps.js';
import { Config } from '../../src/core/config/schema.js';
import { noHuman } from '../../src/team/deps.js';
import { noMcp } from '../../src/team/deps-defaults.js';

const FAULT = join(import.meta.dirname, '..', 'fixtures', 'mcp', 'fault-server.mjs');

async function depsFor(trusted: boolean | undefined) {
  const repo = mkdtempSync(join(tmpdir(), 'acia-mcp-gate-'));
  writeFileSync(join(repo, '.mcp.json'), JSON.stringify({ mcpServers: { repoTool: { command: 'node', args: [FAULT, 'ok'] } } }));
  const warnings: string[] = [];
  const config = Config.parse({ sandbox: 'off', model: 'openai:x' });
  const deps = await createDeps({
    kind: 'local',
    repo,
    config,
    env: { PATH: process.env.PATH ?? '' },
    escalator: noHuman,
    warn: (w) => {
      if (w.startsWith('MCP')) warnings.push(w);
    },
    ...(trusted === undefined ? {} : { isMcpJsonTrusted: (file: string) => trusted && file === join(repo, '.mcp.json') }),
  });
  return { deps, warnings, repo };
}

describe('the .mcp.json trust gate in a run', () => {
  it('starts nothing from an untrusted .mcp.json and says so once', async () => {
    for (const trusted of [undefined, false]) {
      const { deps, warnings } = await depsFor(trusted);
      // No server: the explicit empty source, never an absent member.
      expect(deps.tools.mcp).toBe(noMcp);
      expect(warnings).toEqual([expect.stringMatching(/^MCP server repoTool from .*\.mcp\.json not started: .*not trusted/)]);
    }
  });

  it('gives the agents the servers of a trusted .mcp.json', async () => {
    const { deps, warnings, repo } = await depsFor(true);
    expect(warnings).toEqual([]);
    const catalog = await deps.tools.mcp.open(repo);
    try {
      expect(catalog.servers).toEqual([expect.objectContaining({ name: 'repoTool', error: null, source: join(repo, '.mcp.json') })]);
      expect(deps.tools.mcp.toolsFor('dev').map((t) => t.name)).toEqual(['mcp__repoTool__ping']);
    } finally {
      await deps.tools.mcp.close();
    }
  });
});
