// The run's model: the client ACIA's own agents call (a script read now, an SDK on first use) and where
// external agents' calls go through the metering proxy, per model API, with the user's key for each.
import { modelIdOf } from '../core/config/schema.js';
import { createLlmClient } from '../core/llm/model-spec.js';
import type { LlmClient } from '../core/llm/types.js';
import type { ModelDeps } from '../team/deps.js';
import type { LocalOptions } from './create-deps.js';

/** Where external agents' model calls go, per API, with the user's key for it (the demo: its fake server alone). */
export function agentEndpoints(o: LocalOptions): ModelDeps['endpoints'] {
  if (o.anthropic) return { anthropic: { baseURL: o.anthropic.baseURL, apiKey: o.anthropic.apiKey, keyVar: 'ANTHROPIC_API_KEY' } };
  return {
    anthropic: { baseURL: o.config.anthropicBaseUrl ?? o.env.ANTHROPIC_BASE_URL ?? 'https://api.anthropic.com', apiKey: o.env.ANTHROPIC_API_KEY, keyVar: 'ANTHROPIC_API_KEY' },
    openai: { baseURL: o.config.openaiBaseUrl ?? o.env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1', apiKey: o.env.OPENAI_API_KEY, keyVar: 'OPENAI_API_KEY' },
    gemini: { baseURL: o.env.GOOGLE_GEMINI_BASE_URL ?? 'https://generativelanguage.googleapis.com', apiKey: o.env.GEMINI_API_KEY ?? o.env.GOOGLE_API_KEY, keyVar: 'GEMINI_API_KEY' },
  };
}

/** The configured model: a script is read now (the model it names is what the run is priced as); an SDK on first use. */
export async function modelClient(o: LocalOptions): Promise<{ client: LlmClient; id: string }> {
  let id = modelIdOf(o.config.model);
  const clientEnv = o.anthropic ? { ...o.env, ANTHROPIC_API_KEY: o.anthropic.apiKey } : o.env;
  // Built on first use: a resume that only records the human's "abort" needs no model or key.
  let made: Promise<LlmClient> | null = null;
  if (o.config.model.startsWith('scripted:') || o.config.model.startsWith('chaos:')) {
    const created = await createLlmClient(o.config.model, clientEnv, { cwd: o.repo });
    made = Promise.resolve(created.client);
    id = created.model;
  }
  const make = (): Promise<LlmClient> =>
    createLlmClient(o.config.model, clientEnv, {
      cwd: o.repo,
      ...(o.anthropic ? { anthropicBaseUrl: o.anthropic.baseURL } : o.config.anthropicBaseUrl ? { anthropicBaseUrl: o.config.anthropicBaseUrl } : {}),
      ...(o.config.openaiBaseUrl ? { openaiBaseUrl: o.config.openaiBaseUrl } : {}),
    }).then((c) => c.client);
  if (made === null && o.prefetchModelClient === true) {
    // Start loading the SDK now, while the run's git work waits on child processes; a failure (no key)
    // still surfaces only at the first model call, as without the prefetch.
    made = make();
    made.catch(() => undefined);
    // The SDKs' first request builds a Headers object, which loads node's fetch (undici: about 20 ms of
    // compiling): it loads at the next turn of the event loop, while the run's start waits on git and the
    // disk, instead of on the way to that request.
    setImmediate(() => void globalThis.Headers);
  }
  const client: LlmClient = {
    provider: o.config.model.split(':')[0] ?? 'unknown',
    complete: async (request, options) => {
      made ??= make();
      return (await made).complete(request, options);
    },
  };
  return { client, id };
}
