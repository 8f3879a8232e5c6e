// What the metering proxy lets an external agent send upstream with the user's key: model calls from
// the holder of the task's token, on the normalised path, with no server-side features unless allowed.
import { describe, expect, it } from 'vitest';
import { authorised, isRefusal, vetRequest, type ProxyPolicy } from '../../src/team/agents-acp/proxy-anthropic.js';

const TOKEN = 'acia-task-0123456789abcdef0123456789abcdef';
const policy: ProxyPolicy = { token: TOKEN, allowBetas: [], allowServerTools: false };
const call = { model: 'claude-sonnet-5-5', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] };
const body = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v));
const vet = (method: string, url: string, b: unknown = call, headers: Record<string, string> = {}, p: ProxyPolicy = policy) =>
  vetRequest(method, url, { 'x-api-key': TOKEN, 'anthropic-version': '2023-06-01', ...headers }, body(b), p);
const status = (v: ReturnType<typeof vetRequest>) => (isRefusal(v) ? v.status : 200);

describe('the metering proxy’s request check', () => {
  it('takes the token from x-api-key or a Bearer header, and nothing else', () => {
    expect(authorised({ 'x-api-key': TOKEN }, TOKEN)).toBe(true);
    expect(authorised({ authorization: `Bearer ${TOKEN}` }, TOKEN)).toBe(true);
    expect(authorised({}, TOKEN)).toBe(false);
    expect(authorised({ 'x-api-key': 'sk-ant-guess' }, TOKEN)).toBe(false);
    expect(authorised({ 'x-api-key': `${TOKEN}x` }, TOKEN)).toBe(false);
    expect(status(vetRequest('POST', '/v1/messages', {}, body(call), policy))).toBe(401);
  });

  it('serves POST /v1/messages and count_tokens after normalising the path; refuses every other path and method', () => {
    expect(status(vet('POST', '/v1/messages'))).toBe(200);
    expect(status(vet('POST', '/v1/messages/count_tokens'))).toBe(200);
    for (const dressed of ['/v1/./messages', '/v1/%2e/messages', '/v1/x/../messages', '/v1/messages?beta=true']) {
      const v = vet('POST', dressed);
      expect(isRefusal(v), dressed).toBe(false);
      if (!isRefusal(v)) expect(v.path, dressed).toMatch(/^v1\/messages(\?beta=true)?$/);
    }
    for (const [method, url] of [['GET', '/v1/models'], ['POST', '/v1/files'], ['POST', '/v1/messages/batches'], ['POST', '/v1/messages/../files'], ['GET', '/v1/messages'], ['DELETE', '/v1/messages'], ['POST', '//evil.example/v1/messages'], ['POST', 'http://evil.example/v1/messages'], ['POST', '/v1%2fmessages'], ['POST', '/v1/messages/']] as const) {
      expect(status(vet(method, url)), `${method} ${url}`).toBe(404);
    }
  });

  it('drops every query parameter but beta=true', () => {
    const v = vet('POST', '/v1/messages?beta=true&extra=1');
    expect(!isRefusal(v) && v.path).toBe('v1/messages?beta=true');
    const w = vet('POST', '/v1/messages?anything=else');
    expect(!isRefusal(w) && w.path).toBe('v1/messages');
  });

  it('refuses server-side tools, mcp_servers and container unless the config allows them; client tools pass', () => {
    const withTools = (tools: unknown[]) => ({ ...call, tools });
    expect(status(vet('POST', '/v1/messages', withTools([{ name: 'Bash', input_schema: { type: 'object' } }, { type: 'custom', name: 'x', input_schema: {} }, { type: 'bash_20250124', name: 'bash' }, { type: 'text_editor_20250728', name: 'str_replace_based_edit_tool' }])))).toBe(200);
    for (const t of [{ type: 'web_search_20250305', name: 'web_search' }, { type: 'web_fetch_20250910', name: 'web_fetch' }, { type: 'code_execution_20250825', name: 'code_execution' }, { type: 'mcp_toolset', mcp_server_name: 'x' }, { type: 7, name: 'odd' }]) {
      const v = vet('POST', '/v1/messages', withTools([t]));
      expect(status(v), JSON.stringify(t)).toBe(400);
      expect(isRefusal(v) && v.message).toMatch(/meteringProxy\.allowServerTools/);
    }
    for (const field of ['mcp_servers', 'container']) expect(status(vet('POST', '/v1/messages', { ...call, [field]: null })), field).toBe(400);
    const allowed = { ...policy, allowServerTools: true };
    expect(status(vet('POST', '/v1/messages', { ...withTools([{ type: 'web_search_20250305', name: 'web_search' }]), mcp_servers: [] }, {}, allowed))).toBe(200);
  });

  it('judges the body as JSON.parse reads it and forwards that reading: a duplicate key cannot hide a field', () => {
    const dup = `{"model":"m","max_tokens":1,"messages":[],"mcp_servers":[{"url":"https://evil.example"}],"mcp_servers":null}`;
    expect(status(vet('POST', '/v1/messages', dup))).toBe(400);
    expect(status(vet('POST', '/v1/messages', 'not json'))).toBe(400);
    expect(status(vet('POST', '/v1/messages', [call]))).toBe(400);
  });

  it('keeps the safe betas and the ones the config adds, drops the rest, and forwards only known headers', () => {
    const v = vet('POST', '/v1/messages', call, { 'anthropic-beta': 'interleaved-thinking-2025-05-14, files-api-2025-04-14,mcp-client-2025-04-04,context-1m-2025-08-07', 'x-forwarded-for': '1.2.3.4', accept: 'application/json' });
    expect(!isRefusal(v) && v.headers).toEqual({ 'anthropic-version': '2023-06-01', 'anthropic-beta': 'interleaved-thinking-2025-05-14', accept: 'application/json' });
    const w = vet('POST', '/v1/messages', call, { 'anthropic-beta': 'files-api-2025-04-14' }, { ...policy, allowBetas: ['files-api-2025-04-14'] });
    expect(!isRefusal(w) && w.headers['anthropic-beta']).toBe('files-api-2025-04-14');
  });
});
