// Why a test (or setup) command could not run at all, as opposed to running and failing: a missing program
// or interpreter, a dependency the tests cannot import, pytest refusing its arguments or finding no tests,
// a write the sandbox keeps read-only, a registry or host it cannot reach. None of these is the code's
// fault, so no fix attempt can repair them: the team asks the human at once, quoting the line that shows
// it and what to do.

// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*[A-Za-z]/g;

export type EnvironmentProblemKind = 'missing-program' | 'missing-module' | 'test-runner-usage' | 'no-tests' | 'read-only' | 'network' | 'missing-script';

export interface EnvironmentProblem {
  kind: EnvironmentProblemKind;
  /** The output line that shows it. */
  line: string;
  /** What the user can do about it. */
  advice: string;
}

export interface ProblemContext {
  /**
   * True when the project itself declares a module the tests could not import (a dependency in its
   * manifest, a workspace package, its own Python package): then the install is missing or not visible,
   * not the code. A module nobody declares is left to the fix loop (the code may have named it wrongly).
   */
  isDeclared?: (name: string) => boolean;
}

const ADVICE: Record<EnvironmentProblemKind, string> = {
  'missing-program':
    "install it where you run the tests (the project's install step in your checkout), or give the command that works with --test-command / testCommand in .acia/config.json (`acia config` shows what ACIA detected and why)",
  'missing-module':
    "install the project's dependencies in your checkout (npm/pnpm/yarn install, or pip install -e . into its .venv) so the sandbox can show them, or add a `setup` command in .acia/config.json that prepares each worktree; if the task added this dependency, it can install it in its own tree with npm, Yarn 1 or pip (into requirements*.txt) and with the registry's host in allowedHosts (docs/sandbox.md)",
  'test-runner-usage': 'the test command does not suit this project: give the right one with --test-command or testCommand in .acia/config.json (`acia config` shows the detected one)',
  'no-tests': 'the test command found no tests: point --test-command / testCommand at the suite (`acia config` shows the detected command)',
  'read-only':
    'in the sandbox your installed dependencies, your home and tool caches outside the worktree are read-only: run that step once in your checkout (or in a `setup` command), or configure the tool to write inside the project',
  network: 'commands in the sandbox have no network: allow the host in allowedHosts (your user config, or .acia/config.json once trusted), or run that step in your checkout first',
  'missing-script': 'the project has no such script: set testCommand in .acia/config.json or pass --test-command',
};

/**
 * Classifies a failed command's output; null for an ordinary failure, which is the code's business.
 * `exitCode` 0 and null (killed, timed out) are never environment problems.
 */
export function classifyEnvironmentProblem(exitCode: number | null, output: string, context: ProblemContext = {}): EnvironmentProblem | null {
  if (exitCode === 0 || exitCode === null) return null;
  const lines = output.replace(ANSI, '').split('\n').map((l) => l.trim());
  const find = (re: RegExp): string | null => lines.find((l) => re.test(l)) ?? null;
  const problem = (kind: EnvironmentProblemKind, line: string | null): EnvironmentProblem | null => (line === null ? null : { kind, line, advice: ADVICE[kind] });

  if (exitCode === 127) return problem('missing-program', find(/(?:: not found|: command not found|No such file or directory|bad interpreter)/) ?? 'exit 127: a program the command runs was not found');
  if (exitCode === 126) return problem('missing-program', find(/Permission denied|cannot execute|bad interpreter/) ?? 'exit 126: a program the command runs could not be executed');
  const runner = find(/^\/\S*python[\d.]*: No module named (?:pytest|unittest|nose2?)\b/) ?? find(/No module named pytest$/);
  if (runner !== null) return problem('missing-program', runner);
  const script = find(/^npm (?:error|ERR!) Missing script: |^ERR_PNPM_NO_SCRIPT|^error Command "[^"]+" not found|^Usage Error: Couldn't find a script named/);
  if (script !== null) return problem('missing-script', script);
  const network = find(/\b(?:EAI_AGAIN|ENOTFOUND|ENETUNREACH)\b|getaddrinfo|Could not resolve host|Temporary failure in name resolution|Name or service not known|ERR_PNPM_META_FETCH_FAIL|^npm (?:error|ERR!) network|YN0001: .*(?:getaddrinfo|ENOTFOUND|EAI_AGAIN)/);
  if (network !== null) return problem('network', network);
  const readOnly = find(/\bEROFS\b|Read-only file system/);
  if (readOnly !== null) return problem('read-only', readOnly);
  // pytest: exit 4 is a usage error (bad option, missing path), exit 5 collected no test at all.
  if (exitCode === 4) return problem('test-runner-usage', find(/^ERROR: (?:usage:|file or directory not found|not found:|.*unrecognized arguments)/));
  if (exitCode === 5) return problem('no-tests', find(/^(?:=+ )?no tests ran in|collected 0 items/));
  const missing = missingModule(lines);
  if (missing !== null && (context.isDeclared?.(missing.name) ?? false)) return problem('missing-module', missing.line);
  return null;
}

/** The line and package name of a failed import: node's `Cannot find module|package 'x'`, Python's `No module named 'x'`. */
function missingModule(lines: string[]): { name: string; line: string } | null {
  for (const line of lines) {
    const js = /Cannot find (?:module|package) '([^']+)'/.exec(line);
    if (js?.[1] !== undefined && !/^[./]|^node:|^[A-Za-z]:/.test(js[1])) {
      const parts = js[1].split('/');
      return { name: js[1].startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!, line };
    }
    const py = /(?:ModuleNotFoundError|ImportError): No module named '([^']+)'/.exec(line);
    if (py?.[1] !== undefined) return { name: py[1].split('.')[0]!, line };
  }
  return null;
}

/** The line that shows why a command could not run at all, or null (see classifyEnvironmentProblem). */
export function environmentProblem(exitCode: number | null, output: string, context: ProblemContext = {}): string | null {
  return classifyEnvironmentProblem(exitCode, output, context)?.line ?? null;
}
