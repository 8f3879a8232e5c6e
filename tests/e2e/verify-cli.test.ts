// `acia verify`, `acia bundle`, `acia wiki` and `acia memory` through the BUILT cli (run `npm run build` first).
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir, writeSampleRun } from '../helpers/sample-run.js';

const cli = resolve('dist/bin/acia.js');
function acia(args: string[], cwd: string): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [cli, ...args], { cwd, encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('acia verify (built cli)', () => {
  it('exits 0 for intact runs, 1 naming the first bad seq, 2 for usage', async () => {
    const repo = tempDir();
    const { runId, runDir } = await writeSampleRun(repo);
    const ok = acia(['verify', '--repo', repo], repo);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(new RegExp(`^ok +${runId}: \\d+ entries`));

    const path = join(runDir, 'ledger.jsonl');
    const lines = readFileSync(path, 'utf8').split('\n');
    lines[3] = lines[3]!.replace('"attempt":1', '"attempt":2');
    writeFileSync(path, lines.join('\n'));
    const bad = acia(['verify', runId, '--repo', repo], repo);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toBe(`FAIL ${runId} at seq 3: HASH_MISMATCH seq 3: hash does not match the entry's content\n`);

    const json = acia(['verify', '--json'], repo);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, runs: [{ runId, ok: false, problems: [{ seq: 3, code: 'HASH_MISMATCH' }] }] });

    expect(acia(['verify', 'no-such-run', '--repo', repo], repo).code).toBe(2);
    const empty = tempDir();
    const none = acia(['verify'], empty);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('no .acia/runs');
  });

  it('bundles a run, verifies the bundle, and detects a modified bundle file', async () => {
    const repo = tempDir();
    const { runId } = await writeSampleRun(repo);
    const out = join(repo, 'out-bundle');
    const made = acia(['bundle', runId, '--repo', repo, '--out', out], repo);
    expect(made.code).toBe(0);
    const manifest = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')) as { files: Record<string, string> };
    for (const dir of ['goal/', 'context/', 'plans/', 'capability-map/', 'task-specs/', 'policy/requests/', 'policy/responses/', 'verification/', 'memory-ledger/', 'engine-trace/', 'task-io/', 'planner/']) {
      expect(Object.keys(manifest.files).some((f) => f.startsWith(dir))).toBe(true);
    }
    expect(acia(['verify', out], repo).code).toBe(0);
    const chosen = join(out, 'plans', 'plan-A.json');
    writeFileSync(chosen, readFileSync(chosen, 'utf8').replace('"plan-A"', '"plan-B"'));
    const tampered = acia(['verify', out], repo);
    expect(tampered.code).toBe(1);
    expect(tampered.stdout).toContain('plans/plan-A.json does not match its sha256');
  });

  it('rebuilds, lists and shows wiki pages and prints memory', async () => {
    const repo = tempDir();
    const { runId } = await writeSampleRun(repo);
    expect(acia(['wiki', 'rebuild', '--repo', repo], repo).code).toBe(0);
    const list = acia(['wiki', 'list', '--repo', repo], repo);
    expect(list.stdout.split('\n')).toEqual(expect.arrayContaining(['index.md', `runs/${runId}.md`, 'memory/lessons.md']));
    const show = acia(['wiki', 'show', `runs/${runId}`, '--repo', repo], repo);
    expect(show.stdout).toContain('```mermaid');
    expect(acia(['wiki', 'show', '../../etc/passwd', '--repo', repo], repo).code).toBe(2);
    expect(acia(['memory', '--repo', repo], repo).stdout).toContain('==> memory/project.md <==');
    mkdirSync(join(repo, 'x'));
    expect(acia(['wiki', 'path'], join(repo, 'x')).stdout.trim()).toBe(join(repo, 'x', '.acia', 'wiki'));
  });
});
