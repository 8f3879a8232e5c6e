// Class 6: secrets the sandbox used to show — git config credentials, the user's checkout when it is a
// linked worktree or a submodule checkout, ~/.ssh and ~/.aws behind a symlinked HOME.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sandboxAvailable } from '../helpers/sandbox-available.js';
import { CLI, makeFixture, type Fixture } from './fixture.js';
import { gitIn, runAttack } from './run-attack.js';

const sandboxed = sandboxAvailable() && fs.existsSync(CLI);
let fx: Fixture;
afterEach(() => fx.cleanup());

const SECRETS = {
  mainEnv: 'MAIN-ENV-5e1f',
  linkedEnv: 'LINKED-ENV-77aa',
  urlToken: 'ghs_URLTOKEN9f3',
  header: 'EXTRAHEADER-b64-c0ffee',
  ssh: 'SSH-PRIVATE-KEY-d00d',
  aws: 'AWS-CREDENTIALS-beef',
  superEnv: 'SUPER-ENV-4242',
};

/** Everything the run recorded (ledger and blobs), where any output the command saw would be. */
function recorded(repo: string): string {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) out.push(fs.readFileSync(p, 'utf8'));
    }
  };
  walk(path.join(repo, '.acia', 'runs'));
  return out.join('\n');
}

describe.skipIf(!sandboxed)('secrets stay outside the sandbox', () => {
  it('hides git credentials, a linked-worktree checkout and a symlinked HOME', async () => {
    fx = makeFixture();
    gitIn(fx.repo, 'config', 'remote.origin.url', `https://x-access-token:${SECRETS.urlToken}@github.com/o/r.git`);
    gitIn(fx.repo, 'config', 'http.https://github.com/.extraheader', `AUTHORIZATION: basic ${SECRETS.header}`);
    fs.writeFileSync(path.join(fx.repo, '.env'), `${SECRETS.mainEnv}\n`);
    const linked = path.join(fx.base, 'linked');
    gitIn(fx.repo, 'worktree', 'add', '-q', '-b', 'feature', linked);
    fs.writeFileSync(path.join(linked, '.env'), `${SECRETS.linkedEnv}\n`);
    fs.mkdirSync(path.join(fx.home, '.ssh'));
    fs.writeFileSync(path.join(fx.home, '.ssh', 'id_rsa'), SECRETS.ssh);
    fs.mkdirSync(path.join(fx.home, '.aws'));
    fs.writeFileSync(path.join(fx.home, '.aws', 'credentials'), SECRETS.aws);
    const homeLink = path.join(fx.base, 'home-link');
    fs.symlinkSync(fx.home, homeLink);
    const look = [
      `cat ${fx.repo}/.env ${linked}/.env`,
      `cat ${homeLink}/.ssh/id_rsa ${fx.home}/.ssh/id_rsa ${homeLink}/.aws/credentials ${fx.home}/.aws/credentials`,
      'git config --list; git remote -v; cat "$(git rev-parse --git-common-dir)/config"',
      `find ${fx.base} -name .env -o -name id_rsa 2>/dev/null | xargs cat`,
      'git log --oneline | wc -l; echo LOOKED',
    ].join('; ');
    const r = await runAttack(fx, [[{ name: 'run_command', input: { command: look } }]], { args: ['--repo', linked], env: { HOME: homeLink } });
    expect(r.exitCode, r.stderr + r.stdout).toBe(0);
    const seen = recorded(linked);
    expect(seen).toContain('LOOKED'); // the command ran, and in-sandbox git still works
    const leaked = Object.entries(SECRETS).filter(([, v]) => seen.includes(v) || r.stdout.includes(v) || r.stderr.includes(v));
    expect(leaked.map(([k]) => k)).toEqual([]);
  });

  it('hides the superproject and the submodule checkout when acia runs in a submodule', async () => {
    fx = makeFixture();
    const sup = path.join(fx.base, 'super');
    fs.mkdirSync(sup);
    gitIn(sup, 'init', '-q', '-b', 'main');
    gitIn(sup, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', fx.repo, 'sub');
    gitIn(sup, 'commit', '-qm', 'sub');
    const sub = path.join(sup, 'sub');
    fs.writeFileSync(path.join(sup, '.env'), `${SECRETS.superEnv}\n`);
    fs.writeFileSync(path.join(sub, '.env'), `${SECRETS.linkedEnv}\n`);
    gitIn(sub, 'config', 'http.extraheader', `AUTHORIZATION: basic ${SECRETS.header}`);
    const look = `cat ${sup}/.env ${sub}/.env; cat ${sup}/.git/modules/sub/config; git config --list; echo LOOKED`;
    const r = await runAttack(fx, [[{ name: 'run_command', input: { command: look } }]], { args: ['--repo', sub] });
    expect(r.exitCode, r.stderr + r.stdout).toBe(0);
    const seen = recorded(sub);
    expect(seen).toContain('LOOKED');
    const leaked = Object.entries(SECRETS).filter(([, v]) => seen.includes(v));
    expect(leaked.map(([k]) => k)).toEqual([]);
  });
}, 120_000); // each case drives whole acia runs; a loaded machine makes them slow
