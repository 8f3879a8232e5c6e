// The page's way to the server: every request and event stream carries the token from the page's own
// URL (the only place it is), as a header for fetch and a query parameter for EventSource, which
// cannot send headers.
const token = new URLSearchParams(location.search).get('token') ?? '';

export function withToken(path: string): string {
  return `${path}${path.includes('?') ? '&' : '?'}token=${encodeURIComponent(token)}`;
}

export async function getJson<T>(path: string): Promise<T> {
  const r = await fetch(path, { headers: { 'X-Acia-Token': token }, cache: 'no-store' });
  if (!r.ok) throw new Error((await r.text()).trim() || `HTTP ${r.status}`);
  return (await r.json()) as T;
}

/** The body as text, or null for a 404 (an output or diff that is not there). */
export async function getText(path: string): Promise<string | null> {
  const r = await fetch(path, { headers: { 'X-Acia-Token': token }, cache: 'no-store' });
  if (r.status === 404) return null;
  if (!r.ok) throw new Error((await r.text()).trim() || `HTTP ${r.status}`);
  return r.text();
}

export async function postJson<T>(path: string, body: unknown): Promise<{ status: number; value: T }> {
  const r = await fetch(path, { method: 'POST', headers: { 'X-Acia-Token': token, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  return { status: r.status, value: (await r.json()) as T };
}

export function stream(path: string): EventSource {
  return new EventSource(withToken(path));
}

export const runPath = (runId: string, rest: string): string => `/api/runs/${encodeURIComponent(runId)}/${rest}`;
