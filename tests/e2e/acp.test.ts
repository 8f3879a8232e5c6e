// `acia acp` driven by a client built on the ACP SDK, over the built CLI's stdio: a demo scenario to
// the end with plan and tool-call updates (absolute paths), an escalation answered through
// request_permission and through the next prompt, a cancel (the plan shows nothing in progress after it)
// and a resume, session/load replaying a finished run with the user's own messages, a relative cwd
// refused, and a missing model key as auth_required that `authenticate` clears; directing the team: the
// plan approval gate as a permission request carrying the plans (rejected with feedback, then switched),
// and a prompt while the run goes on as a message that reaches the Dev agent.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { client, ndJsonStream, PROTOCOL_VERSION, type ClientContext, type InitializeResponse, type RequestPermissionRequest, type RequestPermissionResponse, type SessionNotification } from '@agentclientprotocol/sdk';
import { acia, CLI, ledgerOf, onlyRunId, tempDir } from './helpers.js';
import { cliEnv, editedScript, sampleRepo, SCENARIOS, zeroLatencyScript } from './cli-helpers.js';
import { sandboxAvailable } from '../helpers/sandbox-available.js';
import { recordedRequest } from '../helpers/recorded-request.js';

const sandbox = sandboxAvailable() ? 'auto' : 'off';
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
});

interface Session {
  updates: SessionNotification['update'][];
  permissions: RequestPermissionRequest[];
}

/** Starts `acia acp`, connects an SDK client and runs `op` with it. */
async function withAgent<T>(
  script: string,
  settings: Record<string, unknown>,
  onPermission: (req: RequestPermissionRequest) => RequestPermissionResponse | Promise<RequestPermissionResponse>,
  op: (agent: ClientContext, seen: Session, init: InitializeResponse) => Promise<T>,
  model = `scripted:${script}`,
): Promise<{ value: T; seen: Session; stderr: () => string }> {
  // Settings come from the user's config (a repository's own config would need the user's trust).
  const xdg = tempDir('acp-xdg');
  mkdirSync(join(xdg, 'acia'));
  writeFileSync(join(xdg, 'acia', 'config.json'), JSON.stringify(settings));
  const child = spawn(process.execPath, [CLI, 'acp', '--model', model, '--sandbox', sandbox], { env: cliEnv({ XDG_CONFIG_HOME: xdg }), stdio: ['pipe', 'pipe', 'pipe'] });
  children.push(child);
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const stream = ndJsonStream(Writable.toWeb(child.stdin) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>);
  const seen: Session = { updates: [], permissions: [] };
  const app = client()
    .onNotification('session/update', ({ params }) => {
      seen.updates.push(params.update);
    })
    .onRequest('session/request_permission', ({ params }) => {
      seen.permissions.push(params);
      return onPermission(params);
    });
  const value = await app.connectWith(stream, async (agent) => {
    const init = await agent.request('initialize', { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
    expect(init.agentInfo?.name).toBe('acia');
    expect(init.agentCapabilities?.loadSession).toBe(true);
    return op(agent, seen, init);
  });
  child.stdin.end();
  return { value, seen, stderr: () => stderr };
}

const never = (): RequestPermissionResponse => {
  throw new Error('no permission request expected');
};

function planStatuses(updates: Session['updates']): { content: string; status: string }[][] {
  return updates.filter((u) => u.sessionUpdate === 'plan').map((u) => (u.sessionUpdate === 'plan' ? u.entries.map((e) => ({ content: e.content, status: e.status })) : []));
}

describe('acia acp', () => {
  it('runs a goal to the end and streams the plan, tool calls with diffs, and messages', async () => {
    const repo = sampleRepo('acp-happy');
    const script = zeroLatencyScript('happy', tempDir('acp-script'));
    const { value, seen } = await withAgent(script, {}, never, async (agent) => {
      const { sessionId } = await agent.request('session/new', { cwd: join(repo, 'src'), mcpServers: [] });
      return agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'Add a titleCase(text) helper that capitalises every word, with a test' }] });
    });
    expect(value.stopReason).toBe('end_turn');
    const runId = onlyRunId(repo);
    const done = ledgerOf(repo, runId).find((e) => e.type === 'RUN_COMPLETED');
    expect((done?.data as { reason: string }).reason).toBe('succeeded');

    const plans = planStatuses(seen.updates);
    expect(plans[0]?.map((e) => e.status)).toEqual(['pending', 'pending']);
    expect(plans[0]?.[0]?.content).toMatch(/^t1 dev\.implement: /);
    expect(plans.at(-1)?.map((e) => e.status)).toEqual(['completed', 'completed']);
    expect(plans.some((p) => p[0]?.status === 'in_progress')).toBe(true);

    const calls = seen.updates.filter((u) => u.sessionUpdate === 'tool_call');
    const write = calls.find((u) => u.sessionUpdate === 'tool_call' && u.kind === 'edit');
    expect(write).toBeDefined();
    // Absolute (ACP's MUST), and in the checkout: the task's worktree is gone once the run ends.
    expect(write?.sessionUpdate === 'tool_call' ? write.locations?.[0]?.path : '').toBe(join(realpathSync(repo), 'src', 'title-case.js'));
    const results = seen.updates.filter((u) => u.sessionUpdate === 'tool_call_update');
    expect(results.length).toBe(calls.length);
    const diff = results.flatMap((u) => (u.sessionUpdate === 'tool_call_update' ? (u.content ?? []) : [])).find((c) => c.type === 'diff');
    expect(diff?.type === 'diff' ? diff.newText : '').toContain('titleCase');
    expect(diff?.type === 'diff' ? diff.path : '').toBe(join(realpathSync(repo), 'src', 'title-case.js'));
    const text = seen.updates.map((u) => (u.sessionUpdate === 'agent_message_chunk' && u.content.type === 'text' ? u.content.text : '')).join('');
    expect(text).toContain('t2 verification PASSED');
    expect(text).toContain(`run ${runId}: succeeded`);
  }, 60_000);

  it('asks through request_permission, waits when the client cancels it, and takes the next prompt as the answer', async () => {
    const repo = sampleRepo('acp-escalate');
    const script = zeroLatencyScript('escalate', tempDir('acp-script'));
    const goal = JSON.parse(readFileSync(join(SCENARIOS, 'escalate', 'scenario.json'), 'utf8')) as { goal: string; settings: { testCommand: string; maxIterations: number } };
    const { value, seen } = await withAgent(
      script,
      { testCommand: goal.settings.testCommand, maxIterations: goal.settings.maxIterations },
      () => ({ outcome: { outcome: 'cancelled' } }),
      async (agent) => {
        const { sessionId } = await agent.request('session/new', { cwd: repo, mcpServers: [] });
        const first = await agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: goal.goal }] });
        const waiting = JSON.parse(readFileSync(join(repo, '.acia', 'runs', onlyRunId(repo), 'manifest.json'), 'utf8')) as { status: string };
        const second = await agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'abort' }] });
        return { first, waiting: waiting.status, second };
      },
    );
    expect(value.first.stopReason).toBe('end_turn');
    expect(value.waiting).toBe('awaiting_human');
    expect(seen.permissions).toHaveLength(1);
    const ids = seen.permissions[0]!.options.map((o) => o.optionId);
    expect(ids).toContain('abort');
    expect(seen.permissions[0]!.toolCall.title).toMatch(/^The team needs you: /);
    // The question's tool call was announced before the client was asked about it, and then closed.
    const asked = seen.permissions[0]!.toolCall.toolCallId;
    expect(seen.updates.filter((u) => (u.sessionUpdate === 'tool_call' || u.sessionUpdate === 'tool_call_update') && u.toolCallId === asked).map((u) => u.sessionUpdate)).toEqual(['tool_call', 'tool_call_update']);
    const entries = ledgerOf(repo, onlyRunId(repo));
    const types = entries.map((e) => e.type);
    expect(types).toContain('ESCALATION_REQUESTED');
    expect(types).toContain('RUN_RESUMED');
    const answer = entries.find((e) => e.type === 'HUMAN_RESPONSE');
    expect((answer?.data as { action: string }).action).toBe('abort');
    expect((entries.at(-1)?.data as { reason: string }).reason).toBe('aborted');
    expect(value.second.stopReason).toBe('end_turn');
  }, 90_000);

  it('answers an escalation through request_permission: the option chosen in the editor is the human response', async () => {
    const repo = sampleRepo('acp-permission');
    const script = zeroLatencyScript('escalate', tempDir('acp-script'));
    const scenario = JSON.parse(readFileSync(join(SCENARIOS, 'escalate', 'scenario.json'), 'utf8')) as { goal: string; settings: { testCommand: string; maxIterations: number } };
    const { value, seen } = await withAgent(
      script,
      { testCommand: scenario.settings.testCommand, maxIterations: scenario.settings.maxIterations },
      () => ({ outcome: { outcome: 'selected', optionId: 'abort' } }),
      async (agent) => {
        const { sessionId } = await agent.request('session/new', { cwd: repo, mcpServers: [] });
        return agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: scenario.goal }] });
      },
    );
    expect(value.stopReason).toBe('end_turn');
    expect(seen.permissions).toHaveLength(1);
    const entries = ledgerOf(repo, onlyRunId(repo));
    const asked = entries.find((e) => e.type === 'ESCALATION_REQUESTED');
    const answered = entries.find((e) => e.type === 'HUMAN_RESPONSE');
    expect((answered?.data as { escalationSeq: number; action: string }).escalationSeq).toBe(asked?.seq);
    expect((answered?.data as { action: string }).action).toBe('abort');
    expect((entries.at(-1)?.data as { reason: string }).reason).toBe('aborted');
  }, 90_000);

  it('stops a run on session/cancel, leaves it resumable, and "continue" finishes it; a follow-up builds on it; session/load replays it', async () => {
    const repo = sampleRepo('acp-cancel');
    const dir = tempDir('acp-script');
    const script = JSON.parse(readFileSync(zeroLatencyScript('happy', dir), 'utf8')) as { turns: { caller: string; latencyMs?: number }[] };
    // The Dev agent's first reply is slow, so the cancel lands while it thinks.
    const firstDev = script.turns.find((t) => t.caller.startsWith('dev'));
    firstDev!.latencyMs = 4000;
    const file = join(dir, 'slow.json');
    writeFileSync(file, JSON.stringify(script));
    const { value } = await withAgent(file, {}, never, async (agent, seen) => {
      const { sessionId } = await agent.request('session/new', { cwd: repo, mcpServers: [] });
      const running = agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'Add a titleCase(text) helper' }] });
      // Until the first task is under way (a deadline, not a count of polls: a loaded machine is slow to get there).
      const deadline = Date.now() + 45_000;
      while (!planStatuses(seen.updates).some((p) => p[0]?.status === 'in_progress')) {
        if (Date.now() > deadline) throw new Error('no task was in progress within 45 s');
        await new Promise((r) => setTimeout(r, 50));
      }
      await agent.notify('session/cancel', { sessionId });
      const cancelled = await running;
      const planAfterCancel = planStatuses(seen.updates).at(-1);
      const resumed = await agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'continue' }] });
      const firstRun = onlyRunId(repo);
      // The run is finished: "continue" has nothing to go on with; a new goal builds on the run's branch.
      const again = await agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'continue' }] }).then(() => 'accepted', (e: Error) => e.message);
      const followUp = await agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'Also export titleCase from src/index.js' }] });
      return { cancelled, planAfterCancel, resumed, firstRun, again, followUp };
    });
    expect(value.cancelled.stopReason).toBe('cancelled');
    // The plan the editor shows once the turn ended: the stopped task is no longer in progress.
    expect(value.planAfterCancel?.map((e) => e.status)).toEqual(['pending', 'pending']);
    expect(value.planAfterCancel?.[0]?.content).toMatch(/\(stopped\)$/);
    expect(value.resumed.stopReason).toBe('end_turn');
    const runId = value.firstRun;
    const entries = ledgerOf(repo, runId);
    expect(value.again).toMatch(new RegExp(`run ${runId} is finished \\(succeeded\\); there is nothing to continue`));
    expect(value.followUp.stopReason).toBe('end_turn');
    const second = readdirSync(join(repo, '.acia', 'runs')).filter((id) => id !== runId);
    expect(second).toHaveLength(1);
    const started = ledgerOf(repo, second[0]!).find((e) => e.type === 'RUN_STARTED')!.data as { baseCommit: string; goal: { intent: string } };
    const firstEnd = entries.findLast((e) => e.type === 'RUN_COMPLETED')!.data as { headCommit: string };
    expect(started).toMatchObject({ baseCommit: firstEnd.headCommit, goal: { intent: 'Also export titleCase from src/index.js' } });
    const reasons = entries.filter((e) => e.type === 'RUN_COMPLETED').map((e) => (e.data as { reason: string }).reason);
    expect(reasons).toEqual(['aborted', 'succeeded']);
    expect(entries.some((e) => e.type === 'RUN_RESUMED')).toBe(true);

    const loaded = await withAgent(file, {}, never, async (agent) => {
      await agent.request('session/load', { sessionId: runId, cwd: repo, mcpServers: [] });
    });
    const plans = planStatuses(loaded.seen.updates);
    expect(plans.at(-1)?.map((e) => e.status)).toEqual(['completed', 'completed']);
    // ACP: a load replays the whole conversation, the user's messages included.
    const first = loaded.seen.updates.find((u) => u.sessionUpdate === 'user_message_chunk');
    expect(first?.sessionUpdate === 'user_message_chunk' && first.content.type === 'text' ? first.content.text : '').toBe('Add a titleCase(text) helper');
    expect(loaded.seen.updates.indexOf(first!)).toBeLessThan(loaded.seen.updates.findIndex((u) => u.sessionUpdate === 'plan'));
    expect(loaded.seen.updates.filter((u) => u.sessionUpdate === 'tool_call').length).toBe(entries.filter((e) => e.type === 'TOOL_CALL').length);
  }, 90_000);

  it('directs the team: the plan gate is a permission request with the plans (reject, then switch); a prompt while the run goes on is a message the Dev agent gets', async () => {
    const repo = sampleRepo('acp-direct');
    const goal = 'Add a titleCase(text) helper that capitalises every word, with a test';
    // The PM answers twice: its first plans, and its plans again after the rejection.
    const script = editedScript('plan-b', (turns) => {
      for (const t of turns) t.latencyMs = 0;
      turns.splice(1, 0, structuredClone(turns[0]!));
    });
    const answers: ((r: RequestPermissionResponse) => void)[] = [];
    const answer = (optionId: string) => answers.shift()!({ outcome: { outcome: 'selected', optionId } });
    const { value, seen } = await withAgent(
      script,
      { approvePlan: true, testCommand: 'node run-tests.js', maxIterations: 0 },
      () => new Promise((resolve) => answers.push(resolve)),
      async (agent, seen) => {
        const { sessionId } = await agent.request('session/new', { cwd: repo, mcpServers: [] });
        const prompt = (text: string) => agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text }] });
        const asked = async (n: number) => {
          for (let i = 0; i < 1200 && seen.permissions.length < n; i++) await new Promise((r) => setTimeout(r, 50));
        };
        const first = prompt(goal);
        await asked(1);
        // The run goes on (at the gate): prompts now are messages to its team. This one waits for b1,
        // through the rejection, the PM's second plans and the second gate.
        const sent = await prompt('@b1 steer: ACP-NOTE the helper belongs in src/title-case.js');
        answer('guidance');
        const rejected = await first;
        const second = prompt('FEEDBACK-ACP keep the helper in its own file');
        await asked(2);
        const unknown = await prompt('@t9 hello').then(() => 'accepted', (e: Error) => e.message);
        answer('switch:plan-B');
        const done = await second;
        const runId = onlyRunId(repo);
        const before = seen.updates.length;
        await agent.request('session/load', { sessionId: runId, cwd: repo, mcpServers: [] });
        return { rejected, unknown, sent, done, runId, loaded: seen.updates.slice(before) };
      },
    );
    const gate = seen.permissions[0]!;
    expect(gate.options.map((o) => o.optionId)).toEqual(['approve', 'switch:plan-B', 'edit', 'guidance', 'abort']);
    const shown = gate.toolCall.content?.map((c) => (c.type === 'content' && c.content.type === 'text' ? c.content.text : '')).join('') ?? '';
    expect(shown).toContain('Approve the plan before the team starts.');
    expect(shown).toContain('graph TD');
    expect((gate.toolCall.rawInput as { plans: { id: string }[] }).plans.map((p) => p.id)).toEqual(['plan-A', 'plan-B']);
    expect(value.rejected.stopReason).toBe('end_turn');
    const said = seen.updates.map((u) => (u.sessionUpdate === 'agent_message_chunk' && u.content.type === 'text' ? u.content.text : '')).join('');
    expect(said).toContain('Answer in your next message (feedback to plan again / approve / switch [plan id] / edit {plan JSON} / abort).');
    expect(value.unknown).toMatch(/cannot message task t9 of run \S+: no proposed plan has a task t9/);
    expect(value.sent.stopReason).toBe('end_turn');
    expect(said).toMatch(/Message m-\S+ for task b1 \(steer\): delivered at its next tool boundary\./);
    expect(value.done.stopReason).toBe('end_turn');

    const entries = ledgerOf(repo, value.runId);
    expect(entries.filter((e) => e.type === 'HUMAN_RESPONSE').map((e) => e.data)).toEqual([
      { escalationSeq: expect.any(Number), action: 'guidance', text: 'FEEDBACK-ACP keep the helper in its own file' },
      { escalationSeq: expect.any(Number), action: 'switch', text: 'plan-B' },
    ]);
    expect(entries.find((e) => e.type === 'PLAN_SELECTED')).toMatchObject({ data: { planId: 'plan-B', method: 'human' } });
    expect(entries.find((e) => e.type === 'MESSAGE_RECEIVED')).toMatchObject({ actor: 'human', data: { to: 'b1', mode: 'steer', author: expect.stringMatching(/\(ACP\)$/) } });
    expect(entries.find((e) => e.type === 'MESSAGE_DELIVERED')).toMatchObject({ data: { taskId: 'b1', caller: 'dev:b1', turn: 1 } });
    const requests = (caller: string) => entries.flatMap((e) => (e.type === 'LLM_CALL' && e.data.caller === caller ? [recordedRequest(repo, value.runId, e.data.requestHash)] : []));
    expect(requests('pm')[1]).toContain('FEEDBACK-ACP keep the helper in its own file');
    expect(requests('dev:b1')[0]).toContain('ACP-NOTE the helper belongs in src/title-case.js');
    expect(entries.at(-1)).toMatchObject({ type: 'RUN_COMPLETED', data: { reason: 'succeeded' } });
    // session/load gives the message back as what the user said; the replay hands it to the same request
    // (and matches each answer to its question, though the message was taken in before the second one).
    expect(value.loaded.some((u) => u.sessionUpdate === 'user_message_chunk' && u.content.type === 'text' && u.content.text === '@b1 steer: ACP-NOTE the helper belongs in src/title-case.js')).toBe(true);
    const replay = acia(['replay', value.runId, '--repo', repo]);
    expect(replay.stdout, replay.stderr).toMatch(/identical/);
  }, 120_000);

  it('refuses a relative cwd; without the model key it offers authenticate, answers auth_required, and takes the key', async () => {
    const repo = sampleRepo('acp-auth');
    const script = zeroLatencyScript('happy', tempDir('acp-script'));
    const { value } = await withAgent(
      script,
      {},
      never,
      async (agent, _seen, init) => {
        const relative = await agent.request('session/new', { cwd: '.', mcpServers: [] }).then(() => 'accepted', (e: Error) => e.message);
        const before = await agent.request('session/new', { cwd: repo, mcpServers: [] }).then(() => null, (e: { code: number; message: string }) => e);
        const wrong = await agent.request('authenticate', { methodId: 'oauth' }).then(() => 'accepted', (e: Error) => e.message);
        await agent.request('authenticate', { methodId: 'anthropic-api-key', _meta: { apiKey: 'sk-ant-test' } });
        const after = await agent.request('session/new', { cwd: repo, mcpServers: [] });
        return { methods: init.authMethods, relative, before, wrong, after };
      },
      'anthropic:claude-sonnet-4-5',
    );
    expect(value.relative).toMatch(/cwd must be an absolute path \(got "\."\)/);
    expect(value.methods?.map((m) => m.id)).toEqual(['anthropic-api-key']);
    expect(value.before?.code).toBe(-32000);
    expect(value.before?.message).toMatch(/needs ANTHROPIC_API_KEY/);
    expect(value.wrong).toMatch(/unknown authentication method oauth/);
    expect(value.after.sessionId).toMatch(/^acia-/);
  }, 30_000);

  it('refuses a session outside a git repository with an error the client sees', async () => {
    const dir = tempDir('acp-norepo');
    const script = zeroLatencyScript('happy', dir);
    const { value } = await withAgent(script, {}, never, async (agent) => agent.request('session/new', { cwd: dir, mcpServers: [] }).then(() => 'accepted', (e: Error) => e.message));
    expect(value).toMatch(/git|repository/i);
  }, 30_000);
});
