// Issue 27, class 1: paths a clone plants under .acia/ and run ids that name them, through every surface
// that reads them — `acia clean`, the MCP server's resources, ACP's session/load — via the built CLI, with
// fake secrets in a temporary HOME and a hostile clone the test builds.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { client, ndJsonStream, PROTOCOL_VERSION, type SessionNotification } from '@agentclientprotocol/sdk';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import { writeAnchor } from '../../src/core/ledger/anchor.js';
import { readManifest } from '../../src/core/ledger/manifest.js';
import { writeSampleRun } from '../helpers/sample-run.js';
import { CLI, makeUser, SECRET, type User } from './hostile.js';

const ready = fs.existsSync(CLI);
const RUN = '20260102-030405-abc123';

/** A finished run this user really recorded: written through the real ledger, anchored in their state directory. */
async function recordedRun(u: User, runId = RUN): Promise<string> {
  const { runDir } = await writeSampleRun(u.repo, { runId, anchor: false });
  const m = (await readManifest(runDir))!;
  writeAnchor(u.env, runDir, runId, m.head, m.status, new Date(m.startedAt));
  return runDir;
}

describe.skipIf(!ready)('class 1: .acia paths and run ids a clone plants', () => {
  it('acia clean refuses a clone that tracks .acia/worktrees as a link, and deletes nothing outside the repository', async () => {
    const u = makeUser('clean-link');
    await recordedRun(u);
    const victim = path.join(u.dir, 'victim');
    fs.mkdirSync(path.join(victim, RUN), { recursive: true });
    fs.writeFileSync(path.join(victim, RUN, 'precious.txt'), 'keep me');
    fs.symlinkSync(victim, path.join(u.repo, '.acia', 'worktrees'));
    u.git('add', '-f', '.acia/worktrees');
    u.git('commit', '-qm', 'ship a worktrees link');

    const r = await u.acia(['clean']);
    expect(fs.readFileSync(path.join(victim, RUN, 'precious.txt'), 'utf8')).toBe('keep me');
    expect(r.code, r.stdout + r.stderr).toBe(2);
    expect(r.stderr).toMatch(/tracks ACIA's own run state \(\.acia\/worktrees\)/);

    // Untracked, the link is refused all the same, and a run planted beside the user's is never theirs to clean.
    u.git('rm', '-q', '--cached', '.acia/worktrees');
    u.git('commit', '-qm', 'untrack');
    const again = await u.acia(['clean']);
    expect(fs.existsSync(path.join(victim, RUN, 'precious.txt'))).toBe(true);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/refusing .*\.acia\/worktrees: it is a symbolic link/);
    fs.rmSync(path.join(u.repo, '.acia', 'worktrees'));
    await writeSampleRun(u.repo, { runId: '20260102-030405-planted', anchor: false });
    const planted = await u.acia(['clean', '--dry-run']);
    expect(planted.code, planted.stderr).toBe(0);
    expect(planted.stdout).toContain('keep    20260102-030405-planted: not recorded by ACIA for you');
    expect(planted.stdout).toContain(`would remove ${RUN} (succeeded)`);
  });

  it('acia mcp serves no ledger or wiki page that a link points at, and no run named by a path', async () => {
    const u = makeUser('mcp-links');
    const idRsa = path.join(u.home, '.ssh', 'id_rsa');
    const runDir = path.join(u.repo, '.acia', 'runs', RUN);
    fs.mkdirSync(runDir, { recursive: true });
    fs.symlinkSync(idRsa, path.join(runDir, 'ledger.jsonl'));
    fs.mkdirSync(path.join(u.repo, '.acia', 'wiki', 'runs'), { recursive: true });
    fs.symlinkSync(idRsa, path.join(u.repo, '.acia', 'wiki', 'index.md'));
    fs.symlinkSync(idRsa, path.join(u.repo, '.acia', 'wiki', 'runs', `${RUN}.md`));
    const mcp = new Client({ name: 'surface-test', version: '1' });
    await mcp.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', '--repo', u.repo], env: u.env, stderr: 'pipe' }));
    try {
      const seen: string[] = [];
      for (const uri of ['acia://wiki/index.md', `acia://runs/${RUN}/ledger`, `acia://runs/${RUN}/wiki`]) {
        const text = await mcp.readResource({ uri }).then((r) => JSON.stringify(r), (e: unknown) => `error: ${String(e)}`);
        seen.push(text);
        expect(text, uri).toMatch(/^error: .*(symbolic link|not a regular file)/);
      }
      const show = await mcp.callTool({ name: 'acia_show', arguments: { runId: '../../home/.ssh' } });
      seen.push(JSON.stringify(show));
      expect(show.isError).toBe(true);
      expect(seen.join('\n')).not.toContain(SECRET);
    } finally {
      await mcp.close();
    }
  });

  it('acp session/load loads neither `../` ids nor a run the clone shipped; a run this user recorded still loads', async () => {
    const u = makeUser('acp-load');
    const genuine = await recordedRun(u);
    // A run shipped with the clone (no anchor in this user's state) and the same ledger reached through `..`.
    await writeSampleRun(u.repo, { runId: '20260102-030405-planted', anchor: false });
    fs.cpSync(genuine, path.join(u.repo, 'evil'), { recursive: true });
    const child = spawn(process.execPath, [CLI, 'acp', '--model', 'scripted:none.json'], { cwd: u.repo, env: u.env, stdio: ['pipe', 'pipe', 'pipe'] });
    const updates: SessionNotification[] = [];
    const outcomes: Record<string, string> = {};
    try {
      const stream = ndJsonStream(Writable.toWeb(child.stdin) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>);
      await client()
        .onNotification('session/update', ({ params }) => {
          updates.push(params);
        })
        .connectWith(stream, async (agent) => {
          await agent.request('initialize', { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
          for (const id of ['../../evil', '20260102-030405-planted', RUN]) {
            outcomes[id] = await agent.request('session/load', { sessionId: id, cwd: u.repo, mcpServers: [] }).then(
              () => 'loaded',
              (e: unknown) => `refused: ${JSON.stringify(e)}`,
            );
          }
        });
    } finally {
      child.stdin.end();
      child.kill('SIGTERM');
    }
    expect(outcomes['../../evil']).toMatch(/^refused: .*"code":-32002/);
    expect(outcomes['20260102-030405-planted']).toMatch(/^refused: .*"code":-32002/);
    expect(outcomes[RUN]).toBe('loaded');
    expect(new Set(updates.map((n) => n.sessionId))).toEqual(new Set([RUN]));
  });
});
