// ACP authentication for the key ACIA's agents call their model with. Without ANTHROPIC_API_KEY (and an
// `anthropic:` model), `initialize` advertises one method and a session answers `auth_required`
// (-32000), so an editor can offer its authentication flow instead of a failed turn. The method is the
// agent kind (ACIA handles it): `authenticate` takes the key from `_meta.apiKey` (an editor that can
// ask its user for a secret), or finds it set since (nothing to ask); it lives in this process only.
import { RequestError, type AuthMethod, type AuthenticateRequest } from '@agentclientprotocol/sdk';
import { loadConfig } from '../../core/config/load.js';

export const API_KEY_METHOD = 'anthropic-api-key';

const METHOD: AuthMethod = {
  id: API_KEY_METHOD,
  name: 'Anthropic API key',
  description:
    "ACIA's agents call the Anthropic API with ANTHROPIC_API_KEY. Set it in the agent's environment (Zed: agent_servers.<name>.env), or authenticate with the key in _meta.apiKey. A scripted or openai: model needs none.",
};

/** Whether this model needs a key the environment does not have. */
export function keyMissing(model: string, env: NodeJS.ProcessEnv): boolean {
  return model.startsWith('anthropic:') && !env.ANTHROPIC_API_KEY;
}

/** `initialize`'s methods: the key's, when the model chosen outside any repository lacks it. */
export function authMethods(env: NodeJS.ProcessEnv, flags: Record<string, unknown>): AuthMethod[] {
  let model: string;
  try {
    model = loadConfig({ repo: null, env, flags }).config.model;
  } catch {
    // A broken user config is reported when a session loads it; here only the key itself can tell.
    return env.ANTHROPIC_API_KEY ? [] : [METHOD];
  }
  return keyMissing(model, env) ? [METHOD] : [];
}

/** `authenticate`: sets the key in `env` (this agent's own copy) or confirms it is there. */
export function authenticate(params: AuthenticateRequest, env: NodeJS.ProcessEnv): Record<string, never> {
  if (params.methodId !== API_KEY_METHOD) throw RequestError.invalidParams(undefined, `unknown authentication method ${params.methodId}; ACIA offers ${API_KEY_METHOD}`);
  const key = params._meta?.apiKey;
  if (typeof key === 'string' && key.trim() !== '') env.ANTHROPIC_API_KEY = key.trim();
  if (!env.ANTHROPIC_API_KEY) throw authRequired();
  return {};
}

export function authRequired(detail = 'ANTHROPIC_API_KEY is not set'): RequestError {
  return RequestError.authRequired({ authMethods: [METHOD] }, `${detail}: authenticate with ${API_KEY_METHOD} (the key in _meta.apiKey), or set it in the agent's environment`);
}
