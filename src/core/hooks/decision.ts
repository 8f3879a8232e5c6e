// What a hook's exit code and output decide. Claude Code's protocol: exit 0 allows (a JSON object on
// stdout may still decide), exit 2 denies with stderr as the reason. Unlike Claude Code, any other ending
// (another exit code, a signal, a timeout, a start failure, a garbled JSON answer) denies too: a gate that
// breaks is a clear denial carrying its output, never a silent allow.
import { z } from 'zod';
import { truncateMiddle } from '../tools/truncate.js';

/** How a hook process ended. */
export interface HookExec {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  durationMs: number;
  /** Why the process could not start at all. */
  startError?: string;
}

export type HookVerdict =
  | { allow: true; /** Text for the agent (`additionalContext`). */ context?: string }
  | {
      allow: false;
      reason: string;
      /** `continue: false`: the work stops here, whatever the point would otherwise do with a denial. */
      stop?: true;
      /** Set when the hook broke rather than decided. */
      failure?: 'crashed' | 'timed_out' | 'not_started' | 'bad_output';
    };

/** Claude Code's JSON answer; the same keys decide for ACIA's own hooks. Unknown keys are ignored. */
const JsonAnswer = z.looseObject({
  continue: z.boolean().optional(),
  stopReason: z.string().optional(),
  decision: z.enum(['allow', 'approve', 'deny', 'block']).optional(),
  reason: z.string().optional(),
  systemMessage: z.string().optional(),
  hookSpecificOutput: z
    .looseObject({
      permissionDecision: z.enum(['allow', 'deny', 'ask']).optional(),
      permissionDecisionReason: z.string().optional(),
      additionalContext: z.string().optional(),
    })
    .optional(),
});

/** The reason text kept for the agent and the ledger. */
const REASON_BYTES = 8000;

export function interpretHook(name: string, x: HookExec, timeoutMs: number): HookVerdict {
  const who = `hook ${name}`;
  if (x.startError !== undefined) return { allow: false, reason: `${who} could not start: ${x.startError}`, failure: 'not_started' };
  if (x.timedOut) return { allow: false, reason: `${who} timed out after ${seconds(timeoutMs)} and was killed${outputTail(x)}`, failure: 'timed_out' };
  if (x.exitCode === null) return { allow: false, reason: `${who} was killed by ${x.signal ?? 'a signal'}${outputTail(x)}`, failure: 'crashed' };
  if (x.exitCode === 2) {
    const said = x.stderr.trim();
    return { allow: false, reason: said === '' ? `${who} denied (exit 2) without a message on stderr` : cut(said) };
  }
  if (x.exitCode !== 0) return { allow: false, reason: `${who} failed with exit code ${x.exitCode}${outputTail(x)}`, failure: 'crashed' };
  return interpretStdout(who, x.stdout.trim());
}

function interpretStdout(who: string, out: string): HookVerdict {
  // Plain text on stdout is Claude Code's transcript note: it decides nothing.
  if (!out.startsWith('{')) return { allow: true };
  let value: unknown;
  try {
    value = JSON.parse(out);
  } catch (e) {
    return { allow: false, reason: `${who} printed a JSON answer that does not parse (${(e as Error).message}): ${cut(out, 500)}`, failure: 'bad_output' };
  }
  const parsed = JsonAnswer.safeParse(value);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    return { allow: false, reason: `${who} printed an answer ACIA cannot read: ${first?.path.join('.') ?? ''}: ${first?.message ?? 'invalid'}`, failure: 'bad_output' };
  }
  const a = parsed.data;
  if (a.continue === false) return { allow: false, stop: true, reason: cut(a.stopReason ?? a.reason ?? `${who} stopped the work (continue: false)`) };
  const specific = a.hookSpecificOutput;
  if (specific?.permissionDecision === 'deny') return { allow: false, reason: cut(specific.permissionDecisionReason ?? a.reason ?? `${who} denied`) };
  if (specific?.permissionDecision === 'ask') {
    // No human is asked per tool call in a team run: what needs one is an escalation, so this is a denial.
    return { allow: false, reason: cut(`${who} asked for a human's permission, which ACIA does not ask per tool call${specific.permissionDecisionReason ? `: ${specific.permissionDecisionReason}` : ''}`) };
  }
  if (a.decision === 'deny' || a.decision === 'block') return { allow: false, reason: cut(a.reason ?? `${who} denied`) };
  const context = specific?.additionalContext;
  return context === undefined || context === '' ? { allow: true } : { allow: true, context: cut(context) };
}

function outputTail(x: HookExec): string {
  const text = [x.stderr.trim(), x.stdout.trim()].filter((s) => s !== '').join('\n');
  return text === '' ? ' (no output)' : `:\n${cut(text, 2000)}`;
}

function cut(text: string, maxBytes = REASON_BYTES): string {
  return truncateMiddle(text, { maxBytes, maxLines: 200 }).text;
}

function seconds(ms: number): string {
  return `${Math.round(ms / 100) / 10}s`;
}
