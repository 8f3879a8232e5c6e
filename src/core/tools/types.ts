// The tool contract: what an agent can do to a worktree, as small definitions with zod inputs.
import type * as NodeFs from 'node:fs';
import type { ZodType } from 'zod';
import type { ToolDescriptor } from '../acm/contracts.js';

/** The structured facts of a result: each tool's own shape (its `output` schema). */
export type ToolData = Record<string, unknown>;

/** What a tool returns: `forModel` is truncated (head and tail kept), `forDisplay` is for humans. */
export interface ToolResult<D extends ToolData = ToolData> {
  ok: boolean;
  forModel: string;
  forDisplay: string;
  /**
   * Structured facts a caller may record (run_tests: exitCode, passed, failed...), in the tool's `output`
   * shape; a call that never reached the tool (invalid input, an exception) carries `{ errorCode }` instead.
   */
  data?: D;
}

/** How tools run commands: the sandbox implements it; tests may pass a fake. */
export interface CommandRunner {
  run(command: string, options: RunCommandOptions): Promise<CommandOutcome>;
  /**
   * Lays the user's installed dependencies out in a fresh task worktree the way this runner shows them to
   * commands (core/sandbox/deps.ts). Absent: the worktree gets the host layout.
   */
  layDependencies?(worktree: string): void;
  /** Where a worktree path is as commands see it (the sandbox shows a task worktree at its checkout's path). */
  pathInside?(hostPath: string): string;
}
export interface RunCommandOptions {
  cwd: string;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Max bytes of combined output kept; the rest is dropped and `truncated` set. */
  outputCapBytes?: number;
  /** Written to the command's stdin, which is then closed (a hook's JSON document); /dev/null without it. */
  input?: string;
  /** Variables set for this command on top of the sandbox's scrubbed environment (ACIA's own, no secrets). */
  env?: Record<string, string>;
  /** Keep stdout and stderr apart as well (`stdout`/`stderr` in the outcome). */
  separate?: boolean;
  /** Files outside the worktree the command may read (a user's hook script in a masked home). */
  readOnlyPaths?: readonly string[];
}
export interface CommandOutcome {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  output: string;
  truncated: boolean;
  durationMs: number;
  /** With `separate`: each stream on its own, capped like `output`. */
  stdout?: string;
  stderr?: string;
}

/** Injected into every tool call. `root` is the worktree; nothing outside it is reachable. */
export interface ToolContext {
  root: string;
  /** A node:fs-compatible module (node:fs by default; memfs in unit tests). */
  fs: typeof NodeFs;
  runner: CommandRunner;
  /**
   * Where commands see `root` (the sandbox shows a task worktree at its checkout's own path): an absolute
   * path under it, as test output prints them, names the same file of the worktree.
   */
  viewRoot?: string;
  testCommand?: string;
  /** The configured setup command (run_setup runs it; agents are never given that tool). */
  setupCommand?: string;
  commandTimeoutS: number;
  signal?: AbortSignal;
  /** Epoch ms when the run's time budget ends; calls that wait on others (MCP) stop there. */
  deadlineMs?: number;
}

export interface Tool<I = unknown, D extends ToolData = ToolData> {
  readonly name: string;
  readonly description: string;
  readonly input: ZodType<I>;
  /** The shape of `data` in the tool's own results: read them through it (`tool.output.safeParse`). */
  readonly output: ZodType<D>;
  /** Read-only tools may run concurrently within one model turn. */
  readonly readOnly: boolean;
  readonly descriptor: ToolDescriptor;
  run(input: I, ctx: ToolContext): Promise<ToolResult<D>>;
}
