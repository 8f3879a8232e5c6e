// Quoting for the commands ACIA prints, so a hint pasted into a POSIX shell runs as printed.
import { shellQuote } from '../core/text/shell-quote.js';

export { shellQuote };

/** A command line from words, each quoted as needed. */
export function shellLine(words: readonly string[]): string {
  return words.map(shellQuote).join(' ');
}
