// The `hooks` configuration: each entry a command run at one lifecycle point, with matchers on the task
// kind, the tool and the paths concerned. The user's config and (after `acia trust`) the repository's
// both contribute; only the user's own file may run a hook outside the sandbox.
import { z } from 'zod';
import { AciaError } from '../errors.js';
import { CLAUDE_CODE_EVENTS, ClaudeCodeEvent, HookEvent, isClaudeCodeEvent, MATCHERS_OF, type HookEvent as HookEventName } from './events.js';

/** One glob, a `|`-separated list (Claude Code's `Edit|Write`), or an array of globs. */
const Globs = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]);

export const DEFAULT_HOOK_TIMEOUT_S = 60;

export const HookConfig = z
  .strictObject({
    /** Shown in `acia hooks list`, recorded with every decision; default `<on>#<n>`. */
    name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/, 'a hook name is 1-64 letters, digits, _ . : or -').optional(),
    /** An ACIA point, or a Claude Code event name (the hook then gets Claude Code's input shape). */
    on: z.union([HookEvent, ClaudeCodeEvent]),
    /** A shell command (sh -c), run in the worktree with the event's JSON on stdin. */
    command: z.string().min(1).max(10_000),
    /** Task kinds (capabilities) it applies to: `dev.*`, `qa.verify`. */
    kind: Globs.optional(),
    /** Tool names it applies to (tool.pre, tool.post): ACIA's (`run_command`) or Claude Code's (`Bash`). */
    tool: Globs.optional(),
    /** Paths it applies to: the tool call's path, or the files the task changed. */
    paths: Globs.optional(),
    timeoutS: z.number().positive().max(3600).default(DEFAULT_HOOK_TIMEOUT_S),
    /** false runs the hook outside the sandbox, with your environment: allowed in your user config only. */
    sandbox: z.boolean().default(true),
    /** Set by ACIA when it loads a file (what a file says here is replaced): where the hook came from. */
    origin: z.strictObject({ file: z.string(), user: z.boolean() }).optional(),
  })
  .superRefine((h, ctx) => {
    const event = eventOf(h.on);
    for (const m of ['kind', 'tool', 'paths'] as const) {
      if (h[m] !== undefined && !MATCHERS_OF[event].includes(m)) {
        ctx.addIssue({ code: 'custom', path: [m], message: `"${m}" does not apply to ${h.on} hooks (they match on ${MATCHERS_OF[event].join(', ') || 'nothing'})` });
      }
    }
  });
export type HookConfig = z.input<typeof HookConfig>;

export const HooksConfig = z.array(HookConfig);

/** A configured hook, ready to match and run. */
export interface ResolvedHook {
  /** Its name, or `<on>#<n>` counted per point in configuration order. */
  id: string;
  event: HookEventName;
  /** Set when configured under a Claude Code event name: the input it gets is in Claude Code's shape. */
  claudeCode: ClaudeCodeEvent | null;
  command: string;
  kind: string[];
  tool: string[];
  paths: string[];
  timeoutMs: number;
  sandbox: boolean;
  /** The file it was configured in, when known (`acia hooks list`). */
  source: string | null;
  /** From the user's own config: only such a hook may leave the sandbox or read a script from a masked home. */
  fromUser: boolean;
}

export function eventOf(on: string): HookEventName {
  return isClaudeCodeEvent(on) ? CLAUDE_CODE_EVENTS[on] : HookEvent.parse(on);
}

/** The hooks of a loaded config, in order. */
export function resolveHooks(entries: readonly z.output<typeof HookConfig>[]): ResolvedHook[] {
  const counts = new Map<string, number>();
  const ids = new Set<string>();
  return entries.map((h) => {
    const event = eventOf(h.on);
    const n = (counts.get(h.on) ?? 0) + 1;
    counts.set(h.on, n);
    const id = h.name ?? `${h.on}#${n}`;
    if (ids.has(id)) throw new AciaError('CONFIG_INVALID', `two hooks are named "${id}"${h.origin ? ` (the second in ${h.origin.file})` : ''}`, { hint: 'give each hook its own "name"' });
    ids.add(id);
    return {
      id,
      event,
      claudeCode: isClaudeCodeEvent(h.on) ? h.on : null,
      command: h.command,
      kind: globList(h.kind),
      tool: globList(h.tool),
      paths: globList(h.paths),
      timeoutMs: Math.round(h.timeoutS * 1000),
      fromUser: h.origin?.user === true,
      // Never outside the sandbox on a file's word unless that file is the user's own.
      sandbox: h.sandbox || h.origin?.user !== true,
      source: h.origin?.file ?? null,
    };
  });
}

function globList(g: string | string[] | undefined): string[] {
  if (g === undefined) return [];
  return (Array.isArray(g) ? g : g.split('|')).map((s) => s.trim()).filter((s) => s !== '');
}

/**
 * A layer's hooks as loadConfig merges them: each marked with the file it came from and whether that is the
 * user's own. Any other place may configure hooks (the repository's file once trusted), never one outside
 * the sandbox: that is the user's own call, made in the user's own file.
 */
export function markHooks(hooks: unknown, file: string, user: boolean): unknown[] {
  if (!Array.isArray(hooks)) return [];
  return hooks.map((h: unknown, i) => {
    if (typeof h !== 'object' || h === null) return h;
    if (!user && (h as { sandbox?: unknown }).sandbox === false) {
      throw new AciaError('CONFIG_INVALID', `"hooks[${i}].sandbox": false is not allowed in ${file}`, {
        hint: 'a hook runs outside the sandbox only when your user config says so (acia config shows where it is)',
      });
    }
    return { ...h, origin: { file, user } };
  });
}
