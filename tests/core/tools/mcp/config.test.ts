// MCP configuration: where servers come from, the trust gate on the repository's .mcp.json, ${VAR}
// expansion, names agents see, and which role gets which tool.
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectAciaError } from '../../../helpers/failure.js';
import { loadConfig } from '../../../../src/core/config/load.js';
import { catalogTools, exposedName } from '../../../../src/core/tools/mcp/catalog.js';
import { expandSpec, expandVars, loadMcpServers, UserMcpServer, variablesOf, type TrustPredicate } from '../../../../src/core/tools/mcp/config.js';

function repoWith(mcpJson: unknown): string {
  const repo = mkdtempSync(join(tmpdir(), 'acia-mcp-config-'));
  if (mcpJson !== undefined) writeFileSync(join(repo, '.mcp.json'), typeof mcpJson === 'string' ? mcpJson : JSON.stringify(mcpJson));
  return repo;
}
const user = (servers: Record<string, unknown>) => ({ servers: Object.fromEntries(Object.entries(servers).map(([k, v]) => [k, UserMcpServer.parse(v)])), file: '/home/u/.config/acia/config.json' });
const claudeStyle = { mcpServers: { github: { type: 'stdio', command: 'npx', args: ['-y', 'gh-mcp'], env: { TOKEN: '${GH_TOKEN}' }, sandbox: false }, docs: { type: 'http', url: 'https://docs.example/mcp', headers: { Authorization: 'Bearer ${DOCS_KEY:-none}' } } } };

describe('MCP server configuration', () => {
  it('never starts the repository .mcp.json servers unless the trust predicate says so', () => {
    const repo = repoWith(claudeStyle);
    const set = loadMcpServers({ repo, user: null });
    expect(set.servers).toEqual([]);
    expect(set.blocked.map((b) => b.name)).toEqual(['github', 'docs']);
    expect(set.blocked[0]!.reason).toMatch(/not trusted/);
  });

  it('passes the exact file and content to the trust predicate, and a trusted file cannot turn the sandbox off', () => {
    const repo = repoWith(claudeStyle);
    const seen: [string, string][] = [];
    const trusted: TrustPredicate = (file, content) => {
      seen.push([file, content.toString('utf8')]);
      return true;
    };
    const set = loadMcpServers({ repo, user: null, isTrusted: trusted });
    expect(seen).toEqual([[join(repo, '.mcp.json'), JSON.stringify(claudeStyle)]]);
    const github = set.servers.find((s) => s.name === 'github')!;
    expect(github).toMatchObject({ transport: 'stdio', command: 'npx', args: ['-y', 'gh-mcp'], source: join(repo, '.mcp.json'), sandbox: true });
    expect(set.servers.find((s) => s.name === 'docs')).toMatchObject({ transport: 'http', url: 'https://docs.example/mcp' });
  });

  it('lets the user config define servers, turn a sandbox off, and win over a repository server of the same name', () => {
    const repo = repoWith(claudeStyle);
    const set = loadMcpServers({ repo, user: user({ github: { command: 'my-gh', sandbox: false } }), isTrusted: () => true });
    const github = set.servers.filter((s) => s.name === 'github');
    expect(github).toHaveLength(1);
    expect(github[0]).toMatchObject({ command: 'my-gh', sandbox: false, source: '/home/u/.config/acia/config.json' });
  });

  it('does not follow a symbolic link at .mcp.json', () => {
    const elsewhere = repoWith(claudeStyle);
    const repo = repoWith(undefined);
    symlinkSync(join(elsewhere, '.mcp.json'), join(repo, '.mcp.json'));
    const set = loadMcpServers({ repo, user: null, isTrusted: () => true });
    expect(set.servers).toEqual([]);
    expect(set.blocked[0]!.reason).toMatch(/symbolic link/);
  });

  it('reports an invalid trusted .mcp.json in one line, and only lists an invalid untrusted one', () => {
    expectAciaError(() => loadMcpServers({ repo: repoWith('{"mcpServers": {"x": {"args": 3}}}'), user: null, isTrusted: () => true }), 'CONFIG_INVALID', /mcpServers\.x\.args/);
    const untrusted = loadMcpServers({ repo: repoWith('{nope'), user: null });
    expect(untrusted.blocked[0]!.reason).toMatch(/not valid/);
  });

  it('takes a legacy "sse" server, and skips (with its reason) one entry it cannot use instead of refusing the file', () => {
    const repo = repoWith({ mcpServers: { linear: { type: 'sse', url: 'https://mcp.linear.app/sse' }, broken: { type: 'http' }, fs: { command: 'fs' } } });
    const set = loadMcpServers({ repo, user: null, isTrusted: () => true });
    expect(set.servers.map((s) => [s.name, s.transport])).toEqual([
      ['linear', 'sse'],
      ['fs', 'stdio'],
    ]);
    expect(set.blocked).toEqual([{ name: 'broken', source: join(repo, '.mcp.json'), reason: 'type "http" but no "url"', unusable: true }]);
  });

  it('starts an ACP client\'s servers sandboxed without trust, literally, and the user config keeps a name it defines', () => {
    const client = { servers: { mem: UserMcpServer.parse({ command: 'mem', env: { KEY: '${SECRET}' }, sandbox: false }), fs: UserMcpServer.parse({ command: 'other' }) }, source: 'ACP session s1' };
    const set = loadMcpServers({ repo: null, user: user({ fs: { command: 'fs' } }), client, startupTimeoutS: 90 });
    const mem = set.servers.find((s) => s.name === 'mem')!;
    expect(mem).toMatchObject({ source: 'ACP session s1', sandbox: true, fromRepo: false, startupTimeoutMs: 90_000 });
    expect(expandSpec(mem, { SECRET: 'x' }).env).toEqual({ KEY: '${SECRET}' });
    expect(set.servers.find((s) => s.name === 'fs')!.command).toBe('fs');
    expect(set.blocked[0]).toMatchObject({ name: 'fs', source: 'ACP session s1', unusable: true });
  });

  it('expands ${VAR} and ${VAR:-default}, and names an unset variable', () => {
    expect(expandVars('a ${X} ${Y:-dflt} ${X}', { X: '1' }, 'here')).toBe('a 1 dflt 1');
    expectAciaError(() => expandVars('${GH_TOKEN}', {}, 'MCP server github'), 'CONFIG_INVALID', /MCP server github uses \$\{GH_TOKEN\}, which is not set/);
    const [userGithub] = loadMcpServers({ repo: null, user: user({ github: claudeStyle.mcpServers.github }) }).servers;
    expect(expandSpec(userGithub!, { GH_TOKEN: 'secret' }).env).toEqual({ TOKEN: 'secret' });
  });

  it('expands in a trusted repository server only the variables the user allows: the rest stay literal, whatever their name', () => {
    const [github, docs] = loadMcpServers({ repo: repoWith(claudeStyle), user: null, isTrusted: () => true }).servers;
    expect(expandSpec(github!, { GH_TOKEN: 'secret' }).env).toEqual({ TOKEN: '${GH_TOKEN}' });
    expect(JSON.stringify(expandSpec(docs!, { DOCS_KEY: 'k' }))).not.toContain('"k"');
    const repo = repoWith({ mcpServers: { fs: { command: 'fs', args: ['${ACIA_WORKTREE}', '${HOME_DIR:-x}', '${DATABASE_URL}'], headers: { A: 'Bearer ${DATABASE_URL}' } } } });
    const [fsServer] = loadMcpServers({ repo, user: null, isTrusted: () => true }).servers;
    const env = { ACIA_WORKTREE: '/wt', DATABASE_URL: 'postgres://u:pw@db/x', HOME_DIR: '/h' };
    expect(expandSpec(fsServer!, env).args).toEqual(['/wt', '${HOME_DIR:-x}', '${DATABASE_URL}']);
    expect(expandSpec(fsServer!, env).headers).toEqual({ A: 'Bearer ${DATABASE_URL}' });
    expect(variablesOf(fsServer!)).toEqual({ server: 'fs', received: ['ACIA_WORKTREE'], literal: ['DATABASE_URL', 'HOME_DIR'] });
    const [allowed] = loadMcpServers({ repo, user: null, isTrusted: () => true, envAllow: ['DATABASE_URL'] }).servers;
    expect(expandSpec(allowed!, env).headers).toEqual({ A: 'Bearer postgres://u:pw@db/x' });
    expect(variablesOf(allowed!)).toEqual({ server: 'fs', received: ['ACIA_WORKTREE', 'DATABASE_URL'], literal: ['HOME_DIR'] });
  });

  it('refuses mcpEnvAllow in the repository .acia/config.json', () => {
    const repo = repoWith(undefined);
    mkdirSync(join(repo, '.acia'));
    writeFileSync(join(repo, '.acia', 'config.json'), JSON.stringify({ mcpEnvAllow: ['DATABASE_URL'] }));
    expectAciaError(() => loadConfig({ repo, env: {}, flags: {}, userFile: null }), 'CONFIG_INVALID', /"mcpEnvAllow" is not allowed/);
  });

  it('refuses mcpServers in the repository .acia/config.json and accepts it in the user config', () => {
    const repo = repoWith(undefined);
    mkdirSync(join(repo, '.acia'));
    writeFileSync(join(repo, '.acia', 'config.json'), JSON.stringify({ mcpServers: { x: { command: 'evil' } } }));
    expectAciaError(() => loadConfig({ repo, env: {}, flags: {}, userFile: null }), 'CONFIG_INVALID', /"mcpServers" is not allowed in .*\.acia\/config\.json/);
    const userFile = join(repo, 'user.json');
    writeFileSync(userFile, JSON.stringify({ mcpServers: { fs: { command: 'node', args: ['s.js'], includeTools: ['read'], agents: { pm: 'none' } } } }));
    const loaded = loadConfig({ repo: null, env: {}, flags: {}, userFile });
    expect(loaded.config.mcpServers.fs).toMatchObject({ command: 'node', sandbox: true, includeTools: ['read'] });
    expect(loaded.sources.mcpServers).toBe(userFile);
    writeFileSync(userFile, JSON.stringify({ mcpServers: { fs: { command: 'node', sandboxx: false } } }));
    expectAciaError(() => loadConfig({ repo: null, env: {}, flags: {}, userFile }), 'CONFIG_INVALID', /sandboxx/);
  });
});

describe('MCP tool names and access', () => {
  it('names tools mcp__<server>__<tool>, replacing characters model APIs refuse and keeping names distinct within 64 characters', () => {
    expect(exposedName('fs', 'read_file')).toBe('mcp__fs__read_file');
    const dotted = exposedName('fs', 'read.file');
    expect(dotted).toMatch(/^mcp__fs__read_file_[0-9a-f]{8}$/);
    expect(dotted).not.toBe(exposedName('fs', 'read/file'));
    const long = exposedName('server', 'x'.repeat(100));
    expect(long.length).toBeLessThanOrEqual(64);
    expect(long).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it('gives the PM only read-only tools by default, applies includeTools/excludeTools and per-role access', () => {
    const listed = [
      { name: 'read', inputSchema: { type: 'object' as const }, annotations: { readOnlyHint: true } },
      { name: 'write', inputSchema: { type: 'object' as const } },
      { name: 'delete', inputSchema: { type: 'object' as const }, annotations: { readOnlyHint: false } },
    ];
    const spec = (extra: Record<string, unknown>) => loadMcpServers({ repo: null, user: user({ s: { command: 'x', ...extra } }) }).servers[0]!;
    const all = catalogTools(spec({}), listed);
    expect(all.map((t) => [t.name, t.roles])).toEqual([
      ['mcp__s__read', ['pm', 'dev', 'qa']],
      ['mcp__s__write', ['dev', 'qa']],
      ['mcp__s__delete', ['dev', 'qa']],
    ]);
    expect(catalogTools(spec({ excludeTools: ['delete'] }), listed).map((t) => t.remoteName)).toEqual(['read', 'write']);
    expect(catalogTools(spec({ includeTools: ['write'] }), listed).map((t) => t.remoteName)).toEqual(['write']);
    expect(catalogTools(spec({ agents: { qa: 'readOnly', pm: 'none' } }), listed).map((t) => t.roles)).toEqual([['dev', 'qa'], ['dev'], ['dev']]);
  });
});
