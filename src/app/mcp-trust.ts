// The one place that decides whether the repository's .mcp.json may run: runs, `acia mcp list`,
// `acia config` and `acia mcp` all ask here. A repository's servers run only once the user trusted
// the file's exact bytes with `acia trust` (core/config/trust.ts); a changed file needs trust again.
import type { TrustPredicate } from '../core/tools/mcp/config.js';
import { trustStateOf } from '../core/config/trust.js';

export const repoMcpTrust: TrustPredicate = (file, content) => trustStateOf(file, content, process.env) === 'trusted';
