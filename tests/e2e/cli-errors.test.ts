// Every command's --help, and bad input through the built CLI: one clear line, the right exit code, no stack trace.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { acia, git, tempDir } from './helpers.js';
import { expectCleanError, ROOT, sampleRepo, zeroLatencyScript } from './cli-helpers.js';

const COMMANDS = ['run', 'plan', 'exec', 'resume', 'demo', 'runs', 'show', 'replay', 'validate', 'verify', 'tool', 'bundle', 'wiki', 'memory', 'init', 'config'];

describe('acia --help', () => {
  it.each(COMMANDS)('%s --help exits 0 and shows an example', (cmd) => {
    const r = acia([cmd, '--help']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`Usage: acia ${cmd}`);
    expect(r.stdout).toMatch(/Examples?:\n {2}acia /);
  });

  it('lists every command, the exit codes and examples at the top level', () => {
    const r = acia(['--help']);
    expect(r.code).toBe(0);
    for (const cmd of COMMANDS) expect(r.stdout).toMatch(new RegExp(`^  ${cmd} `, 'm'));
    expect(r.stdout).toContain('130 interrupted');
    expect(r.stdout).toContain('acia demo');
  });

  it('treats a bare `acia` as a usage error and still shows the help', () => {
    const r = acia([]);
    expect(r.code).toBe(2);
    expect(r.stdout + r.stderr).toContain('Usage: acia');
  });
});

describe('bad input', () => {
  let repo: string;
  let script: string;
  beforeAll(() => {
    repo = sampleRepo('errors');
    script = zeroLatencyScript('happy', tempDir('errors-script'));
  });

  it('an unknown command, with a suggestion', () => {
    expectCleanError(acia(['rn']), 2, /unknown command 'rn'/);
  });

  it('an unknown flag', () => {
    expectCleanError(acia(['runs', '--frob']), 2, /unknown option '--frob'/);
    expectCleanError(acia(['run', 'x', '--paralel', '2']), 2, /unknown option '--paralel'/);
  });

  it('a config file with an unknown key names the key and the file', () => {
    const dir = sampleRepo('badkey');
    mkdirSync(join(dir, '.acia'), { recursive: true });
    writeFileSync(join(dir, '.acia', 'config.json'), '{"modle":"anthropic:x"}');
    expectCleanError(acia(['config', '--repo', dir]), 2, /unknown key "modle" in .*\.acia\/config\.json/);
    expectCleanError(acia(['run', 'x', '--repo', dir, '--model', `scripted:${script}`]), 2, /unknown key "modle" in .*\.acia\/config\.json/);
  });

  it('a config file with a bad value names the key and the file', () => {
    const dir = sampleRepo('badvalue');
    mkdirSync(join(dir, '.acia'), { recursive: true });
    writeFileSync(join(dir, '.acia', 'config.json'), '{"parallel":"lots"}');
    expectCleanError(acia(['config', '--repo', dir]), 2, /"parallel" in .*\.acia\/config\.json/);
  });

  it('a user config under XDG_CONFIG_HOME with a bad value names that file', () => {
    const xdg = tempDir('xdg');
    mkdirSync(join(xdg, 'acia'));
    writeFileSync(join(xdg, 'acia', 'config.json'), '{"sandbox":"maybe"}');
    expectCleanError(acia(['config', '--repo', repo], { env: { XDG_CONFIG_HOME: xdg } }), 2, /"sandbox" in .*xdg.*\/acia\/config\.json/);
  });

  it('a bad environment variable is named', () => {
    expectCleanError(acia(['config', '--repo', repo], { env: { ACIA_PARALLEL: 'abc' } }), 2, /"parallel" in \$ACIA_PARALLEL/);
  });

  it('an unknown model prefix', () => {
    expectCleanError(acia(['run', 'x', '--repo', repo, '--model', 'gemini:x']), 2, /"model" in --model: expected anthropic:<id>, openai:<id>, scripted:<file> or chaos:<file>/);
  });

  it('a flag that is not a number', () => {
    expectCleanError(acia(['run', 'x', '--repo', repo, '--model', `scripted:${script}`, '--parallel', 'abc']), 2, /--parallel expects a number, got "abc"/);
    expectCleanError(acia(['demo', '--parallel', 'abc', '--dir', join(tempDir('demo-abc'), 'repo')]), 2, /--parallel expects a positive whole number/);
  });

  it('a missing runId', () => {
    // show takes the latest run; with none yet it says so.
    expectCleanError(acia(['show', '--repo', repo]), 2, /no runs in .* yet/);
    expectCleanError(acia(['replay', '--repo', repo]), 2, /missing required argument 'runId'/);
    expectCleanError(acia(['bundle', '--repo', repo]), 2, /missing required argument 'runId'/);
  });

  it('a runId that does not exist', () => {
    const id = '20990101-000000-abcdef';
    for (const cmd of ['show', 'replay', 'verify', 'resume']) expectCleanError(acia([cmd, id, '--repo', repo]), 2, new RegExp(`no run ${id}`));
    expectCleanError(acia(['resume', '--repo', repo]), 2, /no unfinished run/);
  });

  it('a plan file that fails validation, for exec and for validate', () => {
    const dir = tempDir('badplan');
    const cyclic = join(dir, 'cyclic.json');
    // a valid example plan, plus an edge back from the last task to the first
    const plan = JSON.parse(readFileSync(join(ROOT, 'schemas', 'examples', 'plan-guarded-join.json'), 'utf8')) as { tasks: { id: string }[]; edges: { from: string; to: string }[] };
    plan.edges.push({ from: plan.tasks.at(-1)!.id, to: plan.tasks[0]!.id });
    writeFileSync(cyclic, JSON.stringify(plan));
    expectCleanError(acia(['exec', cyclic, '--repo', repo, '--model', `scripted:${script}`]), 2, /cyclic\.json is not a valid plan: .*cycle/);
    const v = acia(['validate', cyclic]);
    expect(v.code).toBe(1);
    expect(v.stdout).toMatch(/cycle/);
    const notJson = join(dir, 'broken.json');
    writeFileSync(notJson, '{ nope');
    expectCleanError(acia(['exec', notJson, '--repo', repo, '--model', `scripted:${script}`]), 2, /broken\.json is not valid JSON/);
    expectCleanError(acia(['exec', join(dir, 'absent.json'), '--repo', repo, '--model', `scripted:${script}`]), 2, /no such file/);
    // a rejected plan starts no run
    expect(acia(['runs', '--repo', repo, '--json']).stdout).not.toContain('"runId"');
  });

  it('a --model script file that does not exist, resolved from where it was typed', () => {
    expectCleanError(acia(['run', 'x', '--repo', repo, '--model', 'scripted:nope.json'], { cwd: tempDir('cwd') }), 2, /no such script file: .*cwd.*\/nope\.json/);
  });

  it('a directory that is not a git repository', () => {
    expectCleanError(acia(['run', 'x', '--repo', tempDir('nogit'), '--model', `scripted:${script}`]), 2, /is not inside a git repository/);
  });

  it('with --json, an error still goes to stderr and stdout stays empty', () => {
    expectCleanError(acia(['run', 'x', '--json', '--repo', tempDir('nogit-json'), '--model', `scripted:${script}`]), 2, /is not inside a git repository/);
  });

  it('a repository with no commits', () => {
    const dir = tempDir('nocommit');
    git(dir, 'init', '-q');
    expectCleanError(acia(['run', 'x', '--repo', dir, '--model', `scripted:${script}`]), 2, /has no commits yet/);
  });

  it('acia run without ANTHROPIC_API_KEY names the key and points to --model and acia demo', () => {
    const r = acia(['run', 'x', '--repo', repo]);
    expectCleanError(r, 2, /ANTHROPIC_API_KEY/);
    expect(r.stderr).toContain('--model');
    expect(r.stderr).toContain('acia demo');
  });

  it('--debug adds the stack trace', () => {
    const r = acia(['show', '20990101-000000-abcdef', '--repo', repo, '--debug']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^\s+at .+/m);
  });
});
