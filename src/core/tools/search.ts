// search: regex search over the repository with ripgrep (no shell) when present, else a JS walk; capped.
import { spawnHostProcess } from '../contain/host-process.js';
import * as nodePath from 'node:path';
import { z } from 'zod';
import { AciaError } from '../errors.js';
import { defineTool } from './define-tool.js';
import { lstatListed, onRealFs, resolvePath } from './fs-access.js';
import { parseGitignore } from './gitignore.js';
import type { ToolContext } from './types.js';
import { truncateMiddle } from './truncate.js';

export const MAX_MATCHES = 200;
const MAX_LINE = 300;

export const search = defineTool({
  name: 'search',
  description: `Search file contents with a regular expression (ripgrep syntax). Returns path:line:text, at most ${MAX_MATCHES} matches. Optional path limits the search to a file or directory.`,
  input: z.strictObject({
    pattern: z.string().min(1).max(1000).describe('regular expression'),
    path: z.string().min(1).optional().describe('file or directory relative to the repository root'),
  }),
  output: z.object({ matches: z.number(), capped: z.boolean(), engine: z.enum(['ripgrep', 'js']) }),
  readOnly: true,
  run: async (input, ctx) => {
    const target = resolvePath(ctx, input.path ?? '.');
    if (!target.exists) throw new AciaError('FILE_NOT_FOUND', `${input.path ?? '.'} does not exist`);
    // rg reads a FIFO named on its command line until a writer closes it, which may be never.
    const st = ctx.fs.statSync(target.abs);
    if (!st.isFile() && !st.isDirectory()) throw new AciaError('INPUT_INVALID', `${input.path ?? '.'} is not a regular file or directory (a FIFO, socket or device)`);
    const viaRg = onRealFs(ctx) ? await ripgrep(input.pattern, target.abs, ctx.root, ctx.signal) : null;
    const result = viaRg ?? jsSearch(ctx, input.pattern, target.abs);
    const body = result.matches.length === 0 ? `no matches for /${input.pattern}/` : result.matches.join('\n');
    const capNote = result.capped ? `\n[stopped at ${MAX_MATCHES} matches; narrow the pattern or path]` : '';
    return {
      ok: true,
      forModel: truncateMiddle(body + capNote).text,
      forDisplay: `search /${input.pattern}/: ${result.matches.length}${result.capped ? '+' : ''} matches`,
      data: { matches: result.matches.length, capped: result.capped, engine: viaRg ? 'ripgrep' : 'js' },
    };
  },
});

interface Found {
  matches: string[];
  capped: boolean;
}

/** Null when rg is not installed; an invalid pattern is reported as a tool error. */
function ripgrep(pattern: string, target: string, root: string, signal: AbortSignal | undefined): Promise<Found | null> {
  const args = ['--line-number', '--no-heading', '--color', 'never', '--no-config', '--hidden', '--glob', '!.git', '--max-columns', String(MAX_LINE), '--max-columns-preview', '--max-filesize', '4M', '-e', pattern, '--', target];
  return new Promise((resolve, reject) => {
    // On the host, so through the containment module: started outside the worktree, which it searches by path.
    const child = spawnHostProcess({ command: 'rg', args, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, writable: [root], what: 'ripgrep' }, ['ignore', 'pipe', 'pipe']);
    const stop = () => child.kill('SIGKILL');
    signal?.addEventListener('abort', stop, { once: true });
    child.once('close', () => signal?.removeEventListener('abort', stop));
    // rg names files by the path it was given; the model sees them relative to the worktree, as before.
    const prefix = `${root}${nodePath.sep}`;
    const shown = target === root ? './' : '';
    const matches: string[] = [];
    let buffered = '';
    let stderr = '';
    let capped = false;
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      buffered += chunk;
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const l of lines) {
        if (matches.length >= MAX_MATCHES) {
          capped = true;
          child.kill('SIGKILL');
          break;
        }
        matches.push(l.startsWith(prefix) ? shown + l.slice(prefix.length) : l);
      }
    });
    child.stderr?.setEncoding('utf8').on('data', (c: string) => (stderr += c.slice(0, 2000)));
    child.on('error', (err) => ((err as { code?: string }).code === 'ENOENT' ? resolve(null) : reject(err)));
    child.on('close', (code) => {
      if (signal?.aborted) reject(new AciaError('ABORTED', 'search was cancelled'));
      else if (code === 2 && !capped && matches.length === 0) reject(new AciaError('INPUT_INVALID', `ripgrep: ${stderr.trim()}`));
      else resolve({ matches, capped });
    });
  });
}

function jsSearch(ctx: ToolContext, pattern: string, target: string): Found {
  let re: RegExp;
  try {
    re = new RegExp(pattern);
  } catch (e) {
    throw new AciaError('INPUT_INVALID', `invalid regular expression: ${(e as Error).message}`);
  }
  let ignoreText = '';
  try {
    ignoreText = String(ctx.fs.readFileSync(nodePath.join(ctx.root, '.gitignore'), 'utf8'));
  } catch {
    /* no .gitignore */
  }
  const ignored = parseGitignore(ignoreText);
  const found: Found = { matches: [], capped: false };
  const visit = (abs: string): void => {
    if (found.capped) return;
    const rel = nodePath.relative(ctx.root, abs).split(nodePath.sep).join('/');
    const st = lstatListed(ctx, abs);
    if (st === null || st.isSymbolicLink()) return;
    if (rel !== '' && ignored(rel, st.isDirectory())) return;
    if (st.isDirectory()) {
      for (const name of (ctx.fs.readdirSync(abs)).map(String).sort()) visit(nodePath.join(abs, name));
      return;
    }
    if (st.size > 4 * 1024 * 1024) return;
    const buf = ctx.fs.readFileSync(abs);
    if (buf.subarray(0, 8192).includes(0)) return;
    const lines = buf.toString('utf8').split('\n');
    for (let i = 0; i < lines.length; i++) {
      const line = (lines[i] ?? '').slice(0, 4000);
      if (!re.test(line)) continue;
      if (found.matches.length >= MAX_MATCHES) {
        found.capped = true;
        return;
      }
      found.matches.push(`${rel}:${i + 1}:${line.slice(0, MAX_LINE)}`);
    }
  };
  visit(target);
  return found;
}
