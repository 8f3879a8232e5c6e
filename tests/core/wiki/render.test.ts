import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { LedgerEntry } from '../../../src/core/ledger/entry.js';
import { openRunLedger } from '../../../src/core/ledger/file-ledger.js';
import { readLedgerEntries } from '../../../src/core/ledger/line-reader.js';
import { readManifest, runDirOf } from '../../../src/core/ledger/manifest.js';
import { verifyRun } from '../../../src/core/ledger/verify.js';
import { readMemory, updateMemory } from '../../../src/core/wiki/memory.js';
import { renderWiki, renderWikiPages } from '../../../src/core/wiki/render.js';
import { fixedClock, tempDir, writeSampleRun } from '../../helpers/sample-run.js';

async function entriesOf(runDir: string): Promise<LedgerEntry[]> {
  const out: LedgerEntry[] = [];
  for await (const e of readLedgerEntries(join(runDir, 'ledger.jsonl'))) out.push(e);
  return out;
}

describe('renderWikiPages', () => {
  it('is byte-identical for the same ledger, and for a run written twice with a fixed clock', async () => {
    const a = tempDir();
    const b = tempDir();
    const runA = await writeSampleRun(a);
    const runB = await writeSampleRun(b);
    expect(readFileSync(join(runA.runDir, 'ledger.jsonl'))).toEqual(readFileSync(join(runB.runDir, 'ledger.jsonl')));
    const input = [{ runId: runA.runId, entries: await entriesOf(runA.runDir), manifest: await readManifest(runA.runDir) }];
    const first = renderWikiPages(input, ['project']);
    const second = renderWikiPages(input, ['project']);
    expect([...second]).toEqual([...first]);
  });

  it('renders the run page with plans, the chosen plan as mermaid, tasks and the anchored head', async () => {
    const repo = tempDir();
    const { runId, runDir } = await writeSampleRun(repo);
    const entries = await entriesOf(runDir);
    const page = renderWikiPages([{ runId, entries, manifest: await readManifest(runDir) }], []).get(`runs/${runId}.md`)!;
    expect(page.startsWith(`---\nkind: "run"\nrunId: "${runId}"\nstatus: "succeeded"`)).toBe(true);
    expect(page).toContain(`headHash: "${entries.at(-1)!.hash}"`);
    expect(page).toContain('**plan-A** (chosen)');
    expect(page).toContain('**plan-B**: 1 tasks');
    expect(page).toContain('```mermaid\ngraph TD\n  n_t1["t1: Add --json flag<br/>dev.implement"]');
    expect(page).toContain('n_t1 -->|"$t1.ok == true"| n_t2');
    expect(page).toContain('n_t2 -. "RETRYABLE_ERROR" .-> n_t1');
    expect(page).toMatch(/\| t2 \| qa\.verify \| Run the tests \| 1 \| completed \| passed \(npm test: 3 passed, 0 failed\) \|/);
  });

  it('writes one decision page per decision entry with its seq and hash', async () => {
    const repo = tempDir();
    const { runId, runDir } = await writeSampleRun(repo);
    const entries = await entriesOf(runDir);
    const pages = renderWikiPages([{ runId, entries, manifest: null }], []);
    const decisions = [...pages.keys()].filter((p) => p.startsWith('decisions/')).sort();
    const selected = entries.find((e) => e.type === 'PLAN_SELECTED')!;
    expect(decisions).toContain(`decisions/${runId}-${selected.seq}-PLAN_SELECTED.md`);
    expect(decisions).toHaveLength(3);
    const page = pages.get(`decisions/${runId}-${selected.seq}-PLAN_SELECTED.md`)!;
    expect(page).toContain(`hash: "${selected.hash}"`);
    expect(page).toContain('Plan-A runs QA after the change');
  });

  it('escapes hostile text so it cannot break a table or inject HTML', async () => {
    const repo = tempDir();
    const runDir = runDirOf(repo, 'evil');
    const ledger = await openRunLedger(runDir, 'evil', { clock: fixedClock(), create: true });
    await ledger.append({ actor: 'dev:t1', type: 'TASK_ADDED', data: { task: { id: 't1', capability: 'dev.fix', title: 'a | b\n<script>x</script>', input: {}, verification: [] }, reason: 'fix', iteration: 1 } });
    await ledger.close();
    const page = renderWikiPages([{ runId: 'evil', entries: ledger.entries(), manifest: null }], []).get('runs/evil.md')!;
    expect(page).not.toContain('<script>');
    expect(page).toContain('a \\| b &lt;script&gt;');
  });

  it('writes an escalation page with the resume command for a run awaiting a human', async () => {
    const repo = tempDir();
    const { runId } = await writeSampleRun(repo, { outcome: 'awaiting_human' });
    await renderWiki(repo);
    const page = readFileSync(join(repo, '.acia', 'wiki', 'escalations', `${runId}.md`), 'utf8');
    expect(page).toContain('tests still fail after 3 fixes');
    expect(page).toContain('expected "json" got "csv"');
    const entries = readFileSync(join(runDirOf(repo, runId), 'ledger.jsonl'), 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as LedgerEntry);
    const options = (entries.find((e) => e.type === 'ESCALATION_REQUESTED')!.data as { options: string[] }).options;
    expect(options.length).toBeGreaterThan(0);
    for (const o of options) expect(page).toContain(`acia resume ${runId} --answer ${o === 'guidance' ? "'your guidance for the team'" : o}\n`);
  });
});

describe('renderWiki', () => {
  it('creates memory pages from templates, keeps edits, and rewrites only changed files', async () => {
    const repo = tempDir();
    await writeSampleRun(repo);
    const first = await renderWiki(repo);
    expect(first.written).toContain('index.md');
    const project = join(repo, '.acia', 'wiki', 'memory', 'project.md');
    expect(readFileSync(project, 'utf8')).toContain('kind: "memory"');
    writeFileSync(project, '# my notes\n');
    const second = await renderWiki(repo);
    expect(second.written).toEqual([]);
    expect(readFileSync(project, 'utf8')).toBe('# my notes\n');
    expect(readFileSync(join(repo, '.acia', 'wiki', 'index.md'), 'utf8')).toContain('| succeeded | add a --json flag');
  });
});

describe('updateMemory', () => {
  it('records MEMORY_UPDATED with blobs of the page before and after, then writes the page', async () => {
    const repo = tempDir();
    await renderWiki(repo);
    const runDir = runDirOf(repo, 'mem');
    const ledger = await openRunLedger(runDir, 'mem', { clock: fixedClock(), create: true });
    const before = readFileSync(join(repo, '.acia', 'wiki', 'memory', 'lessons.md'), 'utf8');
    await updateMemory(repo, ledger, 'lessons', '# Lessons\n- run npm test, not jest\n', 'QA found the test command');
    const entry = ledger.entries().at(-1)!;
    expect(entry.type).toBe('MEMORY_UPDATED');
    const data = entry.data as { beforeRef: string; afterRef: string };
    expect((await ledger.getBlob(data.beforeRef)).toString()).toBe(before);
    expect((await ledger.getBlob(data.afterRef)).toString()).toContain('not jest');
    await ledger.close();
    expect((await readMemory(repo)).map((p) => p.page)).toEqual(['project', 'conventions', 'lessons']);
    expect((await verifyRun(runDir)).ok).toBe(true);
    await expect(updateMemory(repo, ledger, '../evil', 'x', 'y')).rejects.toMatchObject({ code: 'INPUT_INVALID' });
    expect(existsSync(join(repo, '.acia', 'wiki', 'evil.md'))).toBe(false);
  });
});
