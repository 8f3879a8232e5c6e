// User hooks through the built CLI, with real hook scripts: the README's three examples as printed (a lint
// gate the Dev agent must satisfy, a path guard, a Slack-style notification), an unchanged Claude Code
// PreToolUse script, a hook that crashes and one that hangs, and a replay that runs none of them.
import { createServer, type Server } from 'node:http';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LedgerEntry } from '../../src/core/ledger/entry.js';
import { ROOT, sampleRepo, startAcia } from './cli-helpers.js';
import { acia, git, ledgerOf, tempDir } from './helpers.js';
import { recordedRequest } from '../helpers/recorded-request.js';

interface Decision {
  hook: string;
  taskId?: string;
  by?: { name: string; on: string; sandbox: boolean };
  response: { allow: boolean; reason?: string; feedback?: boolean; failure?: string };
  output?: { exitCode: number | null; stdout: string; stderr: string; timedOut: boolean };
  durationMs?: number;
  inputDigest?: string;
}

/** The README's hook examples, exactly as printed under "## Hooks". */
function readmeHooks(): Record<string, unknown>[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Hooks'), readme.indexOf('\n## ', readme.indexOf('## Hooks') + 3));
  const blocks = [...section.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.parse(m[1]!) as { hooks: Record<string, unknown>[] });
  return blocks.flatMap((b) => b.hooks);
}

const LINT = `import { readdirSync, readFileSync } from 'node:fs';
let bad = 0;
for (const f of readdirSync('src')) {
  readFileSync('src/' + f, 'utf8').split('\\n').forEach((line, i) => {
    if (/\\bvar\\b/.test(line)) { console.error('src/' + f + ':' + (i + 1) + ': use let or const instead of var'); bad++; }
  });
}
process.exit(bad ? 1 : 0);
`;

/** A Claude Code PreToolUse hook as people write them (jq over stdin, a JSON permission decision). */
const CLAUDE_CODE_GUARD = `#!/bin/bash
# Claude Code PreToolUse hook: never let the agent run rm -rf.
command=$(jq -r '.tool_input.command // empty')
if echo "$command" | grep -q 'rm -rf'; then
  jq -n '{hookSpecificOutput: {hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "Destructive command blocked by hook"}}'
fi
exit 0
`;

/** A Claude Code TaskCompleted quality gate as its docs show them (jq over stdin, exit 2 with the reason on stderr). */
const CLAUDE_CODE_TASK_GATE = `#!/bin/bash
INPUT=$(cat)
TASK_SUBJECT=$(echo "$INPUT" | jq -r '.task_subject')
TEAMMATE=$(echo "$INPUT" | jq -r '.teammate_name')
if [ ! -f CHANGELOG.md ]; then
  echo "$TEAMMATE: add a CHANGELOG entry before completing: $TASK_SUBJECT" >&2
  exit 2
fi
exit 0
`;

const TITLE_CASE_WITH_VAR = "/** Capitalise every word. */\nexport function titleCase(text) {\n  var words = text.split(' ');\n  return words.map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join(' ');\n}\n";
const TITLE_TEST = "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { titleCase } from '../src/title-case.js';\n\ntest('titleCase', () => assert.equal(titleCase('hello world'), 'Hello World'));\n";

const plan = (extra: string) => ({
  caller: 'pm',
  toolCalls: [
    {
      name: 'return_result',
      input: {
        plans: [
          {
            id: 'plan-A',
            rationale: 'one change, then the suite',
            tasks: [
              { id: 't1', capability: 'dev.implement', title: 'Add titleCase', input: { instructions: `Add titleCase in src/title-case.js with a test. ${extra}` } },
              { id: 't2', capability: 'qa.verify', input: {} },
            ],
            edges: [{ from: 't1', to: 't2' }],
          },
        ],
        chosenPlanId: 'plan-A',
        selectionRationale: 'the only plan',
      },
    },
  ],
});

const SCRIPT_GATES = {
  version: 1,
  turns: [
    plan('Clean the build first.'),
    { caller: 'dev:t1', toolCalls: [{ name: 'run_command', input: { command: 'rm -rf build' } }] },
    { caller: 'dev:t1', toolCalls: [{ name: 'write_file', input: { path: 'infra/main.tf', content: 'resource "x" {}\n' } }] },
    { caller: 'dev:t1', toolCalls: [{ name: 'write_file', input: { path: 'src/title-case.js', content: TITLE_CASE_WITH_VAR } }, { name: 'write_file', input: { path: 'test/title-case.test.js', content: TITLE_TEST } }] },
    { caller: 'dev:t1', toolCalls: [{ name: 'return_result', input: { summary: 'Added titleCase.' } }] },
    { caller: 'dev:t1', toolCalls: [{ name: 'edit_file', input: { path: 'src/title-case.js', old: 'var words', new: 'const words' } }] },
    { caller: 'dev:t1', toolCalls: [{ name: 'return_result', input: { summary: 'Added titleCase; const, as the linter wants.' } }] },
    { caller: 'qa:t2', toolCalls: [{ name: 'run_tests', input: {} }] },
    { caller: 'qa:t2', toolCalls: [{ name: 'return_result', input: { passed: true, summary: 'suite passes' } }] },
  ],
};

const SCRIPT_FAILURES = {
  version: 1,
  turns: [
    plan(''),
    { caller: 'dev:t1', toolCalls: [{ name: 'list_dir', input: { path: 'src' } }] },
    { caller: 'dev:t1', toolCalls: [{ name: 'write_file', input: { path: 'src/title-case.js', content: TITLE_CASE_WITH_VAR.replace('var', 'const') } }] },
    { caller: 'dev:t1', toolCalls: [{ name: 'return_result', input: { summary: 'Added titleCase.' } }] },
  ],
};

let repo: string;
let home: string;
let work: string;
let auditLog: string;
let server: Server;
let webhook: string;
const posts: string[] = [];

function writeUserConfig(hooks: unknown[]): void {
  mkdirSync(join(home, '.config', 'acia'), { recursive: true });
  writeFileSync(join(home, '.config', 'acia', 'config.json'), JSON.stringify({ hooks }, null, 2));
}

const env = () => ({ HOME: home, SLACK_WEBHOOK_URL: webhook });
const decisions = (entries: readonly LedgerEntry[]) => entries.filter((e) => e.type === 'POLICY_DECISION').map((e) => e.data as Decision);
const byHook = (entries: readonly LedgerEntry[], name: string) => decisions(entries).filter((d) => d.by?.name === name);
const runIds = (): string[] => (existsSync(join(repo, '.acia', 'runs')) ? readdirSync(join(repo, '.acia', 'runs')) : []);
const newRunId = (before: string[]) => runIds().find((id) => !before.includes(id))!;

/** The messages of each model request `caller` made, in order, as recorded. */
function requestsOf(runId: string, entries: readonly LedgerEntry[], caller: string): string[] {
  return entries
    .filter((e) => e.type === 'LLM_CALL' && (e.data as { caller: string }).caller === caller)
    .map((e) => recordedRequest(repo, runId, (e.data as { requestHash: string }).requestHash));
}

beforeAll(async () => {
  work = tempDir('hooks');
  repo = sampleRepo('hooks');
  writeFileSync(join(repo, 'lint.js'), LINT);
  const pkg = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  pkg.scripts.lint = 'node lint.js';
  writeFileSync(join(repo, 'package.json'), JSON.stringify(pkg, null, 2));
  git(repo, 'add', '-A');
  git(repo, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', 'lint script');
  home = join(work, 'home');
  mkdirSync(join(home, '.claude', 'hooks'), { recursive: true });
  writeFileSync(join(home, '.claude', 'hooks', 'block-rm.sh'), CLAUDE_CODE_GUARD, { mode: 0o755 });
  writeFileSync(join(home, '.claude', 'hooks', 'changelog-gate.sh'), CLAUDE_CODE_TASK_GATE, { mode: 0o755 });
  auditLog = join(work, 'audit.log');
  writeFileSync(auditLog, '');
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      posts.push(body);
      res.end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address();
  webhook = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}/hook`;
});

afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
});

describe('hooks', () => {
  it("lists the hooks with their sources and runs one on a document; the repository's wait for trust", () => {
    writeUserConfig([...readmeHooks(), { name: 'block-rm', on: 'PreToolUse', tool: 'Bash', command: '~/.claude/hooks/block-rm.sh' }]);
    mkdirSync(join(repo, '.acia'), { recursive: true });
    writeFileSync(join(repo, '.acia', 'config.json'), JSON.stringify({ hooks: [{ name: 'repo-gate', on: 'task.pre', command: 'true' }] }));
    const list = acia(['hooks', 'list', '--repo', repo], { env: env() });
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toContain(`lint-gate  on task.post [kind dev.*]  (${join(home, '.config', 'acia', 'config.json')}; sandboxed; timeout 120s)`);
    expect(list.stdout).toMatch(/slack {2}on escalation .*NOT sandboxed/);
    expect(list.stdout).toContain('block-rm  on PreToolUse (= tool.pre, Claude Code input) [tool Bash]');
    expect(list.stdout).toMatch(/repo-gate {2}on task\.pre {2}not applied: .*not trusted/);

    const doc = join(work, 'call.json');
    writeFileSync(doc, JSON.stringify({ tool: { name: 'run_command', use_id: 'x', input: { command: 'rm -rf build' } } }));
    const test = acia(['hooks', 'test', 'tool.pre', '--input', doc, '--repo', repo], { env: env() });
    expect(test.code, test.stderr).toBe(1);
    expect(test.stdout).toMatch(/^block-rm: deny {2}\(exit 0, [\d.]+s\)\n {2}reason: Destructive command blocked by hook\n$/);
    writeFileSync(doc, JSON.stringify({ tool: { name: 'run_command', use_id: 'x', input: { command: 'ls' } } }));
    expect(acia(['hooks', 'test', 'PreToolUse', '--input', doc, '--repo', repo, '--json'], { env: env() })).toMatchObject({ code: 0, stdout: expect.stringContaining('"allow": true') as unknown });
    // An unchanged Claude Code TaskCompleted gate reads the task and the teammate under Claude Code's names.
    writeUserConfig([{ on: 'TaskCompleted', command: '~/.claude/hooks/changelog-gate.sh' }]);
    writeFileSync(doc, JSON.stringify({ task: { id: 't1', kind: 'dev.implement', title: 'Add titleCase', input: {}, attempt: 1, branch: null, worktree: null }, agent: { name: 'dev:t1', role: 'dev', attempt: 1 }, result: { summary: 'done' } }));
    const gate = acia(['hooks', 'test', 'TaskCompleted', '--input', doc, '--repo', repo], { env: env() });
    expect(gate.code, gate.stderr).toBe(1);
    expect(gate.stdout).toContain('TaskCompleted#1: deny  (exit 2,');
    expect(gate.stdout).toContain('reason: dev:t1: add a CHANGELOG entry before completing: Add titleCase');
    writeFileSync(doc, '{"tool": 3}');
    const bad = acia(['hooks', 'test', 'tool.pre', '--input', doc, '--repo', repo], { env: env() });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^acia: --input .*call\.json: tool: /);
    rmSync(join(repo, '.acia', 'config.json'));
  });

  it('gates a Dev task on the lint hook until the agent fixes it, blocks a command and a path, and replays without running a hook', () => {
    writeUserConfig([
      ...readmeHooks(),
      { name: 'block-rm', on: 'PreToolUse', tool: 'Bash', command: '~/.claude/hooks/block-rm.sh' },
      { name: 'audit', on: 'tool.post', sandbox: false, command: `jq -c '{tool: .tool_name, by: .teammate_name}' >> ${auditLog}` },
    ]);
    const script = join(work, 'gates.json');
    writeFileSync(script, JSON.stringify(SCRIPT_GATES));
    const before = runIds();
    const r = acia(['run', 'Add a titleCase helper', '--repo', repo, '--model', `scripted:${script}`, '--quiet'], { env: env() });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const runId = newRunId(before);
    const entries = ledgerOf(repo, runId);

    // The unchanged Claude Code script blocked the command; the agent read why in its next request.
    const [rm] = byHook(entries, 'block-rm').filter((d) => !d.response.allow);
    expect(rm).toMatchObject({ hook: 'tool.pre', taskId: 't1', by: { on: 'PreToolUse', sandbox: true }, response: { allow: false, reason: 'Destructive command blocked by hook' } });
    expect(rm!.output!.stdout).toContain('"permissionDecision": "deny"');
    // The command never ran: its result is the hook's, recorded as blocked.
    const rmResults = entries.filter((e) => e.type === 'TOOL_RESULT' && (e.data as { name: string }).name === 'run_command').map((e) => e.data as { data?: { blockedBy?: string } });
    expect(rmResults).toEqual([expect.objectContaining({ data: { blockedBy: 'block-rm' } })]);
    const dev = requestsOf(runId, entries, 'dev:t1');
    expect(dev[1]).toContain('Blocked by the hook block-rm: Destructive command blocked by hook');
    // The README's path guard blocked the write under infra/: nothing was written there.
    expect(byHook(entries, 'no-infra')).toMatchObject([{ hook: 'tool.pre', response: { allow: false, reason: 'infra/ belongs to the platform team: leave it, and say so in your summary' } }]);
    expect(dev[2]).toContain('Blocked by the hook no-infra');
    expect(git(repo, 'ls-tree', '-r', '--name-only', `acia/${runId}`)).not.toContain('infra/');

    // The README's lint gate denied the first result; the agent's next request carried the linter's message; then it passed.
    const lint = byHook(entries, 'lint-gate');
    expect(lint.map((d) => [d.hook, d.response.allow, d.response.feedback ?? false])).toEqual([
      ['task.post', false, true],
      ['task.post', true, false],
    ]);
    expect(lint[0]!.response.reason).toBe('src/title-case.js:3: use let or const instead of var');
    expect(lint[0]!.output!.exitCode).toBe(2);
    expect(dev[4]).toContain('the hook lint-gate did not accept it: src/title-case.js:3: use let or const instead of var');
    expect(dev.length).toBe(6);
    expect(git(repo, 'show', `acia/${runId}:src/title-case.js`)).toContain('const words');
    expect(entries.some((e) => e.type === 'MERGE' && (e.data as { taskId: string }).taskId === 't1')).toBe(true);
    // No escalation, no notification.
    expect(posts).toEqual([]);

    // Every tool call that ran went past the audit hook, outside the sandbox.
    const audited = readFileSync(auditLog, 'utf8').trim().split('\n');
    expect(audited.length).toBe(byHook(entries, 'audit').length);
    expect(audited).toContain('{"tool":"write_file","by":"dev:t1"}');
    expect(audited).toContain('{"tool":"run_tests","by":"qa:t2"}');
    expect(acia(['verify', runId, '--repo', repo], { env: env() }).code).toBe(0);

    // Replay: the recorded decisions, no hook run (the audit log does not grow), and identical.
    const replay = acia(['replay', runId, '--repo', repo], { env: env() });
    expect(replay.code, replay.stdout + replay.stderr).toBe(0);
    expect(replay.stdout).toContain('identical');
    expect(readFileSync(auditLog, 'utf8').trim().split('\n')).toEqual(audited);
  });

  it('denies on a crashing hook and on a hanging one, and notifies on the escalation that follows', async () => {
    const [, , slack] = readmeHooks();
    writeUserConfig([
      slack,
      { name: 'hang', on: 'tool.pre', tool: 'list_dir', timeoutS: 1, command: 'sleep 600' },
      { name: 'crash', on: 'task.pre', kind: 'qa.*', command: "echo 'TypeError: Cannot read properties of undefined' >&2; exit 1" },
    ]);
    const script = join(work, 'failures.json');
    writeFileSync(script, JSON.stringify(SCRIPT_FAILURES));
    const before = runIds();
    const run = startAcia(['run', 'Add a titleCase helper', '--repo', repo, '--model', `scripted:${script}`, '--quiet'], { env: env() });
    const r = await run.done;
    expect(r.code, r.stdout + r.stderr).toBe(3);
    const runId = newRunId(before);
    const entries = ledgerOf(repo, runId);

    // The hanging hook was killed at its timeout: a denial, and the agent went on.
    const [hang] = byHook(entries, 'hang');
    expect(hang).toMatchObject({ hook: 'tool.pre', response: { allow: false, failure: 'timed_out' }, output: { timedOut: true } });
    expect(hang!.response.reason).toMatch(/^hook hang timed out after 1s and was killed/);
    expect(hang!.durationMs).toBeLessThan(30_000);
    expect(requestsOf(runId, entries, 'dev:t1')[1]).toContain('Blocked by the hook hang: hook hang timed out after 1s');

    // The crashing hook denied the QA task with its output; the run asked the human.
    const [crash] = byHook(entries, 'crash');
    expect(crash).toMatchObject({ hook: 'task.pre', taskId: 't2', response: { allow: false, failure: 'crashed' }, output: { exitCode: 1 } });
    expect(crash!.response.reason).toBe('hook crash failed with exit code 1:\nTypeError: Cannot read properties of undefined');
    const esc = entries.find((e) => e.type === 'ESCALATION_REQUESTED')!.data as { reason: string; taskId: string; message: string };
    expect(esc).toMatchObject({ reason: 'policy_denied', taskId: 't2' });
    expect(esc.message).toContain('hook crash: hook crash failed with exit code 1');
    expect(entries.some((e) => e.type === 'TASK_STARTED' && (e.data as { taskId: string }).taskId === 't2')).toBe(true);
    expect(entries.some((e) => e.type === 'LLM_CALL' && (e.data as { caller: string }).caller === 'qa:t2')).toBe(false);

    // The README's notification reached the webhook, outside the sandbox, with the escalation.
    expect(byHook(entries, 'slack')).toMatchObject([{ hook: 'escalation', by: { sandbox: false }, response: { allow: true } }]);
    expect(posts).toHaveLength(1);
    const text = (JSON.parse(posts[0]!) as { text: string }).text;
    expect(text).toBe(`ACIA run ${runId} needs you: ${esc.message}`);
  });
});
