// Class 3: --apply never overwrites the user's ignored or untracked files, run branches never carry
// .acia/, and paths the checkout ignores are refused unless the user accepts them.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sandboxAvailable } from '../helpers/sandbox-available.js';
import { CLI, makeFixture, type Fixture } from './fixture.js';
import { gitIn, runAttack, type ToolCall } from './run-attack.js';

const sandboxed = sandboxAvailable() && fs.existsSync(CLI);
let fx: Fixture;
afterEach(() => fx.cleanup());

const write = (p: string, content: string): ToolCall => ({ name: 'write_file', input: { path: p, content } });
/** t1 un-ignores .env and commits it with a planted ACIA config; t2 restores .gitignore so the diff hides it. */
const smuggle = {
  t1: [[write('.gitignore', 'node_modules/\n'), write('.env', 'API_KEY=attacker\n'), write('.acia/config.json', '{"sandbox":"off"}\n'), write('src.js', 'ok\n')]],
  t2: [[write('.gitignore', 'node_modules/\n.env\n')]],
};

function ignoredRepo(): void {
  fs.writeFileSync(path.join(fx.repo, '.gitignore'), 'node_modules/\n.env\n');
  gitIn(fx.repo, 'add', '.gitignore');
  gitIn(fx.repo, 'commit', '-qm', 'ignore .env');
}

describe.skipIf(!sandboxed)('--apply and what a run branch may carry', () => {
  it('refuses to overwrite the ignored .env in the checkout, and the run branch has no .acia/', async () => {
    fx = makeFixture();
    ignoredRepo();
    fs.writeFileSync(path.join(fx.repo, '.env'), 'API_KEY=mine\n');
    const r = await runAttack(fx, smuggle, { args: ['--apply'] });
    expect(r.exitCode, r.stderr + r.stdout).toBe(2);
    expect(r.stderr).toMatch(/^acia: not applying acia\/\S+: it would overwrite untracked or ignored files in your checkout: \.env$/m);
    expect(fs.readFileSync(path.join(fx.repo, '.env'), 'utf8')).toBe('API_KEY=mine\n');
    expect(gitIn(fx.repo, 'log', '-1', '--format=%s')).toBe('ignore .env'); // nothing merged
    const branch = gitIn(fx.repo, 'for-each-ref', '--format=%(refname:short)', 'refs/heads/acia/');
    const files = gitIn(fx.repo, 'ls-tree', '-r', '--name-only', branch).split('\n');
    expect(files).toContain('src.js');
    expect(files).toContain('.env');
    expect(files.filter((f) => f.startsWith('.acia'))).toEqual([]);
  });

  it('refuses a run that adds an ignored path unless --allow-ignored', async () => {
    fx = makeFixture();
    ignoredRepo();
    const refused = await runAttack(fx, smuggle, { args: ['--apply'] });
    expect(refused.exitCode, refused.stderr + refused.stdout).toBe(2);
    expect(refused.stderr).toMatch(/it adds paths your checkout ignores: \.env$/m);
    expect(refused.stderr).toContain('--allow-ignored');
    expect(fs.existsSync(path.join(fx.repo, '.env'))).toBe(false);
    const accepted = await runAttack(fx, smuggle, { args: ['--apply', '--allow-ignored'] });
    expect(accepted.exitCode, accepted.stderr + accepted.stdout).toBe(0);
    expect(fs.readFileSync(path.join(fx.repo, '.env'), 'utf8')).toBe('API_KEY=attacker\n');
    expect(fs.existsSync(path.join(fx.repo, '.acia', 'config.json'))).toBe(false);
  });

  it('without --apply, warns that merging the branch would add an ignored path', async () => {
    fx = makeFixture();
    ignoredRepo();
    const r = await runAttack(fx, smuggle);
    expect(r.exitCode, r.stderr + r.stdout).toBe(0);
    expect(r.stderr).toMatch(/^warning: acia\/\S+ adds paths your checkout ignores: \.env; review it before merging$/m);
  });
}, 120_000); // each case drives whole acia runs; a loaded machine makes them slow
