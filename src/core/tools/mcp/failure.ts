// Why an MCP server did not start, in words that name the cause: an HTTP server's refusal or status, the
// line of a crashed server's stderr that says what went wrong (not the tail of its stack trace), and
// what to do about a package runner (`npx -y ...`) that has no network in the sandbox.
import { basename } from 'node:path';
import { errorMessage } from '../../errors.js';
import type { McpServerSpec } from './config.js';

/** An HTTP (streamable or legacy SSE) server that could not be reached or refused the handshake. */
export function httpFailure(e: unknown, url: string): string {
  const status = statusOf(e);
  const where = safeUrl(url);
  if (status === 401 || status === 403) {
    return `HTTP ${status} from ${where}: the server wants credentials; give them in the server's "headers" (e.g. "Authorization": "Bearer \${TOKEN}"); ACIA does not do OAuth`;
  }
  if (status === 404) return `HTTP 404 from ${where}: no MCP endpoint at this path (streamable HTTP servers usually serve /mcp, legacy SSE servers /sse with "type": "sse")`;
  if (status === 405) return `HTTP 405 from ${where}: the endpoint refuses this transport's requests (a legacy SSE server needs "type": "sse")`;
  const text = fullMessage(e);
  if (status !== undefined) return `HTTP ${status} from ${where}: ${bodyOf(text) || 'no message'}`;
  const net = NETWORK_CAUSES.find(([re]) => re.test(text));
  if (net) return `${net[1](where)} (${text.match(net[0])?.[0] ?? ''})`;
  return `${where}: ${text.replace(/^(?:SSE error|Streamable HTTP error): /, '')}`;
}

const NETWORK_CAUSES: [RegExp, (where: string) => string][] = [
  [/ECONNREFUSED/, (w) => `nothing listens at ${w}: connection refused`],
  [/ENOTFOUND|EAI_AGAIN/, (w) => `the host of ${w} is not found`],
  [/ETIMEDOUT|UND_ERR_CONNECT_TIMEOUT/, (w) => `${w} did not answer: connection timed out`],
  [/ECONNRESET|UND_ERR_SOCKET|other side closed/, (w) => `${w} closed the connection`],
  [/bad port/, (w) => `${w} uses a port that fetch refuses to connect to`],
  [/certificate|CERT_|SSL|TLS/i, (w) => `${w}: the TLS handshake failed`],
];

/** The SDK's transport errors carry the HTTP status as `code` (StreamableHTTPError, SseError). */
function statusOf(e: unknown): number | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'number' && code >= 100 && code < 600 ? code : undefined;
}

/** The message with its causes (`fetch failed` says nothing; its cause says ECONNREFUSED). */
function fullMessage(e: unknown): string {
  const parts: string[] = [];
  let cur: unknown = e;
  for (let i = 0; i < 4 && cur !== undefined && cur !== null; i++) {
    const m = errorMessage(cur);
    const code = (cur as { code?: unknown }).code;
    parts.push(typeof code === 'string' && !m.includes(code) ? `${m} ${code}` : m);
    cur = (cur as { cause?: unknown }).cause;
  }
  return parts.join(': ');
}

function bodyOf(text: string): string {
  return text.replace(/^.*?Error POSTing to endpoint(?: \(HTTP \d+\))?: /, '').replace(/^SSE error: /, '').slice(0, 200);
}

/** The URL without credentials or query (a token in the query string stays out of logs and the ledger). */
function safeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return url;
  }
}

const NOISE = [/^\s+at\s/, /^Node\.js v\d/, /^\s*\^+\s*$/, /^\s*$/, /^\s*\[?\s*\{?\s*(code|requireStack|errno|syscall)\b/, /^\s*[{}[\]],?\s*$/];
const ERROR_LINE = /^(?:Uncaught\s+)?[\w$.]*(?:Error|Exception)\b(?:\s*\[[\w-]+\])?:\s*\S/;

/**
 * What a crashed server's stderr says went wrong: the last `...Error: message` line (Node, Python and
 * most runtimes print one) with the line after it when it adds to it, else the last lines that are not
 * stack frames or runtime banners.
 */
export function stderrSummary(stderr: string): string {
  const lines = stderr.split('\n').map((l) => l.trimEnd());
  for (let i = lines.length - 1; i >= 0; i--) {
    if (ERROR_LINE.test(lines[i]!.trim())) return clip(lines[i]!.trim());
  }
  const kept = lines.filter((l) => !NOISE.some((re) => re.test(l)));
  return clip(kept.slice(-3).join(' | '));
}

function clip(text: string): string {
  return text.length <= 300 ? text : `${text.slice(0, 297)}...`;
}

/** Package runners fetch the server when it starts: slow the first time, and impossible without a network. */
const RUNNERS = new Set(['npx', 'pnpx', 'bunx', 'uvx', 'pipx', 'dlx']);

/** A hint for a server that is slow to start or timed out, or '' when there is nothing to add. */
export function startupHint(spec: McpServerSpec, sandboxed: boolean): string {
  if (spec.transport !== 'stdio' || spec.command === undefined) return '';
  const runner = basename(spec.command);
  const viaRunner = RUNNERS.has(runner) || ((runner === 'pnpm' || runner === 'yarn') && spec.args[0] === 'dlx');
  if (!viaRunner) return '';
  if (sandboxed && spec.allowedHosts.length === 0) {
    return `${runner} downloads the server when it starts, and the sandbox has no network: install the package and give the path of its entry file as the command, or list the registry in the server's "allowedHosts" (e.g. "registry.npmjs.org")`;
  }
  return `${runner} downloads the server when it starts; the first start can take long: raise "startupTimeoutS" (or "mcpStartupTimeoutS"), or install the package and give its path`;
}
