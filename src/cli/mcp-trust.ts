// The one place that decides whether the repository's .mcp.json may run: runs, `acia mcp list`,
// `acia config` and `acia mcp` all ask here. Until the trust step (`acia trust`, core/config/trust.ts)
// is wired in, nothing from the repository is trusted. With it:
//   (file, content) => trustStateOf(file, content, process.env) === 'trusted'
import type { TrustPredicate } from '../core/tools/mcp/config.js';
import { notTrusted } from '../core/tools/mcp/config.js';

export const repoMcpTrust: TrustPredicate = notTrusted;
