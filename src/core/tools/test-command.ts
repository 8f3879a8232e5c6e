// Which command runs a project's tests, and why: the project's package manager (from `packageManager`,
// then its lockfile) running the test script its own way, Bun's runner where there is no script, every
// workspace's tests where only the packages have scripts, the project's virtualenv interpreter for
// pytest, go and cargo. The rules read a view of the files (a checkout, or git objects before one exists)
// plus what the checkout has installed (environment facts), so `acia config` can say what it found.

/** A view of the project's files. */
export interface ProjectFiles {
  has: (path: string) => boolean;
  read: (path: string) => string | null;
}

/** What the user's checkout has installed that the files do not say. */
export interface EnvironmentFacts {
  /** The Python virtualenv the tests should run in, as commands see it (relative to the root when inside). */
  venv?: { path: string; why: string } | null;
}

export interface DetectedTestCommand {
  command: string;
  /** The file (or setting) the command was chosen from. */
  source: string;
  /** How the runner was chosen: package manager and why, interpreter and why. */
  why?: string;
}

export type PackageManager = 'npm' | 'pnpm' | 'yarn' | 'yarn-berry' | 'bun';

/** The files detection reads (besides checking that others exist). */
export const DETECTION_READS = ['package.json', 'pyproject.toml', 'yarn.lock'] as const;

/** What was looked for, for the message when nothing was found. */
export const LOOKED_FOR =
  'a package.json test script (or workspaces with test scripts, or Bun), pytest markers (pytest.ini, pyproject.toml, setup.cfg, tox.ini, conftest.py), go.mod, Cargo.toml';

export function testCommandFor(files: ProjectFiles, facts: EnvironmentFacts = {}): DetectedTestCommand | null {
  const { has } = files;
  if (has('package.json')) {
    const js = nodeTestCommand(files);
    if (js !== null) return js;
  }
  const py = ['pytest.ini', 'pyproject.toml', 'setup.cfg', 'tox.ini', 'conftest.py', 'tests/conftest.py'].find(has);
  if (py !== undefined) {
    const venv = facts.venv ?? null;
    if (venv === null) return { command: 'python3 -m pytest', source: py, why: 'no virtualenv found (looked for .venv, venv, $VIRTUAL_ENV): the python3 on PATH' };
    return { command: `${shellWord(`${venv.path}/bin/python`)} -m pytest`, source: py, why: `the virtualenv's interpreter: ${venv.why}` };
  }
  if (has('go.mod')) return { command: 'go test ./...', source: 'go.mod' };
  if (has('Cargo.toml')) return { command: 'cargo test', source: 'Cargo.toml' };
  return null;
}

interface PackageJson {
  scripts?: Record<string, unknown>;
  packageManager?: unknown;
  workspaces?: unknown;
}

function nodeTestCommand(files: ProjectFiles): DetectedTestCommand | null {
  let pkg: PackageJson;
  try {
    pkg = JSON.parse(files.read('package.json') ?? '') as PackageJson;
  } catch {
    return null; // unreadable package.json: try the others
  }
  if (typeof pkg !== 'object' || pkg === null) return null;
  const pm = packageManagerOf(pkg, files);
  const test = pkg.scripts?.test;
  const why = `${pm.name} (${pm.why})`;
  if (typeof test === 'string' && !test.includes('no test specified')) {
    const command = { npm: 'npm test --', pnpm: 'pnpm test', yarn: 'yarn test', 'yarn-berry': 'yarn test', bun: 'bun run test' }[pm.name];
    return { command, source: 'package.json scripts.test', why };
  }
  if (pm.name === 'bun' || files.has('bunfig.toml')) return { command: 'bun test', source: files.has('bunfig.toml') ? 'bunfig.toml' : pm.why, why: `${why}; no test script, so Bun's own runner` };
  const workspaces = Array.isArray(pkg.workspaces) || (typeof pkg.workspaces === 'object' && pkg.workspaces !== null) || files.has('pnpm-workspace.yaml');
  if (workspaces) {
    const command = {
      npm: 'npm test --workspaces --if-present --',
      pnpm: 'pnpm -r test',
      yarn: 'yarn workspaces run test',
      'yarn-berry': 'yarn workspaces foreach -A run test',
      bun: 'bun test',
    }[pm.name];
    return { command, source: files.has('pnpm-workspace.yaml') ? 'pnpm-workspace.yaml' : 'package.json workspaces', why: `${why}; no root test script, so every workspace's` };
  }
  return null;
}

/** The package manager the project asks for: `packageManager` first, then the lockfile it left. */
export function packageManagerOf(pkg: PackageJson, files: ProjectFiles): { name: PackageManager; why: string } {
  if (typeof pkg.packageManager === 'string') {
    const m = /^(npm|pnpm|yarn|bun)@(\d+)/.exec(pkg.packageManager);
    if (m) {
      const name = m[1] === 'yarn' && Number(m[2]) >= 2 ? 'yarn-berry' : (m[1] as PackageManager);
      return { name, why: `packageManager ${pkg.packageManager}` };
    }
  }
  if (files.has('pnpm-lock.yaml')) return { name: 'pnpm', why: 'pnpm-lock.yaml' };
  if (files.has('bun.lockb') || files.has('bun.lock')) return { name: 'bun', why: files.has('bun.lock') ? 'bun.lock' : 'bun.lockb' };
  if (files.has('yarn.lock')) {
    // Yarn 2+ writes a __metadata block and reads .yarnrc.yml; Yarn 1 does neither.
    const berry = files.has('.yarnrc.yml') || /^__metadata:/m.test(files.read('yarn.lock')?.slice(0, 4096) ?? '');
    return { name: berry ? 'yarn-berry' : 'yarn', why: berry ? 'yarn.lock (Yarn 2+)' : 'yarn.lock (Yarn 1)' };
  }
  if (files.has('package-lock.json') || files.has('npm-shrinkwrap.json')) return { name: 'npm', why: files.has('package-lock.json') ? 'package-lock.json' : 'npm-shrinkwrap.json' };
  return { name: 'npm', why: 'no packageManager field or lockfile' };
}

/** A path as one shell word (quoted only when it needs to be). */
function shellWord(s: string): string {
  return /^[A-Za-z0-9_./@%+=:,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
