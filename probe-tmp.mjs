import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import http from 'node:http';
const srv = http.createServer((req, res) => { if (req.url.startsWith('/auth')) { res.writeHead(401, {'www-authenticate': 'Bearer'}).end('{"error":"nope"}'); } else if (req.url.startsWith('/err')) { res.writeHead(500).end('boom inside'); } else { res.writeHead(404).end('not here'); } });
await new Promise(r => srv.listen(0, '127.0.0.1', r));
const port = srv.address().port;
for (const T of [StreamableHTTPClientTransport, SSEClientTransport])
for (const url of ['http://127.0.0.1:1/mcp', `http://127.0.0.1:${port}/nope`, `http://127.0.0.1:${port}/auth`, `http://127.0.0.1:${port}/err`, 'http://no-such-host.invalid/mcp']) {
  const c = new Client({name:'a',version:'1'});
  const t = new T(new URL(url));
  const errs = [];
  t.onerror = (e) => errs.push(e);
  try { await c.connect(t, {timeout: 5000}); console.log('ok?'); }
  catch (e) { console.log(T.name, url, '->', e.constructor.name, e.code, e.message, '| cause:', e.cause?.code, e.cause?.message, '| onerror:', errs.map(x => x.constructor.name + ':' + x.message).join(';')); }
}
srv.close();
