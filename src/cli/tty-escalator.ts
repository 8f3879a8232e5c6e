// The human checkpoint on a terminal: shows the problem and the last failure, and takes guidance
// text, retry, skip, approve or abort.
import { createInterface } from 'node:readline/promises';
import chalk from 'chalk';
import type { Escalator, EscalationQuestion, HumanAnswer } from '../team/deps.js';
import type { HumanAction } from '../core/ledger/events.js';
import { forTerminal } from '../core/text/terminal.js';

/** `view.before` stops the live progress view from drawing over the question; `view.after` lets it draw again. */
const ACTION_WORDS: readonly string[] = ['retry', 'skip', 'approve', 'abort'];

export function ttyEscalator(input: NodeJS.ReadableStream, output: NodeJS.WritableStream, view: { before: () => void; after: () => void }): Escalator {
  return {
    async ask(q: EscalationQuestion): Promise<HumanAnswer | null> {
      view.before();
      // The message and the failure carry model and test output: shown, never interpreted by the terminal.
      output.write(`\n${chalk.magenta.bold('The team needs you')} (${q.reason}${q.taskId ? `, task ${forTerminal(q.taskId)}` : ''})\n${forTerminal(q.message, { newlines: true })}\n`);
      if (q.lastFailure) output.write(`${chalk.dim('Last failure:')}\n${indent(forTerminal(q.lastFailure, { newlines: true }).split('\n').slice(-25).join('\n'))}\n`);
      const words: HumanAction[] = q.options.filter((o) => o !== 'guidance');
      const help = `${q.options.includes('guidance') ? 'type guidance for the team, or ' : ''}one of: ${words.join(', ')}`;
      const rl = createInterface({ input, output, terminal: true });
      // When the input ends (the terminal went away) rl.question neither resolves nor rejects, and the
      // run would wait forever: the interface's close says nobody can answer now.
      const closed = new Promise<null>((resolve) => rl.once('close', () => resolve(null)));
      try {
        for (;;) {
          const answer = await Promise.race([rl.question(`${chalk.bold('>')} ${chalk.dim(`(${help})`)} `), closed]);
          if (answer === null) return null;
          const line = answer.trim();
          if (line === '') continue;
          const word = line.toLowerCase() as HumanAction;
          if (words.includes(word)) return { action: word };
          // An answer word this question does not take is a slip, not guidance text.
          if (ACTION_WORDS.includes(word)) {
            output.write(`"${word}" does not apply here. Please answer ${q.options.includes('guidance') ? 'with guidance text or ' : ''}${words.join(', ')}.\n`);
            continue;
          }
          if (q.options.includes('guidance')) return { action: 'guidance', text: line };
          output.write(`Please answer ${words.join(', ')}.\n`);
        }
      } catch {
        // Ctrl-D on the prompt rejects the question: nobody can answer now; the run waits on disk for `acia resume`.
        return null;
      } finally {
        rl.close();
        view.after();
      }
    },
  };
}

function indent(s: string): string {
  return s
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n');
}
