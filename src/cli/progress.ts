// Progress while a run works: a compact live view on a TTY, one plain line per event otherwise, or
// NDJSON events on stdout with --json (human text then goes to stderr).
import chalk from 'chalk';
import type { z } from 'zod';
import type { CliEvent } from '../core/acm/cli-events.js';
import type { LedgerEntry } from '../core/ledger/entry.js';
import type { TeamEvent } from '../team/deps.js';
import { describeEntry } from '../app/describe.js';
import { forTerminal } from '../core/text/terminal.js';
import type { RunState } from '../core/run/state.js';
import { planView } from '../core/run/views.js';

/** One `--json` stdout line, typed against schemas/events.schema.json so the two cannot drift apart. */
export type CliEventLine = z.input<typeof CliEvent>;

export type ProgressMode = 'tty' | 'plain' | 'json' | 'quiet';

export interface Progress {
  onEvent(event: TeamEvent): void;
  /** Clears the live view so a message can be printed; the next event redraws it. */
  suspend(): void;
  /** Clears the live view and stops drawing it (a question is open) until release(). */
  hold(): void;
  release(): void;
  close(): void;
}

export interface ProgressOptions {
  mode: ProgressMode;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  now?: () => number;
  debug?: boolean;
}

const NOTABLE = new Set<LedgerEntry['type']>([
  'PLAN_SELECTED',
  'REPLAN_TRIGGERED',
  'TASK_COMPLETED',
  'TASK_FAILED',
  'TASK_SKIPPED',
  'TASK_ADDED',
  'VERIFICATION',
  'MERGE',
  'ESCALATION_REQUESTED',
  'HUMAN_RESPONSE',
  'BUDGET_EXCEEDED',
  'RUN_COMPLETED',
]);

/** `mm:ss` of a duration: the time column of plain progress and of `acia logs`. */
export function elapsedStamp(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  return `${String(Math.floor(s / 60)).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}`;
}

/** One line of plain progress: the time, the actor, what the entry says. */
export function plainLine(stamp: string, e: LedgerEntry): string {
  return `${stamp} ${forTerminal(e.actor).padEnd(10)} ${describeEntry(e)}`;
}

export function createProgress(o: ProgressOptions): Progress {
  const now = o.now ?? Date.now;
  const start = now();
  const stamp = () => elapsedStamp(now() - start);
  switch (o.mode) {
    case 'quiet':
      return { onEvent: () => undefined, suspend: () => undefined, hold: () => undefined, release: () => undefined, close: () => undefined };
    case 'json':
      return {
        onEvent: (ev) => {
          const line: CliEventLine | null = ev.kind === 'entry' ? { kind: 'entry', entry: ev.entry } : ev.chunk.kind !== 'token' || o.debug ? { kind: 'chunk', chunk: ev.chunk } : null;
          if (line) o.stdout.write(`${JSON.stringify(line)}\n`);
        },
        suspend: () => undefined,
        hold: () => undefined,
        release: () => undefined,
        close: () => undefined,
      };
    case 'plain':
      return {
        onEvent: (ev) => {
          if (ev.kind !== 'entry') return;
          o.stderr.write(`${plainLine(stamp(), ev.entry)}\n`);
        },
        suspend: () => undefined,
        hold: () => undefined,
        release: () => undefined,
        close: () => undefined,
      };
    case 'tty':
      return new LiveView(o.stderr, stamp);
  }
}

/** Redraws a small block in place; notable events are printed above it and stay. */
class LiveView implements Progress {
  /** The run as the team folded it (read only): phase, tasks, tokens and cost come from there. */
  private state: Readonly<RunState> | null = null;
  /** What each running task did last (its latest tool call). */
  private readonly actions = new Map<string, string>();
  private height = 0;
  private timer: NodeJS.Timeout | null = null;
  /** While a question is open nothing is drawn: the prompt and the typed answer stay where they are. */
  private held = false;

  constructor(
    private readonly out: NodeJS.WritableStream,
    private readonly stamp: () => string,
  ) {
    this.timer = setInterval(() => this.draw(), 1000);
    this.timer.unref();
  }

  onEvent(ev: TeamEvent): void {
    if (ev.kind !== 'entry') return;
    const e = ev.entry;
    this.state = ev.state;
    if (e.type === 'TOOL_CALL' && e.data.taskId !== undefined) this.actions.set(e.data.taskId, describeEntry(e));
    if (e.type === 'TASK_STARTED' || e.type === 'TASK_COMPLETED' || e.type === 'TASK_FAILED' || e.type === 'TASK_SKIPPED') this.actions.delete(e.data.taskId);
    if (NOTABLE.has(e.type) && !this.held) {
      this.clear();
      this.out.write(`${chalk.dim(this.stamp())} ${colourFor(e)} ${describeEntry(e)}\n`);
    }
    this.draw();
  }

  suspend(): void {
    this.clear();
  }

  hold(): void {
    this.clear();
    this.held = true;
  }

  release(): void {
    this.held = false;
    this.draw();
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.clear();
  }

  private clear(): void {
    if (this.height > 0) this.out.write(`\x1b[${this.height}F\x1b[0J`);
    this.height = 0;
  }

  private draw(): void {
    if (this.timer === null || this.held) return;
    this.clear();
    const s = this.state;
    const phase = s === null ? 'starting' : s.plan !== null ? 'executing' : s.contextRef !== null ? 'planning' : 'starting';
    const lines = [chalk.bold(`acia ${phase} · ${this.stamp()} · ${s?.tokens ?? 0} tokens · $${(s?.costUsd ?? 0).toFixed(4)}`)];
    for (const t of s ? planView(s).tasks : []) {
      const mark = t.status === 'running' ? chalk.yellow('…') : t.status === 'completed' ? chalk.green('✓') : t.status === 'failed' ? chalk.red('✗') : chalk.dim('-');
      const action = t.status === 'running' ? (this.actions.get(t.id) ?? t.capability) : t.status === 'pending' ? '' : t.status;
      lines.push(`  ${mark} ${forTerminal(t.id).padEnd(12)} ${chalk.dim(forTerminal(action).slice(0, 70))}`);
    }
    this.out.write(`${lines.join('\n')}\n`);
    this.height = lines.length;
  }
}

function colourFor(e: LedgerEntry): string {
  if (e.type === 'TASK_FAILED' || e.type === 'BUDGET_EXCEEDED' || (e.type === 'VERIFICATION' && !e.data.passed)) return chalk.red('✗');
  if (e.type === 'ESCALATION_REQUESTED') return chalk.magenta('?');
  if (e.type === 'RUN_COMPLETED') return e.data.reason === 'succeeded' ? chalk.green('■') : chalk.red('■');
  return chalk.green('•');
}
