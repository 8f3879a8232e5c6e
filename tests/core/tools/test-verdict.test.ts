// The one reading of a test run the QA task, the final check and best-of-N share.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { callTool, defineTool } from '../../../src/core/tools/define-tool.js';
import { runTests } from '../../../src/core/tools/run-tests.js';
import { isTestRun, testVerdict } from '../../../src/core/tools/test-verdict.js';
import { memCtx } from './memfs-ctx.js';

const run = (data: Record<string, unknown>, ok = data.exitCode === 0) => ({ ok, forModel: 'out', forDisplay: 'line', data });

describe('testVerdict', () => {
  it('is the exit code with the counts the runner printed, whatever else the result says', () => {
    const v = testVerdict(run({ exitCode: 0, passed: 3, failed: 0, framework: 'node', command: 'npm test', timedOut: false }, false), 'fallback');
    expect(v).toEqual({ passed: true, exitCode: 0, command: 'npm test', passedCount: 3, failedCount: 0, cannotRun: null, advice: null, forModel: 'out', forDisplay: 'line' });
    expect(testVerdict(run({ exitCode: 1, passed: 2, failed: 1, framework: null, command: 'pytest', timedOut: false }), 'x')).toMatchObject({ passed: false, exitCode: 1, failedCount: 1 });
  });

  it('says why a command could not run only when it failed', () => {
    const cannot = { exitCode: 127, passed: null, failed: null, framework: null, command: 'pytest', timedOut: false, cannotRun: 'pytest: not found' };
    expect(testVerdict(run(cannot), 'x').cannotRun).toBe('pytest: not found');
    expect(testVerdict(run({ ...cannot, exitCode: 0 }), 'x').cannotRun).toBeNull();
  });

  it('reads nothing from a result that is not a test run: no exit code, not passed, the fallback command', () => {
    // A call that never reached the tool (invalid input) carries an error code, not a test run.
    expect(testVerdict(run({ errorCode: 'INPUT_INVALID' }, false), 'npm test')).toMatchObject({ passed: false, exitCode: null, command: 'npm test', passedCount: null });
    expect(testVerdict(null, 'none')).toMatchObject({ passed: false, exitCode: null, command: 'none', forModel: 'no test command could be run' });
  });

  it('knows an agent call that ran the tests from one that did not', () => {
    expect(isTestRun('run_tests', run({ exitCode: 0, passed: 1, failed: 0, framework: null, command: 'c', timedOut: false }))).toBe(true);
    expect(isTestRun('run_tests', run({ errorCode: 'INPUT_INVALID' }))).toBe(false);
    expect(isTestRun('run_command', run({ exitCode: 0, passed: 1, failed: 0, framework: null, command: 'c', timedOut: false }))).toBe(false);
  });
});

describe('typed tool results', () => {
  it("a tool's output schema is its descriptor's data, and data that breaks it is the tool's failure, not the caller's guess", async () => {
    expect((runTests.descriptor.outputSchema as { properties: { data: { required: string[] } } }).properties.data.required).toEqual(expect.arrayContaining(['exitCode', 'command']));
    const liar = defineTool({ name: 'liar', description: 'x', input: z.strictObject({}), output: z.object({ n: z.number() }), readOnly: true, run: () => Promise.resolve({ ok: true, forModel: '', forDisplay: '', data: { n: 'one' as unknown as number } }) });
    const r = await callTool(liar, {}, memCtx({}).ctx);
    expect(r).toMatchObject({ ok: false, data: { errorCode: 'INTERNAL' } });
    expect(r.forModel).toMatch(/liar returned data its output schema refuses/);
  });
});
