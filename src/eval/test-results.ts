// Per-test outcomes from a test run's output, so FAIL_TO_PASS and PASS_TO_PASS can be checked by name.
// Understands TAP (`ok 3 - name`, node --test --test-reporter=tap, tape, mocha's tap reporter) and the
// tick/cross lines of node's spec reporter, mocha and jest (`✔ name (2ms)`, `✖ name`, `✓`, `✕`).

export type TestOutcome = 'passed' | 'failed';

// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*[A-Za-z]/g;

export function parseTestOutcomes(output: string): Map<string, TestOutcome> {
  const found = new Map<string, TestOutcome>();
  const note = (name: string, outcome: TestOutcome) => {
    const key = name.trim();
    if (key === '') return;
    // A name seen twice (two files, a retry) counts as failed if any run of it failed.
    if (found.get(key) !== 'failed') found.set(key, outcome);
  };
  for (const raw of output.replace(ANSI, '').split('\n')) {
    const tap = /^\s*(not ok|ok)\s+\d+\s*(?:-\s*)?(.*?)\s*(#\s*(SKIP|TODO)\b.*)?$/i.exec(raw);
    if (tap) {
      if (tap[4] === undefined) note(unescapeTap(tap[2] ?? ''), tap[1]?.toLowerCase() === 'ok' ? 'passed' : 'failed');
      continue;
    }
    const tick = /^\s*([✔✓√]|[✖✕×])\s+(.*?)\s*(?:\(\d+(?:\.\d+)?\s*m?s\))?\s*$/.exec(raw);
    if (tick) note(tick[2] ?? '', /[✔✓√]/.test(tick[1] ?? '') ? 'passed' : 'failed');
  }
  return found;
}

function unescapeTap(name: string): string {
  return name.replace(/\\#/g, '#').replace(/\\\\/g, '\\');
}

export type NamedStatus = 'passed' | 'failed' | 'missing';

/** Each named test's status; a test absent from the output is `missing` and counts as not passing. */
export function statusOf(names: readonly string[], outcomes: Map<string, TestOutcome>): Record<string, NamedStatus> {
  return Object.fromEntries(names.map((n) => [n, outcomes.get(n.trim()) ?? 'missing']));
}
