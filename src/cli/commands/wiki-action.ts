// The work of `acia wiki` and `acia memory`, loaded only when those commands run.
import { forTerminal } from '../../core/text/terminal.js';
import { checkRealDir, readRegularFile } from '../../core/contain/no-follow.js';
import { readdir } from 'node:fs/promises';
import { join, relative, resolve, sep } from 'node:path';
import { AciaError } from '../../core/errors.js';
import { readMemory, wikiDir } from '../../core/wiki/memory.js';
import { renderWiki } from '../../core/wiki/render.js';
import { repoOf } from '../runs-action.js';

export async function wikiCommand(action: string, page: string | undefined, repo: string): Promise<void> {
  const root = await repoOf(repo, true);
  const dir = wikiDir(root);
  switch (action) {
    case 'path':
      process.stdout.write(`${dir}\n`);
      return;
    case 'rebuild': {
      const r = await renderWiki(root);
      process.stdout.write(`wiki rebuilt in ${r.dir}: ${r.written.length} written, ${r.unchanged} unchanged\n`);
      for (const s of r.skipped) process.stderr.write(`acia: skipped run ${s.runId}: ${forTerminal(s.reason)}\n`);
      return;
    }
    case 'list':
      // A `.acia/wiki` that is a link (or has one on the way) is refused, not listed from wherever it points.
      checkRealDir(root, dir);
      for (const p of await listPages(dir)) process.stdout.write(`${p}\n`);
      return;
    case 'show': {
      if (!page) throw new AciaError('USAGE', 'acia wiki show <page>: which page? (see acia wiki list)');
      const name = page.endsWith('.md') ? page : `${page}.md`;
      const full = resolve(dir, name);
      if (!full.startsWith(dir + sep)) throw new AciaError('USAGE', `${page} is outside the wiki`);
      // Not through a link: a clone's wiki page linked to ~/.ssh/id_rsa is refused, not printed.
      const text = readRegularFile(root, full)?.toString('utf8') ?? null;
      if (text === null) throw new AciaError('FILE_NOT_FOUND', `no wiki page ${name} in ${dir}`, { hint: 'run `acia wiki rebuild` or `acia wiki list`' });
      process.stdout.write(forTerminal(text, { newlines: true }));
      return;
    }
    default:
      throw new AciaError('USAGE', `unknown wiki action ${action}: use list, show <page>, rebuild or path`);
  }
}

export async function memoryCommand(repo: string): Promise<void> {
  const pages = await readMemory(await repoOf(repo, true));
  if (pages.length === 0) {
    process.stdout.write('no memory pages yet (`acia init` creates them; so do `acia wiki rebuild` and the first run)\n');
    return;
  }
  for (const p of pages) process.stdout.write(`==> memory/${p.page}.md <==\n${forTerminal(p.content, { newlines: true })}${p.content.endsWith('\n') ? '' : '\n'}\n`);
}

async function listPages(dir: string, sub = dir): Promise<string[]> {
  const out: string[] = [];
  let names;
  try {
    names = await readdir(sub, { withFileTypes: true });
  } catch {
    if (sub === dir) throw new AciaError('FILE_NOT_FOUND', `no wiki in ${dir}`, { hint: 'run `acia wiki rebuild`' });
    return out;
  }
  for (const d of names.sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const full = join(sub, d.name);
    if (d.isDirectory()) out.push(...(await listPages(dir, full)));
    else if (d.name.endsWith('.md')) out.push(relative(dir, full).split(sep).join('/'));
  }
  return out;
}
