// Which HTTP requests `acia mcp --http` answers at all. The streamable HTTP transport says servers MUST
// validate Origin (a web page the user visits can make the browser post to 127.0.0.1, and DNS rebinding
// can make that page's own name resolve there), so: the Host must be this server's loopback address and
// port, and an Origin, when a browser sends one, must be that same loopback address. Command-line
// clients send no Origin and are let through to the bearer-token check.
import type { IncomingHttpHeaders } from 'node:http';

const LOOPBACK_NAMES = ['127.0.0.1', 'localhost'];

/** Why the request is refused (for a 403 body), or null when it may go on to authentication. */
export function refusedOrigin(headers: IncomingHttpHeaders, port: number): string | null {
  const host = headers.host;
  if (host === undefined || !LOOPBACK_NAMES.some((n) => host.toLowerCase() === `${n}:${port}`)) {
    return `host ${JSON.stringify(host ?? '')} is not this server (127.0.0.1:${port}); acia mcp answers local clients only`;
  }
  const origin = headers.origin;
  if (origin === undefined) return null;
  let url: URL | null = null;
  try {
    url = new URL(origin);
  } catch {
    url = null;
  }
  const ok = url !== null && url.protocol === 'http:' && LOOPBACK_NAMES.includes(url.hostname.toLowerCase()) && url.port === String(port);
  return ok ? null : `origin ${JSON.stringify(origin)} is not allowed; acia mcp accepts requests from local clients (no Origin) or from http://127.0.0.1:${port} itself`;
}
