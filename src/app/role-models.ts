// A role's own model (`--model pm=...,dev=...`, or a role file's `model:`): one client per model spec,
// made when the run's roles are loaded, with the same endpoints and key handling as the run's own model.
import type { Config } from '../core/config/schema.js';
import { createLlmClient } from '../core/llm/model-spec.js';
import type { LlmClient } from '../core/llm/types.js';
import type { ModelDeps } from '../team/deps.js';

export interface RoleModelOptions {
  repo: string;
  config: Config;
  env: NodeJS.ProcessEnv;
  /** The demo's fake server instead of the user's endpoint and key. */
  anthropic?: { baseURL: string; apiKey: string };
}

/** ModelDeps.forSpec for a live run: `base` is the run's own model deps; `wrap` meters a client (a fleet's count). */
export function roleModelSource(o: RoleModelOptions, base: Omit<ModelDeps, 'forSpec'>, wrap: (client: LlmClient, id: string) => LlmClient = (c) => c): (spec: string) => Promise<ModelDeps> {
  const clientEnv = o.anthropic ? { ...o.env, ANTHROPIC_API_KEY: o.anthropic.apiKey } : o.env;
  const made = new Map<string, Promise<ModelDeps>>();
  return (spec) => {
    let deps = made.get(spec);
    if (!deps) {
      deps = createLlmClient(spec, clientEnv, {
        cwd: o.repo,
        ...(o.anthropic ? { anthropicBaseUrl: o.anthropic.baseURL } : o.config.anthropicBaseUrl ? { anthropicBaseUrl: o.config.anthropicBaseUrl } : {}),
        ...(o.config.openaiBaseUrl ? { openaiBaseUrl: o.config.openaiBaseUrl } : {}),
      }).then((c) => ({ ...base, client: wrap(c.client, c.model), id: c.model, spec }));
      made.set(spec, deps);
    }
    return deps;
  };
}
