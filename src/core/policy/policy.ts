// The policy decision point around plans and tasks (ACM §14.1). Requests and responses are recorded
// by the caller in POLICY_DECISION entries.
import picomatch from 'picomatch';

export type PolicyHook = 'plan.admit' | 'task.pre' | 'task.post';

/**
 * The PDP input every task exposes (ACM 002 §14.1). `metrics` carries the spec's snake_case names and the
 * camelCase ones ACIA's own hooks were written against; `policyInput` is the Task Spec's declared payload.
 */
export interface PolicyRequest {
  action: PolicyHook;
  task?: { id: string; capability: string; input: unknown; idemKey: string; policyInput?: Record<string, unknown> };
  goal: { id: string };
  plan: { id: string; contextRef: string; capabilityMapVersion: string; taskCount: number };
  run: { engine: 'acia'; runId: string };
  metrics: { costUsd: number; elapsedSec: number; cost_usd: number; elapsed_sec: number };
  /** task.post only: files the task changed (empty for a task that changed none). */
  filesChanged?: string[];
}

/** Limits an allow may carry (seed 000 §3, §16), applied to the task it allows. */
export interface PolicyLimits {
  /** The task's commands may run this long at most. */
  timeoutMs?: number;
  /** Retries after the first attempt, at most. */
  retries?: number;
}

export interface PolicyDecision {
  allow: boolean;
  reason?: string;
  limits?: PolicyLimits;
}

export interface PolicyEngine {
  evaluate(request: PolicyRequest): Promise<PolicyDecision>;
}

/** The default policy's plan size limit (plan.admit). */
export const MAX_TASKS_PER_PLAN = 40;

export interface DefaultPolicyOptions {
  // Path prefixes or globs no task may change, e.g. `migrations/`, `*.lock`, `**/migrations/**`.
  protectedPaths: readonly string[];
  maxTasksPerPlan: number;
}

/** Allows what the options do not forbid: oversized plans and changes to protected paths are denied. */
export class DefaultPolicy implements PolicyEngine {
  constructor(private readonly options: DefaultPolicyOptions) {}

  evaluate(request: PolicyRequest): Promise<PolicyDecision> {
    switch (request.action) {
      case 'plan.admit':
        if (request.plan.taskCount > this.options.maxTasksPerPlan) {
          return Promise.resolve({ allow: false, reason: `plan has ${request.plan.taskCount} tasks; the limit is ${this.options.maxTasksPerPlan}` });
        }
        return Promise.resolve({ allow: true });
      case 'task.pre':
        return Promise.resolve({ allow: true });
      case 'task.post': {
        const hit = (request.filesChanged ?? []).find((f) => this.options.protectedPaths.some((p) => matchesProtected(f, p)));
        return Promise.resolve(hit === undefined ? { allow: true } : { allow: false, reason: `changed protected path ${hit}` });
      }
    }
  }
}

// Whether `file` (repo-relative, as git names it) falls under a protected pattern. A pattern without a
// glob character is a path or a directory prefix (`migrations/`, `package-lock.json`); anything else is a
// picomatch glob over the whole path (`**/migrations/**`, `src/*.sql`), and a glob with no `/` also
// matches the file's base name at any depth (`*.lock`). Dot files match like any other, and names are
// compared as git gave them with -z (never quoted, so non-ASCII names cannot slip past).
export function matchesProtected(file: string, pattern: string): boolean {
  const path = file.replace(/^\.\//, '');
  if (!picomatch.scan(pattern).isGlob) {
    const p = pattern.replace(/^\.\//, '');
    return path === p || path.startsWith(p.endsWith('/') ? p : `${p}/`);
  }
  const options = { dot: true, ...(pattern.includes('/') ? {} : { basename: true }) };
  return picomatch(pattern, options)(path);
}
