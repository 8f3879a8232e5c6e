// The failing part of a test run's output, for the fix task, the human and the wiki. The tail of a test
// run is usually its passing lines and a coverage table; what a fixer needs is the failed assertion, its
// expected/actual diff and its location, wherever they are in the output.

import { stripWorkspacePrefixes } from './workspace-output.js';

// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*[A-Za-z]/g;

/** A line that starts a failure report, and how many lines after it belong to the report. */
const FAILURE_STARTS: ReadonlyArray<{ re: RegExp; after: number; before?: number }> = [
  { re: /^\s*not ok \d+/, after: 30 }, // TAP (tape, node --test --test-reporter=tap): YAML block follows
  { re: /^\s*(?:FAIL|×|✕)\s/, after: 30 }, // vitest / jest file and test headers
  { re: /^\s*● /, after: 30 }, // jest's per-test report
  { re: /^\s*✖ /, after: 24 }, // node --test spec reporter
  { re: /^\s{0,4}\d+\) \S/, after: 24 }, // mocha's numbered failures
  { re: /^_{3,} .+ _{3,}$/, after: 40 }, // pytest's per-test section
  { re: /^E\s{2,}/, after: 2 }, // pytest's assertion lines
  { re: /^(?:FAILED|ERROR) \S/, after: 0 }, // pytest's short summary
  { re: /^\s*--- FAIL: /, after: 12, before: 8 }, // go test (-v prints the failure's messages before this line)
  { re: /^error: /, after: 20, before: 6 }, // bun test: the source lines above, the diff below
  { re: /^\(fail\) /, after: 0 }, // bun test's per-test line
  { re: /^test \S+ \.\.\. FAILED$/, after: 0 }, // cargo test
  { re: /^---- \S+ stdout ----$/, after: 10 }, // cargo test's captured output of a failed test
  { re: /^thread '.*' panicked at /, after: 8 },
  { re: /^Traceback \(most recent call last\):/, after: 30 },
  { re: /(?:^|\s)(?:\w*Error|AssertionError)(?: \[\w+\])?: /, after: 16 },
  { re: /^\s*(?:- Expected|\+ Received|Expected:|Received:|expected:|actual:)/, after: 12 },
  { re: /^\s+\d+:\d+\s+error\s/, after: 0 }, // eslint
  { re: /error TS\d+: /, after: 2 }, // tsc
  { re: /: not found$|: command not found$|Cannot find module|No module named /, after: 2 },
];

export interface FailureExcerptOptions {
  /** Total size kept, in UTF-8 bytes (head, failures and tail together). */
  maxBytes?: number;
  headLines?: number;
  tailLines?: number;
}

/** A line that states what was expected and what came (an assertion), as opposed to a test's name or a file header. */
const ASSERTION = /AssertionError|\bexpected\b|\bExpected\b|Received|\bactual:|operator: |^E\s{2,}|expect\(received\)|assert(?:ion)? failed|panicked at|\bleft: |\bwant\b/;

/**
 * The output cut to its failures: the first `headLines` lines (the command, the runner's banner), the
 * failure reports found (overlapping windows merged; those that hold an assertion chosen first, so the
 * failing assertions survive however many other reports there are; shown in order until the budget is
 * spent), and the last `tailLines` lines (the summary). Workspace runners' line prefixes are removed.
 * Output that fits the budget is returned as it is, without ANSI codes. Output with no recognisable
 * failure keeps head and tail only.
 */
export function failureExcerpt(output: string, options: FailureExcerptOptions = {}): string {
  const maxBytes = options.maxBytes ?? 6000;
  const text = stripWorkspacePrefixes(output.replace(ANSI, '').replace(/\r\n?/g, '\n'));
  if (Buffer.byteLength(text, 'utf8') <= maxBytes) return text;
  const lines = text.split('\n');
  const headN = Math.min(options.headLines ?? 6, lines.length);
  const tailN = Math.min(options.tailLines ?? 16, Math.max(0, lines.length - headN));
  const tailFrom = lines.length - tailN;

  // Windows of failure lines between head and tail.
  const windows: Array<[number, number]> = [];
  for (let i = headN; i < tailFrom; i++) {
    const line = lines[i]!;
    const start = FAILURE_STARTS.find((s) => s.re.test(line));
    if (!start) continue;
    const from = Math.max(headN, i - (start.before ?? 1));
    const to = Math.min(tailFrom - 1, i + start.after);
    const last = windows[windows.length - 1];
    if (last && from <= last[1] + 1) last[1] = Math.max(last[1], to);
    else windows.push([from, to]);
  }

  const bytes = (ls: string[]): number => ls.reduce((n, l) => n + Buffer.byteLength(l, 'utf8') + 1, 0);
  const head = lines.slice(0, headN).map((l) => clip(l));
  const tail = lines.slice(tailFrom).map((l) => clip(l));
  let budget = maxBytes - bytes(head) - bytes(tail) - 200;
  // Reports with an assertion first, then the rest, each in the order of the output.
  const holdsAssertion = ([from, to]: [number, number]): boolean => lines.slice(from, to + 1).some((l) => ASSERTION.test(l));
  const ranked = [...windows.filter(holdsAssertion), ...windows.filter((w) => !holdsAssertion(w))];
  const chosen = new Map<[number, number], string[]>();
  for (const w of ranked) {
    const block = lines.slice(w[0], w[1] + 1).map((l) => clip(l));
    let size = bytes(block);
    if (size > budget) {
      if (chosen.size > 0) break;
      // The first failure always shows, cut to what fits.
      while (block.length > 1 && size > budget) size -= Buffer.byteLength(block.pop()!, 'utf8') + 1;
    }
    chosen.set(w, block);
    budget -= size;
  }
  const out: string[] = [...head];
  let at = headN;
  for (const w of windows) {
    const block = chosen.get(w);
    if (block === undefined) continue;
    if (w[0] > at) out.push(`[... ${w[0] - at} lines ...]`);
    out.push(...block);
    at = w[0] + block.length;
  }
  const left = windows.length - chosen.size;
  if (tailFrom > at) out.push(`[... ${tailFrom - at} lines${left > 0 ? `, ${left} more failure report(s)` : ''} ...]`);
  out.push(...tail);
  return out.join('\n');
}

/** One over-long line (a minified bundle, a base64 blob) must not eat the budget. */
function clip(line: string): string {
  return line.length > 400 ? `${line.slice(0, 400)}[... ${line.length - 400} chars]` : line;
}

export { environmentProblem } from './environment-problem.js';
