// The work behind `acia ui`: pick the store (a repository or a fleet's database), start the server,
// print its URL (and open it where a browser can be opened), serve until Ctrl-C.
import { AciaError } from '../core/errors.js';
import { newToken } from '../ui/guard.js';
import { localStore } from '../ui/local-store.js';
import { openBrowser } from '../ui/open-browser.js';
import type { RunStore } from '../ui/store.js';
import { startUiServer } from '../ui/ui-server.js';
import { EXIT } from '../app/exit-codes.js';
import { repoOf } from './runs-action.js';
import type { UiFlags } from './commands/ui.js';

export async function uiCommand(flags: UiFlags): Promise<number> {
  const port = flags.port === undefined ? 0 : Number(flags.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new AciaError('USAGE', `--port expects a port number, got "${flags.port}"`);
  let store: RunStore;
  let repo: string | null = null;
  if (flags.db !== undefined) {
    const { fleetStore } = await import('../ui/fleet-store.js');
    store = await fleetStore(typeof flags.db === 'string' ? flags.db : undefined, process.env);
  } else {
    repo = await repoOf(flags.repo);
    store = localStore(repo, process.env);
  }
  const server = await startUiServer({ store, token: newToken(), port }).catch(async (e: unknown) => {
    await store.close();
    if ((e as { code?: string }).code === 'EADDRINUSE') throw new AciaError('USAGE', `port ${port} on 127.0.0.1 is in use`, { hint: 'pick another with --port, or leave --port out for a free one' });
    throw e;
  });
  process.stdout.write(`acia ui: ${store.kind === 'repo' ? 'the runs of' : 'the fleet in'} ${store.label}\n  ${server.url}\n(the token in the URL is the only way in; Ctrl-C stops the server)\n`);
  if (flags.open !== false) openBrowser(server.url, repo === null ? [] : [repo]);
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await server.close();
  return EXIT.OK;
}
