// The terminal checkpoint: typed answers, a slip asked again, and the end of its input (the terminal went
// away) as "nobody can answer now" rather than a prompt that waits forever.
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ttyEscalator } from '../../src/cli/tty-escalator.js';
import type { EscalationQuestion } from '../../src/team/deps.js';

const question: EscalationQuestion = {
  runId: '20261126-000000-abcdef',
  reason: 'fixes_exhausted',
  taskId: 't1',
  message: 'the tests still fail',
  lastFailure: 'expected 1 to be 2',
  options: ['guidance', 'retry', 'skip', 'abort'],
};

function terminal(): { input: PassThrough; output: PassThrough; shown: () => string; prompted: (n: number) => Promise<void> } {
  const input = new PassThrough();
  const output = new PassThrough();
  let text = '';
  output.on('data', (d: Buffer) => (text += d.toString()));
  // Resolves once the prompt has been shown n times (a line typed before its prompt would be lost).
  const prompted = async (n: number) => {
    while (text.split('(type guidance').length - 1 < n) await new Promise((r) => setTimeout(r, 5));
  };
  return { input, output, shown: () => text, prompted };
}

describe('ttyEscalator', () => {
  it('takes an answer word, and guidance text; "approve" where it does not apply is asked again', async () => {
    const t = terminal();
    const views: string[] = [];
    const esc = ttyEscalator(t.input, t.output, { before: () => views.push('before'), after: () => views.push('after') });
    const first = esc.ask(question);
    await t.prompted(1);
    t.input.write('approve\n');
    await t.prompted(2);
    t.input.write('skip\n');
    expect(await first).toEqual({ action: 'skip' });
    expect(t.shown()).toContain('"approve" does not apply here');
    const second = esc.ask(question);
    await t.prompted(3);
    t.input.write('  use UTC everywhere \n');
    expect(await second).toEqual({ action: 'guidance', text: 'use UTC everywhere' });
    expect(views).toEqual(['before', 'after', 'before', 'after']);
  });

  it('answers null when its input ends, at once, and lets the view draw again', async () => {
    const t = terminal();
    const views: string[] = [];
    const esc = ttyEscalator(t.input, t.output, { before: () => views.push('before'), after: () => views.push('after') });
    const asked = esc.ask(question);
    t.input.end();
    const outcome = await Promise.race([asked, new Promise((r) => setTimeout(() => r('still waiting'), 2_000))]);
    expect(outcome).toBeNull();
    expect(views).toEqual(['before', 'after']);
  });
});
