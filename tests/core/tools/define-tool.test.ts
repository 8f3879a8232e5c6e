import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AciaError } from '../../../src/core/errors.js';
import { callTool, defineTool } from '../../../src/core/tools/define-tool.js';
import { devTools, qaTools, readOnlyTools } from '../../../src/core/tools/tool-sets.js';
import { truncateMiddle } from '../../../src/core/tools/truncate.js';
import { memCtx } from './memfs-ctx.js';

const echo = defineTool({
  name: 'echo',
  description: 'echo',
  input: z.strictObject({ text: z.string() }),
  output: z.object({}),
  readOnly: true,
  run: (input) => {
    if (input.text === 'throw') throw new Error('kaboom');
    if (input.text === 'acia') throw new AciaError('PATH_OUTSIDE_ROOT', 'nope');
    return Promise.resolve({ ok: true, forModel: input.text, forDisplay: input.text });
  },
});

describe('defineTool / callTool', () => {
  it('builds an acia descriptor with a JSON Schema of the input', () => {
    expect(echo.descriptor).toMatchObject({ provider: 'acia', name: 'echo', version: '1', sideEffects: false });
    expect(echo.descriptor.inputSchema).toMatchObject({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'] });
  });
  it('turns invalid input, thrown errors and AciaErrors into ok:false results', async () => {
    const { ctx } = memCtx({});
    expect((await callTool(echo, { text: 5 }, ctx)).forModel).toMatch(/Invalid input for echo/);
    expect(await callTool(echo, { text: 'throw' }, ctx)).toMatchObject({ ok: false, forModel: 'echo failed: kaboom' });
    expect(await callTool(echo, { text: 'acia' }, ctx)).toMatchObject({ ok: false, data: { errorCode: 'PATH_OUTSIDE_ROOT' } });
    expect(await callTool(echo, { text: 'hi' }, ctx)).toMatchObject({ ok: true, forModel: 'hi' });
  });
});

describe('tool sets', () => {
  it('give the Dev its nine tools, each name once', () => {
    expect(devTools.map((t) => t.name).sort()).toEqual(
      ['edit_file', 'git_diff', 'git_status', 'list_dir', 'read_file', 'run_command', 'run_tests', 'search', 'write_file'],
    );
    expect(devTools.find((t) => t.name === 'read_file')?.readOnly).toBe(true);
  });
  it('gives PM only reads and QA no git writes', () => {
    expect(readOnlyTools.map((t) => t.name)).toEqual(['read_file', 'list_dir', 'search']);
    expect(qaTools.map((t) => t.name)).toEqual(expect.arrayContaining(['run_tests', 'run_command', 'write_file', 'edit_file']));
  });
});

describe('truncateMiddle', () => {
  it('keeps head and tail and says how much was cut', () => {
    const text = Array.from({ length: 100 }, (_, i) => `L${i}`).join('\n');
    const t = truncateMiddle(text, { maxLines: 10 });
    expect(t.truncated).toBe(true);
    expect(t.cutLines).toBe(90);
    expect(t.text).toMatch(/^L0\n[\s\S]*\[\.\.\. 90 lines \(\d+ bytes\) cut from the middle \.\.\.\]\n[\s\S]*L99$/);
  });
  it('cuts by bytes, including a single huge line', () => {
    const t = truncateMiddle('x'.repeat(10_000), { maxBytes: 100 });
    expect(t.text.length).toBeLessThan(200);
    expect(t.cutBytes).toBeGreaterThan(9_800);
  });
  it('leaves short text alone', () => {
    expect(truncateMiddle('abc')).toEqual({ text: 'abc', truncated: false, cutLines: 0, cutBytes: 0 });
  });
});
