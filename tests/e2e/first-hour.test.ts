// The first hour with ACIA, through the built CLI: resume picks the latest run that can go on and
// checks credentials before it restarts anything; every command finds the repository from a
// subdirectory; `acia clean`; --include-uncommitted and --apply refuse before the team runs; `acia
// init`; the documented script example is valid and runs.
import { mkdirSync, readFileSync, writeFileSync, existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropicServer, type FakeServer } from '../../src/core/llm/fake-server.js';
import { loadScript } from '../../src/core/llm/script.js';
import { spawnSync } from 'node:child_process';
import { CLI, acia, git, ledgerOf, tempDir, testsPassOn } from './helpers.js';
import { ROOT, SCENARIOS, expectCleanError, sampleRepo, startAcia, zeroLatencyScript } from './cli-helpers.js';

const runsOf = (repo: string): string[] => (existsSync(join(repo, '.acia', 'runs')) ? readdirSync(join(repo, '.acia', 'runs')).sort() : []);

describe('resume: the latest run that can go on, credentials first', () => {
  let server: FakeServer;
  beforeAll(async () => {
    server = await startFakeAnthropicServer({ script: await loadScript(join(SCENARIOS, 'escalate', 'script.json')) });
  });
  afterAll(async () => server.close());

  it('a missing key leaves the run resumable; resume without an id skips a newer finished run; a finished run is refused', async () => {
    const repo = sampleRepo('fh-resume');
    const env = { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: server.url };
    const flags = ['--repo', repo, '--model', 'anthropic:claude-sonnet-5-5', '--max-iterations', '1', '--test-command', 'node run-tests.js', '--quiet'];
    const first = await startAcia(['run', 'Add a titleCase(text) helper', ...flags], { env }).done;
    expect(first.code, first.stderr).toBe(3);
    const [waiting] = runsOf(repo);
    const before = ledgerOf(repo, waiting!).length;

    // no key: refused before anything is recorded, and the run still waits
    const noKey = await startAcia(['resume', '--repo', repo, '--answer', 'skip'], { env: { ANTHROPIC_BASE_URL: server.url } }).done;
    expectCleanError(noKey, 2, /needs ANTHROPIC_API_KEY/);
    expect(ledgerOf(repo, waiting!)).toHaveLength(before);

    // a newer run that succeeds
    const happy = zeroLatencyScript('happy', tempDir('fh-script'));
    expect(acia(['run', 'Add titleCase', '--repo', repo, '--model', `scripted:${happy}`, '--quiet']).code).toBe(0);
    const newer = runsOf(repo).find((r) => r !== waiting)!;
    expectCleanError(acia(['resume', newer, '--repo', repo]), 2, new RegExp(`run ${newer} is finished \\(it succeeded\\)`));

    // resume without an id passes over the newer finished run and answers the waiting one
    // (skipping the needed verification ends it, though not as a success: the outcome rule)
    const resumed = await startAcia(['resume', '--repo', repo, '--answer', 'skip'], { env }).done;
    expect(resumed.code, resumed.stderr).toBe(1);
    expect(resumed.stdout).toMatch(new RegExp(`^run ${waiting!}: verification failed — task \\S+ was skipped by a human`));
    expect(ledgerOf(repo, waiting!).find((e) => e.type === 'HUMAN_RESPONSE')?.data).toMatchObject({ action: 'skip' });
    expectCleanError(acia(['resume', '--repo', repo]), 2, /no run in .* can go on: the latest, .* is finished \(it succeeded\)/);
  }, 120_000);
});

describe('from a subdirectory', () => {
  it('verify, wiki, bundle, memory, config, runs and show find the repository root', () => {
    const repo = sampleRepo('fh-subdir');
    const script = zeroLatencyScript('happy', tempDir('fh-subdir-script'));
    expect(acia(['run', 'Add titleCase', '--repo', repo, '--model', `scripted:${script}`, '--quiet']).code).toBe(0);
    const [runId] = runsOf(repo);
    mkdirSync(join(repo, '.acia'), { recursive: true });
    writeFileSync(join(repo, '.acia', 'config.json'), JSON.stringify({ parallel: 3 }));
    const cwd = join(repo, 'src');
    const ok = (args: string[]) => {
      const r = acia(args, { cwd });
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
      return r.stdout;
    };
    expect(ok(['verify', runId!])).toContain(`ok   ${runId!}`);
    expect(ok(['verify'])).toContain(runId!);
    expect(ok(['wiki', 'list'])).toContain(`runs/${runId!}.md`);
    expect(ok(['bundle', runId!])).toContain(join(repo, '.acia', 'bundles', runId!));
    expect(ok(['memory'])).toContain('memory/project.md');
    expect((JSON.parse(ok(['config', '--json'])) as { config: { parallel: number } }).config.parallel).toBe(3);
    expect(ok(['runs'])).toContain(runId!);
    expect(ok(['show', runId!])).toContain('run succeeded');
  });
});

describe('acia clean', () => {
  it('removes finished runs\' branches and worktrees, never a run awaiting a human', () => {
    const repo = sampleRepo('fh-clean');
    // a script path with a space and a quote: the printed resume command must still run as printed
    const dir = join(tempDir('fh-clean-scripts'), "my scripts'");
    mkdirSync(dir);
    const flags = ['--repo', repo, '--max-iterations', '1', '--test-command', 'node run-tests.js', '--quiet'];
    const first = acia(['run', 'Add titleCase', ...flags, '--model', `scripted:${zeroLatencyScript('escalate', dir)}`]);
    expect(first.code).toBe(3);
    const printed = first.stdout.split('\n').map((l) => l.trim().replace(/^(next|or)\s+/, '')).find((l) => l.endsWith('--answer skip'))!;
    expect(printed).toContain(`--model 'scripted:${dir.replace(/'/g, `'\\''`)}/escalate-script.json'`);
    const [waiting] = runsOf(repo);
    expect(acia(['run', 'Add titleCase', ...flags, '--model', `scripted:${zeroLatencyScript('happy', dir)}`]).code).toBe(0);
    const done = runsOf(repo).find((r) => r !== waiting)!;
    const branches = () => git(repo, 'branch', '--format=%(refname:short)').split('\n');
    expect(branches()).toContain(`acia/${done}`);
    // the finished run's branch can be checked out: its worktrees went when the run ended
    git(repo, 'checkout', '-q', `acia/${done}`);
    git(repo, 'checkout', '-q', 'main');

    expectCleanError(acia(['clean', '--repo', repo, '--older-than', 'soon']), 2, /--older-than expects a duration/);
    const recent = acia(['clean', '--repo', repo, '--older-than', '7d']);
    expect(recent.stdout).toContain(`keep    ${done}: newer than --older-than`);
    const dry = acia(['clean', '--repo', repo, '--dry-run']);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain(`would remove ${done} (succeeded)`);
    expect(dry.stdout).toContain(`keep    ${waiting!}: waiting for a human answer`);
    expect(branches()).toContain(`acia/${done}`);

    const r = acia(['clean', '--repo', join(repo, 'src')]);
    expect(r.code, r.stderr).toBe(0);
    expect(branches().filter((b) => b.includes(done))).toEqual([]);
    expect(branches()).toContain(`acia/${waiting!}`);
    expect(branches().some((b) => b.startsWith(`acia-tasks/${waiting!}/`))).toBe(true);
    // the ledgers stay: the cleaned run still verifies, and the waiting one still resumes
    expect(acia(['verify', done, '--repo', repo]).code).toBe(0);
    const resumed = spawnSync('sh', ['-c', `'${process.execPath}' '${CLI}' ${printed.slice('acia '.length)}`], { cwd: ROOT, encoding: 'utf8' });
    // It runs as printed and ends; skipping the needed verification is no success (the outcome rule).
    expect(resumed.status, resumed.stdout + resumed.stderr).toBe(1);
    expect(ledgerOf(repo, waiting!).find((e) => e.type === 'HUMAN_RESPONSE')?.data).toMatchObject({ action: 'skip' });
    expect(ledgerOf(repo, waiting!).at(-1)?.data).toMatchObject({ reason: 'verification_failed' });
  });
});

describe('acia clean --all, acia resume and acia show without an id', () => {
  it('keeps a resumable run unless --all, then resume refuses it, saying why; show picks the latest run', () => {
    const repo = sampleRepo('fh-clean-all');
    const flags = ['--repo', repo, '--max-iterations', '1', '--test-command', 'node run-tests.js', '--quiet'];
    const first = acia(['run', 'Add titleCase', ...flags, '--model', `scripted:${zeroLatencyScript('escalate', tempDir('fh-clean-all-script'))}`]);
    expect(first.code).toBe(3);
    const [waiting] = runsOf(repo);
    const show = acia(['show', '--repo', repo]);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toMatch(new RegExp(`^run ${waiting!}: awaiting_human`));
    expect(acia(['clean', '--repo', repo]).stdout).toContain(`keep    ${waiting!}: waiting for a human answer (\`acia resume\` it, or clean it with --all)`);
    const all = acia(['clean', '--repo', repo, '--all']);
    expect(all.code, all.stderr).toBe(0);
    expect(all.stdout).toContain(`removed ${waiting!} (awaiting_human)`);
    expect(git(repo, 'branch', '--format=%(refname:short)').split('\n').filter((b) => b.includes(waiting!))).toEqual([]);
    for (const args of [['resume', '--repo', repo], ['resume', waiting!, '--repo', repo, '--answer', 'skip']]) {
      const r = acia(args);
      expect(r.code, r.stderr).not.toBe(0);
      expect(r.stderr).toContain(`run ${waiting!} cannot be resumed: its branch acia/${waiting!} is gone (\`acia clean\` removed it)`);
    }
    // Nothing was recorded by the refused resumes.
    expect(ledgerOf(repo, waiting!).some((e) => e.type === 'RUN_RESUMED')).toBe(false);
  });
});

describe('refused before the team runs', () => {
  it('--include-uncommitted with a huge untracked tree, unless forced; dependency dirs and ignored files are never taken', () => {
    const repo = sampleRepo('fh-untracked');
    const script = zeroLatencyScript('happy', tempDir('fh-untracked-script'));
    mkdirSync(join(repo, 'gen'));
    for (let i = 0; i < 1001; i++) writeFileSync(join(repo, 'gen', `f${i}.txt`), `${i}\n`);
    const args = ['run', 'Add titleCase', '--repo', repo, '--model', `scripted:${script}`, '--include-uncommitted', '--quiet'];
    expectCleanError(acia(args), 2, /would snapshot 1001 untracked files \(most in gen\/ \(1001\)\); refusing past 1000/);
    expect(runsOf(repo)).toEqual([]);

    const baseOf = (runId: string) => (ledgerOf(repo, runId).find((e) => e.type === 'RUN_STARTED')!.data as { baseCommit: string }).baseCommit;
    const forced = acia([...args, '--force-uncommitted']);
    expect(forced.code, forced.stderr).toBe(0);
    expect(git(repo, 'ls-tree', '-r', '--name-only', baseOf(runsOf(repo)[0]!))).toContain('gen/f1000.txt');

    // node_modules (no .gitignore, as in a package from a registry) and ignored files stay out
    git(repo, 'clean', '-qfdx', 'gen');
    mkdirSync(join(repo, 'node_modules', 'dep'), { recursive: true });
    for (let i = 0; i < 1500; i++) writeFileSync(join(repo, 'node_modules', 'dep', `m${i}.js`), '');
    writeFileSync(join(repo, '.gitignore'), 'secret.txt\n');
    writeFileSync(join(repo, 'secret.txt'), 'ignored\n');
    writeFileSync(join(repo, 'NOTES.md'), 'untracked and wanted\n');
    const r = acia(args);
    expect(r.code, r.stderr).toBe(0);
    const tree = git(repo, 'ls-tree', '-r', '--name-only', baseOf(runsOf(repo)[1]!)).split('\n');
    expect(tree).toContain('NOTES.md');
    expect(tree).toContain('.gitignore');
    expect(tree).not.toContain('secret.txt');
    expect(tree.some((f) => f.startsWith('node_modules/'))).toBe(false);
  });

  it('--apply with a dirty tree, before any run exists', () => {
    const repo = sampleRepo('fh-apply');
    writeFileSync(join(repo, 'README.md'), 'edited\n');
    const script = zeroLatencyScript('happy', tempDir('fh-apply-script'));
    expectCleanError(acia(['run', 'Add titleCase', '--repo', repo, '--model', `scripted:${script}`, '--apply']), 2, /--apply needs a clean working tree/);
    expect(runsOf(repo)).toEqual([]);
  });
});

describe('acia init', () => {
  it('creates the config, the memory pages and the ignore entry its help promises', () => {
    const repo = sampleRepo('fh-init');
    const help = acia(['init', '--help']).stdout;
    expect(help).toContain('.acia/config.json, memory pages, ignore entry');
    const r = acia(['init'], { cwd: join(repo, 'src') });
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(join(repo, '.acia', 'config.json'))).toBe(true);
    for (const page of ['project', 'conventions', 'lessons']) expect(existsSync(join(repo, '.acia', 'wiki', 'memory', `${page}.md`))).toBe(true);
    expect(readFileSync(join(repo, '.git', 'info', 'exclude'), 'utf8')).toContain('.acia/');
    expect(git(repo, 'status', '--porcelain')).toBe('');
  });
});

describe('docs/scripted-model.md', () => {
  it('its example validates as a script and runs to success', () => {
    const doc = readFileSync(join(ROOT, 'docs', 'scripted-model.md'), 'utf8');
    const example = doc.slice(doc.indexOf('## Example')).match(/```json\n([\s\S]*?)```/)![1]!;
    const file = join(tempDir('fh-doc'), 'example.json');
    writeFileSync(file, example);
    const v = acia(['validate', '--kind', 'script', file]);
    expect(v.code, v.stdout + v.stderr).toBe(0);
    const repo = sampleRepo('fh-doc-run');
    const r = acia(['run', 'Add titleCase', '--repo', repo, '--model', `scripted:${file}`, '--quiet']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(testsPassOn(repo, `acia/${runsOf(repo)[0]!}`)).toBe(true);
  });
});
