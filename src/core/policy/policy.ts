// The policy decision point around plans and tasks (ACM §14.1). Requests and responses are recorded
// by the caller in POLICY_DECISION entries.

export type PolicyHook = 'plan.admit' | 'task.pre' | 'task.post';

export interface PolicyRequest {
  action: PolicyHook;
  task?: { id: string; capability: string; input: unknown; idemKey?: string };
  goal: { id: string };
  plan: { id: string; contextRef: string; capabilityMapVersion: string; taskCount: number };
  run: { engine: 'acia'; runId: string };
  metrics: { costUsd: number; elapsedSec: number };
  /** task.post only: files the task changed. */
  filesChanged?: string[];
}

export interface PolicyDecision {
  allow: boolean;
  reason?: string;
}

export interface PolicyEngine {
  evaluate(request: PolicyRequest): Promise<PolicyDecision>;
}

export interface DefaultPolicyOptions {
  /** Path prefixes or `*`-globs no task may change (e.g. `migrations/`, `*.lock`). */
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

export function matchesProtected(file: string, pattern: string): boolean {
  if (!pattern.includes('*')) return file === pattern || file.startsWith(pattern.endsWith('/') ? pattern : `${pattern}/`);
  const re = new RegExp(`^${pattern.split('*').map(escapeRe).join('[^/]*')}$`);
  return re.test(file) || re.test(file.split('/').pop() ?? '');
}

function escapeRe(s: string): string {
  return s.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
}
