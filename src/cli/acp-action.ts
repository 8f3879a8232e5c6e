// Connects the ACP agent to this process's stdio and keeps it up until the client goes away.
import { Readable, Writable } from 'node:stream';
import { ndJsonStream } from '@agentclientprotocol/sdk';
import { resolve } from 'node:path';
import { createAcpAgent } from '../serve/acp/agent.js';
import type { AcpFlags } from './commands/acp.js';
import { readVersion } from '../app/version.js';

export async function serveAcp(flags: AcpFlags): Promise<number> {
  const model = flags.model?.startsWith('scripted:') ? `scripted:${resolve(flags.model.slice('scripted:'.length))}` : flags.model;
  const app = createAcpAgent({
    env: process.env,
    version: readVersion(),
    flags: { ...(model === undefined ? {} : { model }), ...(flags.sandbox === undefined ? {} : { sandbox: flags.sandbox }) },
    log: (line) => process.stderr.write(`acia acp: ${line}\n`),
  });
  const stream = ndJsonStream(Writable.toWeb(process.stdout) as WritableStream<Uint8Array>, Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>);
  const connection = app.connect(stream);
  await connection.closed;
  return 0;
}
