// Output modes and the read-side commands through the built CLI: plain lines, --json against the events
// schema, --quiet, then runs/show/verify/replay/bundle/wiki/memory/config/init and plan -> exec.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { CliEvent } from '../../src/core/acm/cli-events.js';
import { acia, ledgerOf, onlyRunId, tempDir } from './helpers.js';
import { sampleRepo, zeroLatencyScript } from './cli-helpers.js';

// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[/;

describe('acia demo --json', () => {
  let repo: string;
  let out: { code: number; stdout: string; stderr: string };
  beforeAll(() => {
    repo = join(tempDir('json'), 'repo');
    out = acia(['demo', '--json', '--dir', repo]);
  });

  it('writes only schema-valid NDJSON events on stdout: every ledger entry, then the result', () => {
    expect(out.code, out.stderr).toBe(0);
    const lines = out.stdout.trimEnd().split('\n');
    const events = lines.map((l) => CliEvent.parse(JSON.parse(l)));
    const entries = events.flatMap((e) => (e.kind === 'entry' ? [e.entry] : []));
    const runId = onlyRunId(repo);
    expect(entries).toEqual(ledgerOf(repo, runId));
    const last = events.at(-1)!;
    expect(last.kind).toBe('result');
    if (last.kind === 'result') expect(last.result).toMatchObject({ runId, reason: 'succeeded' });
    expect(events.filter((e) => e.kind === 'result')).toHaveLength(1);
  });

  it('keeps human text on stderr, and none of it is JSON', () => {
    expect(out.stderr).toContain('sample repo:');
    for (const line of out.stderr.split('\n')) expect(line.startsWith('{')).toBe(false);
  });

  it('leaves a run that the read-side commands can list, show, verify, replay and bundle', () => {
    const runId = onlyRunId(repo);
    const runs = acia(['runs', '--repo', repo]);
    expect(runs.code).toBe(0);
    expect(runs.stdout).toMatch(new RegExp(`${runId}\\s+succeeded\\s+\\$0\\.0\\d+`));
    const runsJson = JSON.parse(acia(['runs', '--repo', repo, '--json']).stdout) as unknown;
    expect(JSON.stringify(runsJson)).toContain(runId);

    const show = acia(['show', runId, '--repo', repo]);
    expect(show.code).toBe(0);
    expect(show.stdout).toMatch(/completed t1 dev\.implement/);
    expect(show.stdout).toMatch(/completed t2 qa\.verify .*tests passed/);

    const verify = acia(['verify', runId, '--repo', repo]);
    expect(verify.code).toBe(0);
    expect(verify.stdout).toMatch(new RegExp(`^ok +${runId}`));

    const replay = acia(['replay', runId, '--repo', repo]);
    expect(replay.code, replay.stderr).toBe(0);
    expect(replay.stdout).toContain('identical');

    const bundle = acia(['bundle', runId, '--repo', repo, '--out', join(repo, '..', 'bundle')]);
    expect(bundle.code, bundle.stderr).toBe(0);
    expect(acia(['verify', join(repo, '..', 'bundle')]).code).toBe(0);
  });

  it('has a wiki and memory pages to show', () => {
    const runId = onlyRunId(repo);
    const list = acia(['wiki', '--repo', repo]);
    expect(list.code).toBe(0);
    expect(list.stdout.split('\n')).toEqual(expect.arrayContaining(['index.md', `runs/${runId}.md`]));
    const page = acia(['wiki', 'show', `runs/${runId}.md`, '--repo', repo]);
    expect(page.stdout).toContain('```mermaid');
    const escape = acia(['wiki', 'show', '../../../etc/passwd', '--repo', repo]);
    expect(escape.code).toBe(2);
    const memory = acia(['memory', '--repo', repo]);
    expect(memory.code).toBe(0);
    expect(memory.stdout).toContain('==> memory/');
  });
});

describe('acia run without a TTY, --quiet, plan and exec, init and config', () => {
  let repo: string;
  let script: string;
  beforeAll(() => {
    repo = sampleRepo('plain');
    script = zeroLatencyScript('happy', tempDir('plain-script'));
  });

  it('prints one plain line per ledger entry on stderr, no colour, and the summary on stdout', () => {
    const r = acia(['run', 'Add a titleCase helper', '--repo', repo, '--model', `scripted:${script}`, '--sandbox', 'off']);
    expect(r.code, r.stderr).toBe(0);
    const runId = onlyRunId(repo);
    const eventLines = r.stderr.split('\n').filter((l) => /^\d\d:\d\d /.test(l));
    expect(eventLines).toHaveLength(ledgerOf(repo, runId).length);
    expect(r.stderr.split('\n').filter((l) => l !== '' && !/^\d\d:\d\d /.test(l))).toEqual([expect.stringMatching(/^warning: the sandbox is off/)]);
    expect(r.stdout + r.stderr).not.toMatch(ANSI);
    expect(r.stdout).toMatch(new RegExp(`^run ${runId}: succeeded`));
    expect(r.stdout).toContain(`acia verify ${runId}`);
  });

  it('--quiet prints only the summary', () => {
    const dir = join(tempDir('quiet'), 'repo');
    const r = acia(['demo', '--quiet', '--dir', dir]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^run \S+: succeeded/);
    // run, branch, cost, by role, ledger, wiki, next
    expect(r.stdout.split('\n').filter((l) => l !== '').length).toBeLessThanOrEqual(7);
    expect(r.stderr).not.toMatch(/^\d\d:\d\d /m);
    expect(r.stderr).not.toContain('sample repo:');
  });

  it('plan --out writes a plan set that exec runs without the PM (PLAN_SELECTED method human)', () => {
    const planFile = join(tempDir('planfile'), 'plan.json');
    const p = acia(['plan', 'Add a titleCase helper', '--repo', repo, '--model', `scripted:${script}`, '--out', planFile]);
    expect(p.code, p.stderr).toBe(0);
    expect(p.stdout).toContain('plan-A (chosen)');
    expect(p.stdout.match(/```mermaid/g)).toHaveLength(1);
    expect(p.stdout).toContain(`acia exec ${planFile}`);
    expect(existsSync(planFile)).toBe(true);
    expect(acia(['validate', planFile]).code).toBe(0);

    const before = (JSON.parse(acia(['runs', '--repo', repo, '--json']).stdout) as unknown[]).length;
    const e = acia(['exec', planFile, '--repo', repo, '--model', `scripted:${script}`, '--sandbox', 'off', '--quiet']);
    expect(e.code, e.stderr).toBe(0);
    const runId = /^run (\S+): succeeded/.exec(e.stdout)?.[1];
    expect(runId).toBeDefined();
    const entries = ledgerOf(repo, runId!);
    expect(entries.some((x) => x.actor === 'pm' && x.type === 'LLM_CALL')).toBe(false);
    expect(entries.find((x) => x.type === 'PLAN_SELECTED')?.data).toMatchObject({ method: 'human' });
    expect((JSON.parse(acia(['runs', '--repo', repo, '--json']).stdout) as unknown[]).length).toBe(before + 1);
  });

  it('init writes .acia/config.json and config shows where each value came from', () => {
    const dir = sampleRepo('init');
    const i = acia(['init', '--repo', dir]);
    expect(i.code, i.stderr).toBe(0);
    const file = join(dir, '.acia', 'config.json');
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ parallel: 2 });
    expect(acia(['init', '--repo', dir]).stdout).toContain('kept');

    const c = acia(['config', '--repo', dir], { env: { ACIA_MAX_ITERATIONS: '5' } });
    expect(c.code, c.stderr).toBe(0);
    expect(c.stdout).toMatch(/^parallel +2 +\(.*\.acia\/config\.json\)$/m);
    expect(c.stdout).toMatch(/^maxIterations +5 +\(env:ACIA_MAX_ITERATIONS\)$/m);
    expect(c.stdout).toMatch(/^commandTimeoutS +300 +\(default\)$/m);
    const json = JSON.parse(acia(['config', '--repo', dir, '--json']).stdout) as { sources: Record<string, string>; files: string[] };
    expect(json.files).toEqual([file]);
  });
});
