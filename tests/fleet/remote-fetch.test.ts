// A job's fetch of its run's branches from the remote. A new run has none there yet: git says the ref
// is missing, which is the remote's answer, so it is asked once (each new run used to wait out both retry
// delays, 2 s, before it began). A fetch that fails for another reason is still tried three times.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { expect, it } from 'vitest';
import { systemClock } from '../../src/core/acm/ids.js';
import { fetchRunRefs } from '../../src/fleet/repo-cache.js';
import { fetchWorthRetrying, remoteGit } from '../../src/fleet/remote-git.js';
import { Git } from '../../src/team/git.js';
import { bareRemote, sh, tempDirs } from './git-remote.js';

const tmp = tempDirs('acia-remote-fetch');

/** A clone of the remote whose every fetch is counted (its upload-pack is a script that logs and hands over). */
function countedClone(): { dir: string; fetches: () => number; url: string; base: string } {
  const { url, base } = bareRemote(tmp);
  const dir = path.join(tmp('clone'), 'c');
  sh(path.dirname(dir), 'clone', '-q', '--no-checkout', url, dir);
  const log = path.join(tmp('log'), 'fetches');
  const script = path.join(path.dirname(log), 'upload-pack.sh');
  fs.writeFileSync(script, `#!/bin/sh\necho fetch >> '${log}'\nexec git-upload-pack "$@"\n`, { mode: 0o755 });
  sh(dir, 'config', 'remote.origin.uploadpack', script);
  return { dir, url, base, fetches: () => (fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').filter(Boolean).length : 0) };
}

it('asks the remote once for a new run whose branches it does not have yet', async () => {
  const c = countedClone();
  const refs = await fetchRunRefs(new Git(systemClock), c.dir, 'r-new');
  expect([...refs.values()].filter((v) => v !== '')).toEqual([]);
  expect(c.fetches()).toBe(1);
  // Once the run's branch is on the remote, the same fetch brings it.
  const pusher = tmp('pusher');
  sh(pusher, 'clone', '-q', c.url, 'p');
  sh(path.join(pusher, 'p'), 'push', '-q', 'origin', `${c.base}:refs/heads/acia/r-new`);
  const after = await fetchRunRefs(new Git(systemClock), c.dir, 'r-new');
  expect(after.get('acia/r-new')).toBe(c.base);
  expect(c.fetches()).toBe(2);
});

it('still tries a fetch three times when it fails for another reason', async () => {
  const c = countedClone();
  // The remote goes away: the fetch fails the same way each time, after two waits.
  fs.rmSync(c.url, { recursive: true, force: true });
  fs.mkdirSync(c.url);
  const r = await remoteGit(c.dir, ['fetch', '-q', 'origin'], { allowFail: true });
  expect(r.exitCode).not.toBe(0);
  expect(fetchWorthRetrying(r.stderr)).toBe(true);
  expect(c.fetches()).toBe(3);
  expect(fetchWorthRetrying("fatal: couldn't find remote ref refs/heads/acia/r1")).toBe(false);
});
