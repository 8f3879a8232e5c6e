// Turns a `--model` spec (anthropic:<id>, openai:<id>, scripted:<file>) into an LlmClient and model id.
import { isAbsolute, resolve } from 'node:path';
import { AciaError } from '../errors.js';
import type { Sleep } from './retry.js';
import { loadScript } from './script.js';
import { ScriptedClient } from './scripted-client.js';
import { ChaosClient, parseChaosSpec } from './chaos-client.js';
import type { LlmClient } from './types.js';

export interface CreateLlmClientOptions {
  /** Config `anthropicBaseUrl` / `openaiBaseUrl`; env ANTHROPIC_BASE_URL / OPENAI_BASE_URL otherwise. */
  anthropicBaseUrl?: string | undefined;
  openaiBaseUrl?: string | undefined;
  /** Relative script paths resolve against it (default: process.cwd()). */
  cwd?: string;
  maxRetries?: number;
  sleep?: Sleep;
  fetch?: typeof fetch;
}

export interface CreatedLlmClient {
  client: LlmClient;
  /** Provider-local model id, as LlmRequest.model wants it. */
  model: string;
  provider: 'anthropic' | 'openai' | 'scripted' | 'chaos';
}

/**
 * Makes the model client a `--model` spec names: `anthropic:<id>`, `openai:<id>` (any OpenAI-compatible
 * endpoint) or `scripted:<file>` (an offline script, docs/scripted-model.md).
 *
 * @throws AciaError CONFIG_INVALID for an unknown spec, LLM_AUTH when the provider's key is missing.
 */
export async function createLlmClient(
  spec: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
  options: CreateLlmClientOptions = {},
): Promise<CreatedLlmClient> {
  const colon = spec.indexOf(':');
  const prefix = colon < 0 ? '' : spec.slice(0, colon);
  const rest = colon < 0 ? '' : spec.slice(colon + 1);
  if (rest === '' && ['anthropic', 'openai', 'scripted', 'chaos'].includes(prefix)) {
    throw new AciaError('CONFIG_INVALID', `model "${spec}": nothing after "${prefix}:"`);
  }
  const common = {
    env,
    ...(options.maxRetries !== undefined ? { maxRetries: options.maxRetries } : {}),
    ...(options.sleep !== undefined ? { sleep: options.sleep } : {}),
    ...(options.fetch !== undefined ? { fetch: options.fetch } : {}),
  };
  switch (prefix) {
    // Loaded on demand: the Anthropic SDK alone is some 300 module files, which a scripted run, a
    // replay or `acia runs` never needs, and which `acia run` loads while git works (see createDeps).
    case 'anthropic': {
      const { AnthropicClient } = await import('./anthropic-client.js');
      return { client: new AnthropicClient({ ...common, baseURL: options.anthropicBaseUrl }), model: rest, provider: 'anthropic' };
    }
    case 'openai': {
      const { OpenAiCompatibleClient } = await import('./openai-client.js');
      return { client: new OpenAiCompatibleClient({ ...common, baseURL: options.openaiBaseUrl }), model: rest, provider: 'openai' };
    }
    case 'scripted': {
      const file = isAbsolute(rest) ? rest : resolve(options.cwd ?? process.cwd(), rest);
      const script = await loadScript(file);
      const client = new ScriptedClient(script, options.sleep !== undefined ? { sleep: options.sleep } : {});
      return { client, model: script.model ?? 'scripted', provider: 'scripted' };
    }
    case 'chaos': {
      const chaos = parseChaosSpec(rest);
      const file = isAbsolute(chaos.script) ? chaos.script : resolve(options.cwd ?? process.cwd(), chaos.script);
      const script = await loadScript(file);
      const sleepOpt = options.sleep !== undefined ? { sleep: options.sleep } : {};
      const client = new ChaosClient(new ScriptedClient(script, sleepOpt), chaos, sleepOpt);
      return { client, model: script.model ?? 'scripted', provider: 'chaos' };
    }
    default:
      throw new AciaError('CONFIG_INVALID', `model "${spec}": expected anthropic:<id>, openai:<id>, scripted:<file> or chaos:<file>[,seed=N,rate=R]`);
  }
}
