// Opens the ui in the user's browser where one can be opened, and says nothing where none can (a
// server, an ssh session, CI): the printed URL is enough. The browser is handed a private file that
// redirects to the URL, not the URL itself: a command line is readable by every local user (ps), and
// the token must not be.
import { accessSync, constants, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { spawnHostProcess } from '../core/contain/host-process.js';

/** The opener for this platform, or null when no browser can be shown here. */
export function browserOpener(env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform): string | null {
  if (platform === 'darwin') return onPath('open', env);
  if (platform === 'win32') return null;
  if (!env.DISPLAY && !env.WAYLAND_DISPLAY) return null;
  return onPath('xdg-open', env);
}

function onPath(name: string, env: NodeJS.ProcessEnv): string | null {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir === '') continue;
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {
      // not here
    }
  }
  return null;
}

/**
 * Best effort: a browser that cannot be started changes nothing, the URL is printed already. `writable`:
 * the repository shown, whose files the opener must not be taken from (core/contain's host process).
 */
export function openBrowser(url: string, writable: readonly string[], env: NodeJS.ProcessEnv = process.env): boolean {
  const opener = browserOpener(env);
  if (opener === null) return false;
  const dir = mkdtempSync(join(tmpdir(), 'acia-ui-open-'));
  const file = join(dir, 'open.html');
  // The URL is ours: 127.0.0.1, a port and a base64url token, so it needs no escaping in the attribute.
  writeFileSync(file, `<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=${url}"><title>acia ui</title><a href="${url}">acia ui</a>\n`, { mode: 0o600 });
  try {
    const child = spawnHostProcess({ command: opener, args: [file], env, writable, what: 'the browser opener' }, 'ignore');
    child.on('error', () => undefined);
    child.unref();
    return true;
  } catch {
    return false;
  }
}
