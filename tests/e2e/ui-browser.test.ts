// `acia ui` in a real browser: Debian's headless Chromium driven by Playwright's library (playwright-core
// with executablePath; Playwright's own browser download cannot work offline). One repository holds
// several runs made by the built CLI with the scripted model; one `acia ui` serves them and one browser
// looks at them. The parallel run is started while the page is open, with model latency, so its tasks
// are seen to turn green live; the escalation is answered from the page and the run is seen to finish.
// With ACIA_UI_SCREENSHOTS=<dir> the test also writes the screenshots shown in the README.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { taskIdOf } from '../../src/core/ledger/entry.js';
import { acia, ledgerOf, tempDir } from './helpers.js';
import { editedScript, sampleRepo, startAcia, zeroLatencyScript } from './cli-helpers.js';

const CHROMIUM = '/usr/bin/chromium';
const REQUIRED = process.env.ACIA_TEST_REQUIRE_BROWSER === '1';
if (REQUIRED && !existsSync(CHROMIUM)) throw new Error(`ACIA_TEST_REQUIRE_BROWSER=1 but ${CHROMIUM} is missing (apt-get install chromium)`);
const SHOTS = process.env.ACIA_UI_SCREENSHOTS;

const FLAGS = ['--test-command', 'node run-tests.js', '--quiet'];
const GOAL = 'Add a titleCase(text) helper that capitalises every word, with a test';
const HOSTILE = 'Add <script>window.__pwned=1</script><img src=x onerror="window.__pwned=2"> \u001b[31mRED\u001b[0m\u001b]0;owned\u0007 \u202Eevil';
const GUIDANCE = 'Capitalise every word, not only the first letter of the text';

describe.skipIf(!existsSync(CHROMIUM))('acia ui in headless Chromium', () => {
  let repo: string;
  let scripts: string;
  let url: string;
  let ui: ReturnType<typeof startAcia>;
  let browser: Browser;
  let page: Page;
  const runIds = { fixLoop: '', escalate: '', hostile: '' };
  /** What the page threw or logged as an error; every test ends with none. */
  const pageErrors: string[] = [];

  /** The run a command made: the one new directory under .acia/runs. */
  const newRun = (before: Set<string>): string => {
    const now = new Set(readdirRuns(repo));
    const made = [...now].filter((r) => !before.has(r));
    expect(made).toHaveLength(1);
    return made[0]!;
  };
  const runScenario = (name: string, goal: string, extra: string[], code: number): string => {
    const before = new Set(readdirRuns(repo));
    const r = acia(['run', goal, '--repo', repo, '--model', `scripted:${zeroLatencyScript(name, scripts)}`, ...FLAGS, ...extra]);
    expect(r.code, r.stderr).toBe(code);
    return newRun(before);
  };

  beforeAll(async () => {
    repo = sampleRepo('ui');
    scripts = tempDir('ui-scripts');
    runIds.fixLoop = runScenario('fix-loop', GOAL, ['--parallel', '2', '--max-iterations', '2'], 0);
    runIds.escalate = runScenario('escalate', GOAL, ['--parallel', '2', '--max-iterations', '1'], 3);
    runIds.hostile = runScenario('happy', HOSTILE, [], 0);
    ui = startAcia(['ui', '--repo', repo, '--port', '0', '--no-open']);
    url = await until(() => /http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]+/.exec(ui.output())?.[0], 30_000, () => ui.output());
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      // As root Chromium needs --no-sandbox; the rest keep it from calling home on a closed network.
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on('pageerror', (e) => pageErrors.push(`pageerror: ${e.message}`));
    page.on('console', (m) => void (m.type() === 'error' && pageErrors.push(`console: ${m.text()}`)));
  }, 120_000);

  afterEach(() => {
    expect(pageErrors.splice(0)).toEqual([]);
  });

  afterAll(async () => {
    await browser?.close();
    ui?.child.kill('SIGINT');
    await ui?.done;
  });

  it('refuses a request without the token, with a wrong one, for another Host or from another Origin', async () => {
    const base = new URL(url);
    const token = base.searchParams.get('token')!;
    const at = (path: string) => `${base.origin}${path}`;
    expect((await fetch(at('/'))).status).toBe(401);
    expect((await fetch(at('/api/runs/stream'))).status).toBe(401);
    expect((await fetch(at(`/api/runs/stream?token=${token}x`))).status).toBe(401);
    expect((await fetch(at(`/api/runs/${runIds.escalate}/actions/answer`), { method: 'POST', headers: { Origin: base.origin, 'Content-Type': 'application/json' }, body: '{"text":"skip"}' })).status).toBe(401);
    // DNS rebinding: the right token under another name is still refused
    expect((await rawGet(base, `/?token=${token}`, { Host: `evil.example:${base.port}` })).status).toBe(403);
    expect((await fetch(at(`/api/info?token=${token}`), { headers: { Origin: 'http://evil.example' } })).status).toBe(403);
    const ok = await fetch(at(`/?token=${token}`));
    expect(ok.status).toBe(200);
    const csp = ok.headers.get('content-security-policy')!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval/);
    // nothing of the escalate run changed through the refused requests
    expect(ledgerOf(repo, runIds.escalate).at(-1)!.type).toBe('RUN_COMPLETED');
  });

  it('lists the runs with status, cost and verification; a hostile goal is text, not markup or terminal codes', async () => {
    await page.goto(url);
    const hostileRow = page.locator(`tr[data-run="${runIds.hostile}"]`);
    await hostileRow.waitFor();
    await expect.poll(() => page.locator('tr[data-run] .badge.verify-ok').count(), { timeout: 30_000 }).toBe(3);
    expect(await page.locator(`tr[data-run="${runIds.fixLoop}"]`).getAttribute('data-status')).toBe('succeeded');
    expect(await page.locator(`tr[data-run="${runIds.escalate}"]`).getAttribute('data-status')).toBe('awaiting_human');
    const goal = (await hostileRow.locator('td.goal').textContent())!;
    expect(goal).toContain('<script>window.__pwned=1</script>');
    expect(goal).toContain('\\x1b[31mRED');
    expect(goal).toContain('\\u202e');
    expect([...goal].filter((c) => ['\u001b', '\u0007', '\u202e'].includes(c))).toEqual([]);
    await page.goto(`${url}#/run/${runIds.hostile}`);
    await page.locator('.goal-text').waitFor();
    expect(await page.locator('.goal-text').textContent()).toContain('<img src=x onerror=');
    expect(await page.locator('main script, main img, main a[href^="http"]').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as { __pwned?: unknown }).__pwned)).toBeUndefined();
    // The filter keeps only the runs waiting for an answer.
    await page.goto(url);
    await page.getByRole('button', { name: /^Waiting for you/ }).click();
    await expect.poll(() => page.locator('tr[data-run]').count(), { timeout: 10_000 }).toBe(1);
    expect(await page.locator('tr[data-run]').getAttribute('data-run')).toBe(runIds.escalate);
  }, 60_000);

  it('shows the parallel run appear and its four tasks go green live', async () => {
    await page.goto(url);
    await page.locator('tr[data-run]').first().waitFor();
    const before = new Set(readdirRuns(repo));
    // Each model turn takes 0.7 s: the page sees the tasks running before they complete.
    const script = editedScript('parallel', (turns) => turns.forEach((t) => (t.latencyMs = t.caller === 'pm' ? 0 : 700)));
    const run = startAcia(['run', 'Add four string helpers: titleCase, reverseWords, countVowels and truncate, each with a test', '--repo', repo, '--model', `scripted:${script}`, '--parallel', '4', '--max-iterations', '1', ...FLAGS]);
    // The new run appears in the list by itself.
    const listed = async () => Promise.all((await page.locator('tr[data-run]').all()).map((r) => r.getAttribute('data-run')));
    await expect.poll(async () => (await listed()).filter((id) => id !== null && !before.has(id)).length, { timeout: 30_000 }).toBe(1);
    const runId = (await listed()).find((id) => id !== null && !before.has(id))!;
    await page.locator(`a[href="#/run/${runId}"]`).click();
    const node = (id: string) => page.locator(`.plan-graph g.node[data-task="${id}"]`);
    // Live: at least one dev task is seen running, then all four completed, without a reload.
    await page.evaluate(() => ((globalThis as { __sameDocument?: boolean }).__sameDocument = true));
    await page.locator('.plan-graph g.node[data-status="running"]').first().waitFor({ timeout: 30_000 });
    await explained(async () => {
      for (const id of ['t1', 't2', 't3', 't4']) await expect.poll(() => node(id).getAttribute('data-status'), { timeout: 60_000 }).toBe('completed');
      await expect.poll(() => page.locator('article.run').getAttribute('data-status'), { timeout: 60_000 }).toBe('succeeded');
    }, async () => {
      const statuses = await Promise.all(['t1', 't2', 't3', 't4', 't5'].map(async (id) => `${id}=${await node(id).getAttribute('data-status')}`));
      const recorded = ledgerOf(repo, runId).map((e) => `${e.seq} ${e.type} ${taskIdOf(e) ?? ''}`);
      return `page: ${statuses.join(' ')}, errors: ${pageErrors.join(' | ') || 'none'}, ${await page.locator('article.run').getAttribute('data-entries')} entries\nledger:\n${recorded.join('\n')}\nrun:\n${run.output()}\nui:\n${ui.output()}`;
    });
    expect(await page.evaluate(() => (globalThis as { __sameDocument?: boolean }).__sameDocument)).toBe(true);
    expect((await run.done).code).toBe(0);
    // The timeline has a lane per task, the four dev lanes overlapping in time.
    expect(await page.locator('.timeline g.lane').count()).toBe(5);
    if (SHOTS) {
      await page.locator('.task-list a', { hasText: 't1' }).click();
      await page.locator('.checkpoint .diff').first().waitFor();
      await page.locator('article.run .bar .verify-ok').waitFor({ timeout: 30_000 });
      await page.screenshot({ path: join(SHOTS, 'ui-run.png'), fullPage: true });
    }
  }, 120_000);

  it('shows the fix-loop run with its failing test excerpt, the fix task and its diff', async () => {
    await page.goto(`${url}#/run/${runIds.fixLoop}/task/t2`);
    const failing = page.locator('.test-run[data-passed="false"] pre.excerpt');
    await failing.waitFor();
    expect(await failing.textContent()).toMatch(/not ok .*titleCase/);
    const fix = page.locator('.task-list li[data-task-row="t2-fix1"]');
    expect(await fix.getAttribute('data-status')).toBe('completed');
    expect(await fix.textContent()).toContain('dev.fix');
    expect(await page.locator('.plan-graph g.edge[data-edge="t2->t2-fix1"]').getAttribute('data-kind')).toBe('added');
    await fix.locator('a').click();
    await page.locator('[data-task-panel="t2-fix1"] .checkpoint .diff').waitFor();
    expect(await page.locator('[data-task-panel="t2-fix1"] .diff-file h4').first().textContent()).toContain('src/title-case.js');
    expect(await page.locator('[data-task-panel="t2-fix1"] .dl-insert').count()).toBeGreaterThan(0);
  }, 60_000);

  it('answers the escalation from the page, recorded as acia resume --answer records it, and the run finishes', async () => {
    await page.goto(`${url}#/run/${runIds.escalate}`);
    const esc = page.locator('section.escalation');
    await esc.waitFor();
    expect(await esc.textContent()).toContain('fixes exhausted');
    expect(await esc.locator('.options button').allTextContents()).toEqual(['retry', 'skip', 'abort']);
    await esc.getByLabel('Guidance for the team').fill(GUIDANCE);
    if (SHOTS) await page.screenshot({ path: join(SHOTS, 'ui-escalation.png'), fullPage: false });
    await esc.getByRole('button', { name: 'Send guidance' }).click();
    await expect.poll(() => page.locator('.notice').textContent(), { timeout: 60_000 }).toContain('Answer recorded');
    await esc.waitFor({ state: 'detached' });
    await expect.poll(() => page.locator('article.run').getAttribute('data-status'), { timeout: 90_000 }).toBe('succeeded');
    const entries = ledgerOf(repo, runIds.escalate);
    // Exactly what `acia resume <run> --answer "<guidance>"` writes (tests/e2e/checkpoint.test.ts).
    expect(entries.find((e) => e.type === 'RUN_RESUMED')?.data).toMatchObject({ answer: GUIDANCE });
    expect(entries.find((e) => e.type === 'HUMAN_RESPONSE')).toMatchObject({ actor: 'human', data: { action: 'guidance', text: GUIDANCE } });
    expect(entries.at(-1)).toMatchObject({ type: 'RUN_COMPLETED', data: { reason: 'succeeded' } });
    // The resume process anchors the head just after RUN_COMPLETED (the page may see the entry first).
    await expect.poll(() => acia(['verify', runIds.escalate, '--repo', repo]).code, { timeout: 30_000 }).toBe(0);
    await page.locator('article.run .bar .verify-ok').waitFor({ timeout: 30_000 });
  }, 120_000);

  it('has no serious accessibility violations on the runs list and a run view (axe-core)', async () => {
    const axe = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
    const serious = async (): Promise<string[]> => {
      await page.evaluate(axe);
      const r = await page.evaluate(() => (globalThis as unknown as { axe: { run(): Promise<{ violations: { id: string; impact: string | null; nodes: { target: string[] }[] }[] }> } }).axe.run());
      return r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
    };
    await page.goto(url);
    await page.locator('tr[data-run]').first().waitFor();
    expect(await serious()).toEqual([]);
    await page.goto(`${url}#/run/${runIds.fixLoop}/task/t2`);
    await page.locator('.test-run pre.excerpt').waitFor();
    expect(await serious()).toEqual([]);
  }, 60_000);
});

/** Runs `check`; when it fails, the error also says what `explain` finds (what the ledger and the page hold). */
async function explained(check: () => Promise<void>, explain: () => Promise<string>): Promise<void> {
  try {
    await check();
  } catch (e) {
    const why = await explain().catch((err: unknown) => `(could not explain: ${String(err)})`);
    throw new Error(`${e instanceof Error ? e.message : String(e)}\n${why}`, { cause: e });
  }
}

function readdirRuns(repo: string): string[] {
  const dir = join(repo, '.acia', 'runs');
  return existsSync(dir) ? readdirSync(dir) : [];
}

async function until<T>(get: () => T | undefined, ms: number, why: () => string): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = get();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out: ${why()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A GET with headers fetch will not let a caller set (Host). */
async function rawGet(base: URL, path: string, headers: Record<string, string>): Promise<{ status: number }> {
  const http = await import('node:http');
  return new Promise((resolve, reject) => {
    const req = http.request({ host: base.hostname, port: Number(base.port), path, headers }, (res) => {
      res.resume();
      resolve({ status: res.statusCode ?? 0 });
    });
    req.on('error', reject);
    req.end();
  });
}
