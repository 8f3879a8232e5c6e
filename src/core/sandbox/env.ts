// The environment a sandboxed command sees: built from an allow-list, then scrubbed of anything secret-looking.

/** Exact names passed through from the parent when set. */
export const ENV_ALLOW = [
  'PATH',
  'LANG',
  'LANGUAGE',
  'TERM',
  'TZ',
  'CI',
  'NODE_ENV',
  'COLORTERM',
  'NO_COLOR',
  'FORCE_COLOR',
  'GOFLAGS',
  'GOPATH',
  'GOROOT',
  'CARGO_HOME',
  'RUSTUP_HOME',
  'JAVA_HOME',
  'PYTHONPATH',
  'VIRTUAL_ENV',
] as const;

/** Name prefixes passed through (locale). */
const ALLOW_PREFIXES = ['LC_'];

/** Never passed, even when allow-listed by name or prefix. */
const DENY_PATTERNS: readonly RegExp[] = [
  /KEY/i,
  /TOKEN/i,
  /SECRET/i,
  /PASSWORD|PASSWD|PASSPHRASE/i,
  /CREDENTIAL/i,
  /^AWS_/i,
  /^AZURE_/i,
  /^GOOGLE_|^GCLOUD_|^GCP_/i,
  /^ANTHROPIC_/i,
  /^OPENAI_/i,
  /^GITHUB_|^GH_|^GITLAB_/i,
  /^NPM_CONFIG_|^NODE_AUTH/i,
  /^SSH_/i,
  /^GIT_/i,
  /^DOCKER_/i,
  /^KUBE/i,
  /^ACIA_/i,
];

export function isSecretName(name: string): boolean {
  return DENY_PATTERNS.some((re) => re.test(name));
}

export interface SandboxEnvOptions {
  /** HOME inside the sandbox (private). */
  home: string;
  /** Extra variables the caller sets on purpose (still scrubbed). */
  extra?: Record<string, string>;
}

/** Builds the sandbox environment from `parent` (process.env by default) through the allow-list and scrub. */
export function buildSandboxEnv(options: SandboxEnvOptions, parent: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(parent)) {
    if (value === undefined) continue;
    const allowed = (ENV_ALLOW as readonly string[]).includes(name) || ALLOW_PREFIXES.some((p) => name.startsWith(p));
    if (allowed && !isSecretName(name)) env[name] = value;
  }
  env.PATH ??= '/usr/local/bin:/usr/bin:/bin';
  env.HOME = options.home;
  env.TMPDIR = '/tmp';
  env.USER = 'acia';
  for (const [name, value] of Object.entries(options.extra ?? {})) {
    if (!isSecretName(name)) env[name] = value;
  }
  return env;
}
