// time_to_first_request: process start -> first request at a stand-in model endpoint on 127.0.0.1, for
// `acia run` (default sandbox) on a small repo and on a 10,000-file repo, and for Claude Code's
// `claude -p` on the same small repo, interleaved in one run. The endpoint answers nothing useful: the
// process is killed as soon as its first request arrives, so only start-up is measured.
import { spawn, execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, median, nowMs, round, scratch } from './util.mjs';

export const CLAUDE_CODE_VERSION = '2.1.330';

/** A stand-in endpoint: calls `onRequest(path)` for each request and answers 529 (never a real reply). */
export async function standIn() {
  let waiter = null;
  const server = createServer((req, res) => {
    req.resume();
    const t = nowMs();
    if (waiter && req.method === 'POST' && /\/v1\/messages/.test(req.url ?? '')) {
      const w = waiter;
      waiter = null;
      w(t);
    }
    res.writeHead(529, { 'content-type': 'application/json', 'retry-after': '60' });
    res.end(JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'stand-in' } }));
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    next: () => new Promise((resolve) => (waiter = resolve)),
    close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}

const git = (cwd, ...args) => execFileSync('git', args, { cwd, stdio: 'ignore' });

export function makeRepo(files) {
  const dir = scratch(`first-${files}`);
  git(dir, 'init', '-q', '-b', 'main');
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'sample', version: '1.0.0', scripts: { test: 'node --test' } }, null, 2));
  writeFileSync(join(dir, 'README.md'), '# sample\n');
  mkdirSync(join(dir, 'src'));
  writeFileSync(join(dir, 'src', 'index.js'), 'export const add = (a, b) => a + b;\n');
  for (let i = 0; i < files - 3; i++) {
    const sub = join(dir, 'lib', `d${Math.floor(i / 100)}`);
    if (i % 100 === 0) mkdirSync(sub, { recursive: true });
    writeFileSync(join(sub, `f${i}.js`), `export const v${i} = ${i};\n`);
  }
  git(dir, 'add', '-A');
  git(dir, '-c', 'user.name=b', '-c', 'user.email=b@b', 'commit', '-qm', 'init');
  return dir;
}

/** Spawns, waits for the first model request (or exit), kills the process group; ms from spawn. */
export async function timeToFirst(endpoint, cmd, args, opts) {
  const arrived = endpoint.next();
  const t0 = nowMs();
  const child = spawn(cmd, args, { ...opts, stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise((r) => child.on('close', (code) => r({ code })));
  const first = await Promise.race([arrived, exited, new Promise((r) => setTimeout(() => r({ timeout: true }), 30_000))]);
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    /* gone */
  }
  await exited;
  if (typeof first !== 'number') throw new Error(`${cmd} ${args[0] ?? ''}: no model request (${JSON.stringify(first)}): ${stderr.slice(-600)}`);
  return first - t0;
}

/**
 * ACIA's git runs in its own process group, so a checkout it started (in the background, since the
 * first request no longer waits for it) outlives the killed run: wait for every process naming the repo
 * to end before the next run, so it neither races the cleanup nor takes CPU from the next measurement.
 */
function waitForQuiet(repo) {
  for (let i = 0; i < 600; i++) {
    try {
      execFileSync('pgrep', ['-f', repo], { stdio: 'ignore' });
    } catch {
      return; // pgrep exits 1 when nothing matches
    }
    execFileSync('sleep', ['0.1']);
  }
}

export function resetRepo(repo) {
  waitForQuiet(repo);
  rmSync(join(repo, '.acia'), { recursive: true, force: true });
  execFileSync('git', ['worktree', 'prune'], { cwd: repo });
  const branches = execFileSync('git', ['for-each-ref', '--format=%(refname:short)', 'refs/heads/acia/'], { cwd: repo, encoding: 'utf8' }).trim();
  if (branches) execFileSync('git', ['branch', '-qD', ...branches.split('\n')], { cwd: repo });
}

/** The `claude` binary: on PATH, or installed from npm into a cached temp dir; null when that fails (offline). */
export function findClaudeCode(log) {
  try {
    const p = execFileSync('sh', ['-c', 'command -v claude'], { encoding: 'utf8' }).trim();
    if (p) return p;
  } catch {
    /* not on PATH */
  }
  const dir = join(tmpdir(), `acia-bench-claude-code-${CLAUDE_CODE_VERSION}`);
  const bin = join(dir, 'node_modules', '.bin', 'claude');
  if (existsSync(bin)) return bin;
  try {
    log(`  installing @anthropic-ai/claude-code@${CLAUDE_CODE_VERSION} into ${dir}`);
    mkdirSync(dir, { recursive: true });
    execFileSync('npm', ['install', '--prefix', dir, '--no-audit', '--no-fund', `@anthropic-ai/claude-code@${CLAUDE_CODE_VERSION}`], { stdio: 'ignore', timeout: 300_000 });
    return existsSync(bin) ? bin : null;
  } catch {
    return null;
  }
}

export async function firstRequest({ runs = 7, log = () => {}, claude = findClaudeCode(log) } = {}) {
  const small = makeRepo(20);
  const big = makeRepo(10_000);
  const endpoint = await standIn();
  const home = scratch('home');
  const env = {
    PATH: process.env.PATH,
    HOME: home,
    ANTHROPIC_API_KEY: 'sk-stand-in',
    ANTHROPIC_BASE_URL: endpoint.url,
    // Claude Code: no telemetry, update checks or other traffic besides the model.
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
  };
  const goal = 'add a subtract function next to add';
  const aciaArgs = (repo) => [CLI, 'run', goal, '--repo', repo, '--model', 'anthropic:claude-sonnet-4-5', '--quiet'];
  const xs = { acia: [], acia10k: [], claude: [] };
  try {
    // One untimed run of each warms the page cache.
    await timeToFirst(endpoint, process.execPath, aciaArgs(small), { cwd: small, env });
    resetRepo(small);
    for (let i = 0; i < runs; i++) {
      xs.acia.push(await timeToFirst(endpoint, process.execPath, aciaArgs(small), { cwd: small, env }));
      resetRepo(small);
      xs.acia10k.push(await timeToFirst(endpoint, process.execPath, aciaArgs(big), { cwd: big, env }));
      resetRepo(big);
      if (claude) {
        try {
          xs.claude.push(await timeToFirst(endpoint, claude, ['-p', goal], { cwd: small, env }));
        } catch (e) {
          log(`  claude code did not reach the endpoint: ${e.message.slice(0, 300)}`);
          claude = null;
        }
      }
    }
  } finally {
    await endpoint.close();
    for (const d of [small, big, home]) rmSync(d, { recursive: true, force: true });
  }
  const m = { acia: median(xs.acia), acia10k: median(xs.acia10k), claude: xs.claude.length ? median(xs.claude) : null };
  log(`  first request: acia ${round(m.acia, 1)} ms, acia 10k files ${round(m.acia10k, 1)} ms, claude code ${m.claude === null ? 'n/a' : `${round(m.claude, 1)} ms`}`);
  return { runs, medianMs: m, samples: xs };
}
