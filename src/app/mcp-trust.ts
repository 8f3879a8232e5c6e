// The one place that decides whether the repository's .mcp.json may run, and with which of the user's
// variables: runs, `acia mcp list`, `acia config`, `acia trust` and `acia mcp` all ask here. A repository's
// servers run only once the user trusted the file's exact bytes with `acia trust` (core/config/trust.ts);
// a changed file needs trust again. Their `${VAR}`s expand only for names in the user's `mcpEnvAllow`.
import type { Config } from '../core/config/schema.js';
import { userConfigPath } from '../core/config/load.js';
import { loadMcpServers, type LoadMcpOptions, type McpServerSet, type TrustPredicate } from '../core/tools/mcp/config.js';
import { trustStateOf } from '../core/config/trust.js';

export const repoMcpTrust: TrustPredicate = (file, content) => trustStateOf(file, content, process.env) === 'trusted';

/** The user's servers, an ACP client's (`client`), and, when trusted, the repository's, as a run starts them. */
export function configuredMcpServers(repo: string | null, config: Config, env: NodeJS.ProcessEnv, isTrusted: TrustPredicate = repoMcpTrust, client?: LoadMcpOptions['client']): McpServerSet {
  return loadMcpServers({
    repo,
    user: { servers: config.mcpServers, file: userConfigPath(env) },
    isTrusted,
    envAllow: config.mcpEnvAllow,
    startupTimeoutS: config.mcpStartupTimeoutS,
    ...(client === undefined ? {} : { client }),
  });
}
