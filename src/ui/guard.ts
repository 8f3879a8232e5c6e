// Who may use the ui server. It listens on 127.0.0.1, where every local user (and any web page the
// user's browser opens, through DNS rebinding or a cross-site request) can reach it: each request must
// carry the token printed with the URL, compared in constant time, and name this server in Host (and
// Origin, when the browser sends one). Every answer carries a Content-Security-Policy that allows only
// the server's own script and style: no inline script, no eval, no frames, no links out.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

export function newToken(): string {
  return randomBytes(24).toString('base64url');
}

/** Equal in constant time: both sides are hashed first, so neither length nor content leaks through timing. */
export function tokenMatches(given: string | null | undefined, token: string): boolean {
  if (typeof given !== 'string') return false;
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(token).digest();
  return timingSafeEqual(a, b);
}

/** The token of a request: the `X-Acia-Token` header (fetch) or the `token` query parameter (page loads, EventSource). */
export function tokenOf(req: IncomingMessage, url: URL): string | null {
  const header = req.headers['x-acia-token'];
  if (typeof header === 'string') return header;
  return url.searchParams.get('token');
}

/** The names this server answers to: 127.0.0.1 and localhost on its own port. */
export function allowedHosts(port: number): Set<string> {
  return new Set([`127.0.0.1:${port}`, `localhost:${port}`]);
}

export type Refusal = { status: 400 | 401 | 403; message: string };

/**
 * Why a request is refused, or null. A Host other than this server's is a rebinding attempt; an Origin
 * other than this server's is another site's page; a missing or wrong token is anyone else.
 */
export function refuse(req: IncomingMessage, url: URL, token: string, port: number): Refusal | null {
  const hosts = allowedHosts(port);
  if (!hosts.has(req.headers.host ?? '')) return { status: 403, message: 'unknown Host' };
  const origin = req.headers.origin;
  if (origin !== undefined && !hosts.has(origin.replace(/^http:\/\//, '')) ) return { status: 403, message: 'cross-origin request' };
  // Writes must come from this server's page: a browser always sends Origin on them.
  if (req.method !== 'GET' && req.method !== 'HEAD' && origin === undefined) return { status: 403, message: 'a write without Origin' };
  if (!tokenMatches(tokenOf(req, url), token)) return { status: 401, message: 'missing or wrong token' };
  return null;
}

export const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Headers every answer carries. */
export function secure(res: ServerResponse): void {
  res.setHeader('Content-Security-Policy', CSP);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  // The token is in the page's URL: it must not leave in a Referer.
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
  res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('Cache-Control', 'no-store');
}
