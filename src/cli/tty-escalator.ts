// The human checkpoint on a terminal: shows the problem and the last failure, and takes guidance
// text, retry, skip, approve or abort.
import { createInterface } from 'node:readline/promises';
import chalk from 'chalk';
import type { Escalator, EscalationQuestion, HumanAnswer } from '../team/deps.js';
import type { HumanAction } from '../core/ledger/run-vocabulary.js';
import { forTerminal } from '../core/text/terminal.js';
import { parseApprovalAnswer } from '../team/plan-approval.js';
import { editInEditor } from './plan-editor.js';
import type { Plan } from '../core/acm/contracts.js';

/** `view.before` stops the live progress view from drawing over the question; `view.after` lets it draw again. */
const ACTION_WORDS: readonly string[] = ['retry', 'skip', 'approve', 'abort'];

/** `writable`: the repository, which the editor for a plan edit must not be started from. */
export function ttyEscalator(input: NodeJS.ReadableStream, output: NodeJS.WritableStream, view: { before: () => void; after: () => void }, writable: readonly string[] = []): Escalator {
  return {
    async ask(q: EscalationQuestion): Promise<HumanAnswer | null> {
      view.before();
      // The message and the failure carry model and test output: shown, never interpreted by the terminal.
      output.write(`\n${chalk.magenta.bold('The team needs you')} (${q.reason}${q.taskId ? `, task ${forTerminal(q.taskId)}` : ''})\n${forTerminal(q.message, { newlines: true })}\n`);
      if (q.problem) output.write(`${chalk.red('That answer was refused:')} ${forTerminal(q.problem)}\n`);
      if (q.lastFailure) output.write(`${chalk.dim('Last failure:')}\n${indent(forTerminal(q.lastFailure, { newlines: true }).split('\n').slice(-25).join('\n'))}\n`);
      const words: HumanAction[] = q.options.filter((o) => o !== 'guidance');
      const help = `${q.options.includes('guidance') ? 'type guidance for the team, or ' : ''}one of: ${words.join(', ')}`;
      const rl = createInterface({ input, output, terminal: true });
      // When the input ends (the terminal went away) rl.question neither resolves nor rejects, and the
      // run would wait forever: the interface's close says nobody can answer now.
      const closed = new Promise<null>((resolve) => rl.once('close', () => resolve(null)));
      let editing: Plan | null = null;
      try {
        for (;;) {
          const answer = await Promise.race([rl.question(`${chalk.bold('>')} ${chalk.dim(`(${help})`)} `), closed]);
          if (answer === null) return null;
          const line = answer.trim();
          if (line === '') continue;
          if (q.reason === 'plan_approval') {
            const a = parseApprovalAnswer(line);
            if (a.action !== 'edit' || a.text !== undefined || !q.plan) return a;
            // `edit` alone: the plan in $EDITOR, once this prompt has let go of the terminal.
            editing = q.plan;
            break;
          }
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
      if (editing === null) return null;
      // The edited JSON goes back to the run, which validates it; an unchanged plan or a failed editor asks again.
      const edited = await editInEditor(editing, output, writable);
      return edited !== null ? { action: 'edit', text: edited } : this.ask(q);
    },
  };
}

function indent(s: string): string {
  return s
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n');
}
