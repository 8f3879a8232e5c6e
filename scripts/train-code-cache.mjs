// Part of the build (scripts/bundle-cli.mjs): one `acia run` of a throwaway repository against a stand-in
// model endpoint on 127.0.0.1, stopped (Ctrl-C) once its first model request arrives, with
// scripts/code-cache-trainer.cjs preloaded to rewrite the bundle's code caches as that run left them: the
// functions the start-up path compiled come with the cache then. Anything that keeps the run from getting
// there (no git, a slow machine) leaves the caches the build made from the bare sources, with a warning.
import { spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const TIMEOUT_MS = 20_000;

export async function trainCodeCache(bin, cacheDir) {
  const root = mkdtempSync(join(tmpdir(), 'acia-code-cache-'));
  const server = createServer((req, res) => {
    req.resume();
    if (req.method === 'POST') onRequest();
    res.writeHead(529, { 'content-type': 'application/json', 'retry-after': '60' });
    res.end(JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'code cache training' } }));
  });
  let onRequest = () => {};
  let timer;
  try {
    const repo = join(root, 'repo');
    mkdirSync(repo);
    writeFileSync(join(repo, 'package.json'), '{ "name": "sample", "scripts": { "test": "node --test" } }\n');
    writeFileSync(join(repo, 'index.js'), 'export const add = (a, b) => a + b;\n');
    for (const args of [['init', '-q'], ['add', '-A'], ['-c', 'user.name=acia', '-c', 'user.email=acia@localhost', 'commit', '-qm', 'sample']]) {
      if (spawnSync('git', args, { cwd: repo, stdio: 'ignore' }).status !== 0) throw new Error(`git ${args.at(-2)} failed`);
    }
    await new Promise((r) => server.listen(0, '127.0.0.1', r));
    const home = join(root, 'home');
    const env = {
      PATH: process.env.PATH,
      HOME: home,
      XDG_CONFIG_HOME: join(home, 'config'),
      XDG_STATE_HOME: join(home, 'state'),
      XDG_CACHE_HOME: join(home, 'cache'),
      ANTHROPIC_API_KEY: 'code-cache-training',
      ANTHROPIC_BASE_URL: `http://127.0.0.1:${server.address().port}`,
      ACIA_CODE_CACHE_OUT: resolve(cacheDir),
      ACIA_CODE_CACHE_BIN: resolve(bin),
    };
    const child = spawn(process.execPath, ['-r', resolve('scripts/code-cache-trainer.cjs'), join(resolve(bin), 'main.js'), 'run', 'add a subtract function', '--repo', repo, '--model', 'anthropic:claude-sonnet-4-5', '--sandbox', 'off', '--quiet'], { cwd: repo, env, stdio: process.env.ACIA_TRAIN_DEBUG ? 'inherit' : 'ignore' });
    const exited = new Promise((r) => child.on('close', (code, signal) => r({ code, signal })));
    const asked = new Promise((r) => (onRequest = r));
    timer = setTimeout(() => child.kill('SIGKILL'), TIMEOUT_MS);
    const first = await Promise.race([asked.then(() => 'asked'), exited.then(() => 'exited')]);
    if (first !== 'asked') throw new Error('the run ended before its first model request');
    // Ctrl-C: the run stops after this step and exits, and the trainer writes the caches on exit.
    child.kill('SIGINT');
    const end = await exited;
    if (end.signal !== null) throw new Error(`the run was killed (${end.signal})`);
  } catch (e) {
    process.stderr.write(`bundle-cli: warning: code cache not trained (${e.message}); the caches of the bare sources are used\n`);
  } finally {
    clearTimeout(timer);
    server.closeAllConnections();
    server.close();
    rmSync(root, { recursive: true, force: true, maxRetries: 5 });
  }
}
