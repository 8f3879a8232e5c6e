// Text that ACIA did not write itself (model replies, tool output, plan titles, file names, memory pages)
// reaches the user's terminal only through here. A raw ESC or CSI could forge a "run succeeded" line,
// rewrite the window title, or write the clipboard (OSC 52); a bare CR can overwrite what ACIA printed;
// bidi overrides can make text read differently than it is. ACIA's own colours are added after this.

// C0 controls except TAB and LF, DEL, and the C1 range (U+0080-U+009F, which include the 8-bit CSI and OSC).
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROLS = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F]/g;
// Bidirectional embeddings, overrides and isolates (the "Trojan Source" characters).
const BIDI = /[\u202A-\u202E\u2066-\u2069]/g;

export interface TerminalTextOptions {
  /** Keep line breaks (a block of output); otherwise a line break becomes a space (a one-line field). */
  newlines?: boolean;
}

/** `text` with every control character a terminal would act on removed (see the file comment). */
export function forTerminal(text: string, options: TerminalTextOptions = {}): string {
  const flat = options.newlines ? text.replace(/\r\n/g, '\n') : text.replace(/\r\n|\n/g, ' ');
  return flat.replace(CONTROLS, '').replace(BIDI, '');
}
