// ACIA's tools as Claude Code names them, for hooks configured under a Claude Code event: `run_command`
// is `Bash` with `{command}`, the file tools are `Read`/`Write`/`Edit` with an absolute `file_path`, so a
// script that reads `.tool_input.command` or `.tool_input.file_path` runs unchanged.
import { isAbsolute, join } from 'node:path';

interface Mapping {
  name: string;
  input: (input: Record<string, unknown>, cwd: string) => Record<string, unknown>;
  response: (r: { ok: boolean; output: string }, input: Record<string, unknown>, cwd: string) => Record<string, unknown>;
}

const absolute = (p: unknown, cwd: string): string | undefined => (typeof p === 'string' ? (isAbsolute(p) ? p : join(cwd, p)) : undefined);
const defined = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
const fileResponse = (r: { ok: boolean; output: string }, input: Record<string, unknown>, cwd: string) => defined({ filePath: absolute(input.path, cwd), success: r.ok });

const TOOLS: Record<string, Mapping> = {
  run_command: {
    name: 'Bash',
    input: (i) => defined({ command: i.command, timeout: typeof i.timeout_s === 'number' ? i.timeout_s * 1000 : undefined }),
    // ACIA keeps a command's streams together: all of it is stdout here.
    response: (r) => ({ stdout: r.output, stderr: '', interrupted: false, isImage: false }),
  },
  read_file: {
    name: 'Read',
    input: (i, cwd) => defined({ file_path: absolute(i.path, cwd), offset: i.offset, limit: i.limit }),
    response: (r, i, cwd) => ({ type: 'text', file: { filePath: absolute(i.path, cwd), content: r.output } }),
  },
  write_file: { name: 'Write', input: (i, cwd) => defined({ file_path: absolute(i.path, cwd), content: i.content }), response: fileResponse },
  edit_file: { name: 'Edit', input: (i, cwd) => defined({ file_path: absolute(i.path, cwd), old_string: i.old, new_string: i.new, replace_all: false }), response: fileResponse },
  list_dir: { name: 'LS', input: (i, cwd) => ({ path: absolute(i.path ?? '.', cwd) }), response: (r) => ({ success: r.ok, output: r.output }) },
  search: { name: 'Grep', input: (i, cwd) => defined({ pattern: i.pattern, path: absolute(i.path, cwd) }), response: (r) => ({ success: r.ok, output: r.output }) },
};

/** Claude Code's name for an ACIA tool; other tools (run_tests, git_status, MCP tools) keep theirs. */
export function claudeToolName(name: string): string {
  return TOOLS[name]?.name ?? name;
}

export function claudeToolInput(name: string, input: unknown, cwd: string): unknown {
  const m = TOOLS[name];
  return m && isRecord(input) ? m.input(input, cwd) : input;
}

export function claudeToolResponse(name: string, input: unknown, result: { ok: boolean; output: string }, cwd: string): unknown {
  const m = TOOLS[name];
  return m ? m.response(result, isRecord(input) ? input : {}, cwd) : { success: result.ok, output: result.output };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
