// Write-ahead in the toolbox: a tool that can change something runs only once its TOOL_CALL is durable;
// ACIA's own read-only tools do not wait for the ledger at all (their call and result are queued for its
// next group commit); an MCP tool's read-only hint earns nothing. Results are queued: their tool has run.
import { describe, expect, it } from 'vitest';
import type { Tool, ToolContext, ToolResult } from '../../src/core/tools/types.js';
import type { Recorder } from '../../src/team/recorder.js';
import { makeToolbox } from '../../src/team/toolbox.js';

function fakeTool(name: string, readOnly: boolean, provider: 'acia' | 'mcp'): Tool {
  return {
    name,
    description: name,
    input: undefined as unknown as Tool['input'],
    output: undefined as unknown as Tool['output'],
    readOnly,
    descriptor: { provider, namespace: 'test', name, version: '1', description: name, inputSchema: {}, outputSchema: {}, sideEffects: !readOnly },
    run: () => Promise.resolve({ ok: true, forModel: 'ok', forDisplay: 'ok' }),
  };
}

/** A recorder whose awaited TOOL_CALL becomes durable only when the test says so; queued entries are logged. */
function slowRecorder(log: string[]): { recorder: Recorder; release: () => void } {
  let release = (): void => undefined;
  const recorder = {
    note: (_actor: string, type: string) => {
      log.push(`queue ${type}`);
      return Promise.resolve();
    },
    record: (_actor: string, type: string) => {
      log.push(`append ${type}`);
      if (type !== 'TOOL_CALL') return Promise.resolve({});
      return new Promise((resolve) => {
        release = () => {
          log.push('durable TOOL_CALL');
          resolve({});
        };
      });
    },
    blob: () => Promise.resolve(`sha256:${'0'.repeat(64)}`),
    now: () => 0,
  } as unknown as Recorder;
  return { recorder, release: () => release() };
}

async function order(tool: Tool): Promise<string[]> {
  const log: string[] = [];
  const { recorder, release } = slowRecorder(log);
  const box = makeToolbox({
    tools: [tool],
    toSpec: () => ({ name: tool.name, description: '', inputSchema: {} }),
    ctx: Promise.resolve({} as ToolContext),
    callTool: (): Promise<ToolResult> => {
      log.push('run');
      return Promise.resolve({ ok: true, forModel: 'ok', forDisplay: 'ok' });
    },
    recorder,
    actor: 'dev:t1',
    taskId: 't1',
  });
  const done = box.invoke({ id: 'c1', name: tool.name, input: {} });
  await new Promise((r) => setTimeout(r, 20));
  release();
  await done;
  return log;
}

describe('toolbox write-ahead', () => {
  it('runs a tool that may change something only after its TOOL_CALL is durable', async () => {
    expect(await order(fakeTool('write_file', false, 'acia'))).toEqual(['append TOOL_CALL', 'durable TOOL_CALL', 'run', 'queue TOOL_RESULT']);
  });

  it("runs ACIA's read-only tool without waiting for the ledger: call and result are queued in order", async () => {
    expect(await order(fakeTool('read_file', true, 'acia'))).toEqual(['queue TOOL_CALL', 'run', 'queue TOOL_RESULT']);
  });

  it('waits for durability before an MCP tool that only claims to be read-only', async () => {
    expect(await order(fakeTool('mcp__x__read', true, 'mcp'))).toEqual(['append TOOL_CALL', 'durable TOOL_CALL', 'run', 'queue TOOL_RESULT']);
  });
});
