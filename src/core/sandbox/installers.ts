// Commands that install or add dependencies, anywhere in a shell line. The runners give such a command
// the task's own writable copy of what it writes (npm-materialize.ts for node_modules, venv-copy.ts for a
// virtualenv) before it runs; and a dev task whose install could not reach a registry stops and asks the
// human (team/task-dev.ts) instead of going on without the dependency into a fix loop.

/** A command boundary before a program name: start of line, after `;`, `&`, `|`, `(`, or whitespace. */
const AT = String.raw`(?:^|[;&|(]\s*|\s)`;
/** Options between the program and its subcommand, each with at most one value (`npm --prefix x install`, `pip -q install`). */
const OPTS = String.raw`(?:-\S*\s+(?:[^-\s;&|]\S*\s+)?)*?`;
const END = String.raw`(?=\s|$|[;&|)])`;

/** npm's and Yarn 1's installers: they write node_modules (and the lockfile). */
const NODE_INSTALLER = new RegExp(`${AT}(?:npm\\s+${OPTS}(?:install|i|add|ci|uninstall|un|remove|rm|update|up|dedupe|ddp)|yarn\\s+${OPTS}(?:add|install|remove|upgrade|up))${END}`);

/** pnpm's installer: it writes node_modules and its store. */
const PNPM_INSTALLER = new RegExp(`${AT}pnpm\\s+${OPTS}(?:add|install|i|remove|rm|uninstall|un|update|up)${END}`);

/** pip (as `pip`, `pip3`, `python -m pip`, a venv's `bin/pip`) installing or removing, and uv's pip interface. */
const PIP_INSTALLER = new RegExp(`${AT}(?:\\S*/)?(?:pip3?(?:\\.\\d+)?|python3?(?:\\.\\d+)?\\s+${OPTS}-m\\s+pip|uv\\s+pip)\\s+${OPTS}(?:install|uninstall)${END}`);

/** Any package manager fetching packages: the commands whose failure to reach a registry is the environment's. */
const ANY_INSTALLER = new RegExp(`${NODE_INSTALLER.source}|${PIP_INSTALLER.source}|${AT}(?:pnpm\\s+${OPTS}(?:add|install|i|update|up)|bun\\s+${OPTS}(?:add|install|i)|poetry\\s+${OPTS}(?:add|install)|uv\\s+${OPTS}(?:add|sync))${END}`);

/** A command that runs npm's or Yarn 1's installer (they need node_modules as real copies). */
export function runsNodeInstaller(command: string): boolean {
  return NODE_INSTALLER.test(command);
}

/** A command that runs pnpm's installer (it needs node_modules as real copies and a store it may write). */
export function runsPnpmInstaller(command: string): boolean {
  return PNPM_INSTALLER.test(command);
}

/** A command that runs pip's installer (it writes the virtualenv). */
export function runsPipInstaller(command: string): boolean {
  return PIP_INSTALLER.test(command);
}

/** A command that installs or adds dependencies with any package manager. */
export function runsInstaller(command: string): boolean {
  return ANY_INSTALLER.test(command);
}

/** Added to a failed install's output by a sandbox with no allowed host (bwrap-runner.ts). */
export const NO_NETWORK_NOTE = '[sandbox: no network: allowedHosts is empty, so no package registry could be reached]';

/**
 * The line of an installer's output that shows it could not reach a package registry: no name resolution
 * (no network at all), a connection refused or unreachable, or the sandbox's egress proxy refusing a host
 * that is not in allowedHosts. Null when the failure is something else (a package that does not exist,
 * a version conflict), which is the agent's to handle.
 */
export function registryUnreachable(output: string): string | null {
  const lines = output.split('\n').map((l) => l.trim());
  const re =
    /\b(?:EAI_AGAIN|ENOTFOUND|ENETUNREACH|ECONNREFUSED|E403)\b|getaddrinfo|Could not resolve host|Temporary failure in name resolution|Name or service not known|Failed to establish a new connection|Connection refused|Network is unreachable|Tunnel connection failed|tunneling socket could not be established|ProxyError|is not in allowedHosts|ERR_PNPM_META_FETCH_FAIL|^npm (?:error|ERR!) network|There appears to be trouble with your network connection/;
  return lines.find((l) => re.test(l)) ?? (lines.includes(NO_NETWORK_NOTE) ? NO_NETWORK_NOTE : null);
}
