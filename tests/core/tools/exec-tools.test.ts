import { describe, expect, it } from 'vitest';
import { callTool } from '../../../src/core/tools/define-tool.js';
import { detectTestCommand } from '../../../src/core/tools/run-tests.js';
import { runCommand, runTests } from '../../../src/core/tools/tool-sets.js';
import { FakeRunner, memCtx } from './memfs-ctx.js';

describe('run_command', () => {
  it('runs through the injected runner in the root, capping timeout_s at the configured limit', async () => {
    const runner = new FakeRunner({ exitCode: 3, output: 'boom' });
    const { ctx } = memCtx({}, runner);
    const r = await callTool(runCommand, { command: 'make', timeout_s: 3000 }, { ...ctx, commandTimeoutS: 20 });
    expect(runner.calls[0]).toMatchObject({ command: 'make', options: { cwd: '/repo', timeoutMs: 20_000 } });
    expect(r.ok).toBe(false);
    expect(r.forModel).toContain('[exit code 3]\nboom');
  });
  it('reports a timeout', async () => {
    const { ctx } = memCtx({}, new FakeRunner({ exitCode: null, signal: 'SIGKILL', timedOut: true }));
    const r = await callTool(runCommand, { command: 'sleep 100', timeout_s: 1 }, ctx);
    expect(r.ok).toBe(false);
    expect(r.forModel).toMatch(/timed out after 1s/);
    expect(r.data).toMatchObject({ timedOut: true });
  });
});

describe('run_tests', () => {
  it('uses the configured command, appends a quoted path, and reports exit code and counts', async () => {
    const runner = new FakeRunner({ exitCode: 1, output: 'Tests:       1 failed, 4 passed, 5 total\n' });
    const { ctx } = memCtx({ 'test/a.test.js': '' }, runner);
    const r = await callTool(runTests, { path: 'test/a.test.js' }, { ...ctx, testCommand: 'npx jest' });
    expect(runner.calls[0]?.command).toBe("npx jest 'test/a.test.js'");
    expect(r.ok).toBe(false);
    expect(r.data).toMatchObject({ exitCode: 1, passed: 4, failed: 1, command: "npx jest 'test/a.test.js'", timedOut: false, framework: 'jest' });
  });
  it('trusts the exit code over a summary that claims success', async () => {
    const runner = new FakeRunner({ exitCode: 2, output: '      Tests  5 passed (5)\n' });
    const { ctx } = memCtx({ 'package.json': JSON.stringify({ scripts: { test: 'vitest run' } }) }, runner);
    const r = await callTool(runTests, {}, ctx);
    expect(runner.calls[0]?.command).toBe('npm test --');
    expect(r.ok).toBe(false);
    expect(r.data).toMatchObject({ exitCode: 2, passed: 5, failed: 0 });
  });
  it('refuses a path outside the worktree', async () => {
    const { ctx } = memCtx({}, new FakeRunner());
    const r = await callTool(runTests, { path: '../outside' }, { ...ctx, testCommand: 'pytest' });
    expect(r.ok).toBe(false);
  });
  it('detects pytest, go and cargo, and nothing for an empty repo', () => {
    expect(detectTestCommand(memCtx({ 'pyproject.toml': '' }).ctx)).toBe('python3 -m pytest');
    expect(detectTestCommand(memCtx({ 'go.mod': '' }).ctx)).toBe('go test ./...');
    expect(detectTestCommand(memCtx({ 'Cargo.toml': '' }).ctx)).toBe('cargo test');
    expect(detectTestCommand(memCtx({ 'package.json': '{"scripts":{"test":"echo \\"Error: no test specified\\" && exit 1"}}' }).ctx)).toBeNull();
  });
});
