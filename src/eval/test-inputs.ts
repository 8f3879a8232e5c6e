// Which files decide how an instance's tests run (test files, runner config, the scripts a test command
// calls, dependency trees the tests load): grading takes them from the base commit plus the test patch,
// never from the model's patch, and reports a patch that touched them. Manifests that also hold other
// things (package.json, pyproject.toml, setup.cfg) count as touched only when a test-deciding part changed.
import { canonicalJson } from '../core/acm/canonical-json.js';

/** Directories whose contents are tests, fixtures or mocks at any depth. */
const TEST_DIR = /(^|\/)(tests?|__tests__|specs?|__mocks__|testing|e2e|cypress)\//i;
/** Dependency trees and interpreter start-up hooks: what every test loads before its own code. */
const LOADED_FIRST = /(^|\/)(node_modules\/|\.yarn\/|\.pnp\.[cm]?js$|\.pnp\.loader\.mjs$|sitecustomize\.py$|usercustomize\.py$|[^/]+\.pth$)/;

const TEST_FILE_NAMES: readonly RegExp[] = [
  /\.(test|spec)\.[^/]+$/i,
  /(^|\/)test_[^/]*\.py$/,
  /_test\.(py|go)$/,
  /_spec\.rb$/,
  /(^|\/)conftest\.py$/,
  /(^|\/)(pytest\.ini|tox\.ini|noxfile\.py|\.coveragerc)$/,
  /(^|\/)(jest|vitest|vite|ava|karma|playwright|cypress|wdio|nightwatch)\.(config|conf|setup|workspace)\.[^/]+$/i,
  /(^|\/)vitest\.workspace\.[^/]+$/i,
  /(^|\/)\.mocharc(\.[^/]+)?$/,
  /(^|\/)\.(nycrc|c8rc|taprc)(\.[^/]+)?$/,
  /(^|\/)(babel\.config\.[^/]+|\.babelrc(\.[^/]+)?)$/,
  // npm reads `script-shell` and friends from it: it picks the program `npm test` runs.
  /(^|\/)\.npmrc$/,
];

/** package.json keys that decide what `npm test` runs and how test runners are configured. */
const PACKAGE_TEST_KEYS = ['scripts', 'config', 'type', 'jest', 'mocha', 'ava', 'nyc', 'c8', 'tap', 'vitest', 'babel'];
/** pyproject.toml / setup.cfg tables that configure test runners (by header, `[tool.pytest.ini_options]`, `[tool:pytest]`). */
const PY_TEST_SECTION = /^(tool|tool\.(pytest|tox|coverage|hatch|nox|poe|pdm)(\..*)?|tool:pytest|pytest|coverage:.*|tox:.*|aliases)$/;

/**
 * Whether a change to `path` from `before` to `after` (null: absent) decides how tests run.
 * `named` are the paths the instance's test command names (`filesNamedBy`).
 */
export function decidesTests(path: string, before: string | null, after: string | null, named: ReadonlySet<string>): boolean {
  if (namedByCommand(path, named) || TEST_DIR.test(path) || LOADED_FIRST.test(path) || TEST_FILE_NAMES.some((re) => re.test(path))) return true;
  const base = path.split('/').at(-1) ?? path;
  if (base === 'package.json') return packageTestPart(before) !== packageTestPart(after);
  if (base === 'pyproject.toml' || base === 'setup.cfg') return pySections(before) !== pySections(after);
  return false;
}

/**
 * The files a test command names: each word that looks like a relative path (`run-tests.js`,
 * `scripts/test.sh`, `tests/`), and what a build tool it starts reads (`make` → the Makefiles).
 */
export function filesNamedBy(command: string): Set<string> {
  const words = command.split(/[\s;&|()<>"'`=]+/).filter((w) => w !== '');
  const out = new Set<string>();
  for (const w of words) {
    if (w.startsWith('-') || w.startsWith('/') || w.includes('$') || w.includes('..')) continue;
    if (/[./]/.test(w)) out.add(w.replace(/^\.\//, '').replace(/\/$/, ''));
  }
  if (words.includes('make')) for (const f of ['Makefile', 'makefile', 'GNUmakefile']) out.add(f);
  if (words.some((w) => w === 'tox' || w === 'nox')) for (const f of ['tox.ini', 'noxfile.py']) out.add(f);
  return out;
}

/** A path under a directory the command names counts as named too (`node --test test/` names `test/a.js`). */
function namedByCommand(path: string, named: ReadonlySet<string>): boolean {
  for (const n of named) if (path === n || path.startsWith(`${n}/`)) return true;
  return false;
}

function packageTestPart(text: string | null): string {
  try {
    // An absent file has no test settings: adding one that has none is no test change.
    const v: unknown = JSON.parse(text ?? '{}');
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return `invalid:${text}`;
    const o = v as Record<string, unknown>;
    return canonicalJson(Object.fromEntries(PACKAGE_TEST_KEYS.map((k) => [k, o[k] ?? null])));
  } catch {
    // Unparseable: npm cannot run it either way, but a change to it is not trusted.
    return `invalid:${text}`;
  }
}

/** The test-runner tables of a TOML or INI file, comments and blank lines left out, in file order. */
function pySections(text: string | null): string {
  const kept: string[] = [];
  let section = '';
  for (const raw of (text ?? '').split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const header = /^\[\[?\s*([^\]]+?)\s*\]\]?$/.exec(line);
    if (header) {
      section = (header[1] ?? '').replace(/["']/g, '');
      if (PY_TEST_SECTION.test(section)) kept.push(line);
      continue;
    }
    // A dotted key at the top (`tool.pytest.ini_options.addopts = ...`) configures the same tables.
    const key = section === '' ? (/^([\w."'-]+)\s*=/.exec(line)?.[1] ?? '').replace(/["']/g, '') : '';
    if (PY_TEST_SECTION.test(section) || PY_TEST_SECTION.test(key)) kept.push(`${section}|${line}`);
  }
  return kept.join('\n');
}
