// Quoting for the commands ACIA prints, so a hint pasted into a POSIX shell runs as printed.

/** One word for sh/bash/zsh: left bare when it has nothing a shell would read, else single-quoted. */
export function shellQuote(word: string): string {
  if (word !== '' && /^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** A command line from words, each quoted as needed. */
export function shellLine(words: readonly string[]): string {
  return words.map(shellQuote).join(' ');
}
