// Debian's real Prometheus server for a test: a plain process (no systemd) with its own config and TSDB
// in a temp dir, scraping the given targets every second, queried back through its HTTP API.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './postgres.js';

export interface TestPrometheus {
  url: string;
  /** An instant query; the result's samples as label sets and numbers. */
  query(promql: string): Promise<{ metric: Record<string, string>; value: number }[]>;
  /** Everything it printed (for a failing test's message). */
  log(): string;
  stop(): void;
}

/** Where Debian's package puts the server, or null (the suite then skips, unless CI requires it). */
export function prometheusBin(): string | null {
  if (existsSync('/usr/bin/prometheus')) return '/usr/bin/prometheus';
  if (process.env.ACIA_TEST_REQUIRE_PROMETHEUS === '1') throw new Error('ACIA_TEST_REQUIRE_PROMETHEUS=1 but /usr/bin/prometheus is missing (apt-get install prometheus)');
  return null;
}

/** Starts the server scraping `targets` (host:port, path /metrics) at 1 s; resolves once it answers. */
export async function startPrometheus(targets: string[]): Promise<TestPrometheus> {
  const bin = prometheusBin();
  if (!bin) throw new Error('prometheus is not installed (apt-get install prometheus)');
  const dir = mkdtempSync(join(tmpdir(), 'acia-prom-'));
  const config = join(dir, 'prometheus.yml');
  writeFileSync(config, `global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: acia\n    scrape_interval: 1s\n    static_configs:\n      - targets: [${targets.map((t) => JSON.stringify(t)).join(', ')}]\n`);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let out = '';
  const child: ChildProcess = spawn(bin, [`--config.file=${config}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const deadline = Date.now() + 60_000;
  for (;;) {
    const ready = await fetch(`${url}/-/ready`).then((r) => r.ok, () => false);
    if (ready) break;
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`prometheus did not start:\n${out.slice(-3000)}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url,
    query: async (promql) => {
      const r = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(promql)}`);
      const body = (await r.json()) as { status: string; error?: string; data?: { result: { metric: Record<string, string>; value: [number, string] }[] } };
      if (body.status !== 'success') throw new Error(`prometheus query ${promql}: ${body.error ?? r.status}`);
      return (body.data?.result ?? []).map((x) => ({ metric: x.metric, value: Number(x.value[1]) }));
    },
    log: () => out,
    stop: () => {
      child.kill('SIGKILL');
    },
  };
}
