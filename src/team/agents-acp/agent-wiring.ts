// How an external agent is pointed at ACIA's metering proxy, per model API it speaks: the variables it
// reads its endpoint and key from, and the files it needs in its (private, temporary) HOME. Found by
// reading each agent's source and trying it here (README "Staff the team with other agents"):
// - Claude Code (claude-code-acp): ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY; IS_SANDBOX lets it run as
//   root, which it is only inside bubblewrap. Its nonessential traffic (telemetry, error reports, update
//   checks) is turned off: in the sandbox it could reach nothing but the proxy anyway, without the sandbox
//   it would leave the machine, and setting it up costs each session's CLI about 0.2 s of CPU at start.
//   So is its "fast mode" (a premium-priced output speed): at every start the CLI asks api.anthropic.com
//   whether the account has it, whatever ANTHROPIC_BASE_URL says (a DNS lookup and a TLS set-up, about
//   0.1 s of CPU, and a request that leaves the machine without the sandbox), and the metering proxy drops
//   its beta anyway (proxy-anthropic.ts).
// - Codex (codex-acp): a model provider in $CODEX_HOME/config.toml. Its built-in "openai" provider wants a
//   login (`authenticate`, which writes auth.json) before any session; a provider of our own with
//   `env_key` does not, and names the variable its Bearer key is read from.
// - Gemini CLI (`gemini --acp`): GOOGLE_GEMINI_BASE_URL (its "gateway" auth) and GEMINI_API_KEY; its
//   settings turn off usage statistics, telemetry and update checks, and leave out its two web tools
//   (Google Search grounding runs on Google's side; the sandbox has no network for web_fetch).
import type { AgentApi } from './proxy-common.js';

export interface AgentWiring {
  /** Set in the agent's environment after the scrub (the proxy's URL and the task's token, never the user's key). */
  env: Record<string, string>;
  /** Also set after the scrub: switches for how the agent behaves in ACIA's hands (no telemetry, no update checks). */
  switches: Record<string, string>;
  /** Files written into the agent's HOME before it starts, by path relative to HOME. */
  home: Record<string, string>;
}

export interface WiringOptions {
  /** The proxy's base URL as the agent reaches it (no trailing slash). */
  proxyUrl: string;
  token: string;
  /** The agent's HOME (private and temporary). */
  home: string;
  /** Whether ACIA's sandbox contains the agent (then its own sandboxing would only get in the way). */
  sandboxed: boolean;
}

export function wireAgent(api: AgentApi, o: WiringOptions): AgentWiring {
  switch (api) {
    case 'anthropic':
      return {
        env: { ANTHROPIC_BASE_URL: o.proxyUrl, ANTHROPIC_API_KEY: o.token },
        switches: { CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_TELEMETRY: '1', DISABLE_ERROR_REPORTING: '1', DISABLE_AUTOUPDATER: '1', CLAUDE_CODE_DISABLE_FAST_MODE: '1', ...(o.sandboxed ? { IS_SANDBOX: '1' } : {}) },
        home: {},
      };
    case 'openai':
      return {
        env: { OPENAI_BASE_URL: `${o.proxyUrl}/v1`, OPENAI_API_KEY: o.token, CODEX_HOME: `${o.home}/.codex` },
        switches: {},
        home: { '.codex/config.toml': codexConfig(o) },
      };
    case 'gemini':
      return {
        env: { GOOGLE_GEMINI_BASE_URL: o.proxyUrl, GEMINI_API_KEY: o.token },
        switches: { GEMINI_CLI_NO_RELAUNCH: 'true' },
        home: { '.gemini/settings.json': `${JSON.stringify(GEMINI_SETTINGS, null, 2)}\n` },
      };
  }
}

const GEMINI_SETTINGS = {
  general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
  privacy: { usageStatisticsEnabled: false },
  telemetry: { enabled: false },
  tools: { exclude: ['google_web_search', 'web_fetch'] },
};

function codexConfig(o: WiringOptions): string {
  return [
    '# Written by ACIA for one task: the model through ACIA\'s metering proxy, with this task\'s key.',
    'model_provider = "acia"',
    // Inside ACIA's sandbox, Codex's own (Landlock/seccomp) would only fail or nest; outside, it stays on.
    `sandbox_mode = "${o.sandboxed ? 'danger-full-access' : 'workspace-write'}"`,
    'approval_policy = "never"',
    'web_search = "disabled"',
    'check_for_update_on_startup = false',
    '',
    '[model_providers.acia]',
    'name = "ACIA metering proxy"',
    `base_url = ${JSON.stringify(`${o.proxyUrl}/v1`)}`,
    'env_key = "OPENAI_API_KEY"',
    'wire_api = "responses"',
    '',
  ].join('\n');
}

/**
 * A shell prelude that writes the HOME files before the agent's command runs (in the sandbox, HOME is
 * its private tmpfs, which only a process inside can write). Stops with 70 if it cannot.
 */
export function homeSeedScript(home: Record<string, string>): string {
  return Object.entries(home)
    .map(([rel, content]) => {
      const dir = rel.includes('/') ? rel.slice(0, rel.lastIndexOf('/')) : '';
      return `${dir ? `mkdir -p "$HOME/${dir}" && ` : ''}printf '%s' ${shellQuote(content)} > "$HOME/${rel}" || exit 70`;
    })
    .join('\n');
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}
