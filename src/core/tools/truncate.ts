// The one truncation helper: every tool cuts what the model sees here, keeping head and tail and saying what was cut.

export interface TruncateOptions {
  /** Max lines kept (head + tail). */
  maxLines?: number;
  /** Max bytes (UTF-8) kept (head + tail). */
  maxBytes?: number;
}

export const DEFAULT_MAX_LINES = 400;
export const DEFAULT_MAX_BYTES = 24_000;

export interface Truncated {
  text: string;
  truncated: boolean;
  cutLines: number;
  cutBytes: number;
}

/**
 * Keeps the first and last halves of `text` within both the line and the byte budget. The tail matters
 * as much as the head: test summaries and errors are usually at the end of output.
 */
export function truncateMiddle(text: string, options: TruncateOptions = {}): Truncated {
  const maxLines = options.maxLines ?? DEFAULT_MAX_LINES;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const totalBytes = Buffer.byteLength(text, 'utf8');
  const lines = text.split('\n');
  if (lines.length <= maxLines && totalBytes <= maxBytes) {
    return { text, truncated: false, cutLines: 0, cutBytes: 0 };
  }
  const headLines = Math.ceil(maxLines / 2);
  const tailLines = Math.floor(maxLines / 2);
  let head = lines.slice(0, headLines);
  let tail = lines.length > headLines ? lines.slice(Math.max(headLines, lines.length - tailLines)) : [];
  const halfBytes = Math.floor(maxBytes / 2);
  head = takeBytes(head, halfBytes, 'head');
  tail = takeBytes(tail, halfBytes, 'tail');
  const headText = head.join('\n');
  const tailText = tail.join('\n');
  const keptLines = head.length + tail.length;
  const cutLines = Math.max(0, lines.length - keptLines);
  const cutBytes = Math.max(0, totalBytes - Buffer.byteLength(headText, 'utf8') - Buffer.byteLength(tailText, 'utf8'));
  const marker = `[... ${cutLines} lines (${cutBytes} bytes) cut from the middle ...]`;
  return { text: `${headText}\n${marker}\n${tailText}`, truncated: true, cutLines, cutBytes };
}

/** Keeps whole lines within `budget` bytes; a single over-long line is cut by characters. */
function takeBytes(lines: string[], budget: number, side: 'head' | 'tail'): string[] {
  const out: string[] = [];
  let used = 0;
  const ordered = side === 'head' ? lines : [...lines].reverse();
  for (const line of ordered) {
    const size = Buffer.byteLength(line, 'utf8') + 1;
    if (used + size > budget) {
      const room = budget - used;
      if (out.length === 0 && room > 0) {
        out.push(side === 'head' ? cutChars(line, room) : cutCharsFromEnd(line, room));
      }
      break;
    }
    out.push(line);
    used += size;
  }
  return side === 'head' ? out : out.reverse();
}

function cutChars(line: string, bytes: number): string {
  return Buffer.from(line, 'utf8').subarray(0, bytes).toString('utf8').replace(/\uFFFD$/, '');
}
function cutCharsFromEnd(line: string, bytes: number): string {
  const buf = Buffer.from(line, 'utf8');
  return buf.subarray(Math.max(0, buf.length - bytes)).toString('utf8').replace(/^\uFFFD/, '');
}
