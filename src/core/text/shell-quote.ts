// Quoting one word for a POSIX shell: the commands ACIA prints, and the ones it builds for `sh -c`.

/** One word for sh/bash/zsh: left bare when it has nothing a shell would read, else single-quoted. */
export function shellQuote(word: string): string {
  if (word !== '' && /^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}
