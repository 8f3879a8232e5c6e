// The containment rules of scripts/check-architecture.mjs (issue 27). Heuristic and static, aimed at the
// patterns this codebase really uses: a path under `.acia` or a dependency entry built with join/resolve or a
// template literal, or handed to an fs call; a process-spawning module imported where processes are not
// started; a spawn whose `cwd` is a worktree or checkout. Each rule is exercised on a planted violation in
// tests/scripts/check-architecture.test.ts.

/** Where `.acia` paths may be built and touched: the containment module. */
const ACIA_OWNERS = [/^core\/contain\//];
/**
 * Where dependency entries may be: the containment module, and dependency discovery and linking
 * (core/sandbox/deps.ts), whose every link passes core/contain/dependency-entry.ts.
 */
const DEPENDENCY_OWNERS = [/^core\/contain\//, /^core\/sandbox\/deps\.ts$/];
/** The modules that may import a process-spawning module: each starts processes in a way core/contain allows. */
const SPAWNERS = [
  /^core\/contain\/host-process\.ts$/, // the one way to start a host process
  /^core\/sandbox\/spawn-collect\.ts$/, // the sandboxed runners' and git's plumbing (a cwd given by the caller)
  /^core\/sandbox\/git-batch\.ts$/, // git cat-file, with -C and an empty cwd
  /^core\/sandbox\/detect\.ts$/, // the bubblewrap probe
  /^core\/sandbox\/masks\.ts$/, // git config --file, no repository
  /^core\/sandbox\/bwrap-runner\.ts$/, // bwrap --help
];
/** The MCP SDK's stdio transport spawns too: only the MCP client may use it, with core/contain's parameters. */
const STDIO_TRANSPORT_USERS = [/^core\/tools\/mcp\/connection\.ts$/];

const SPAWN_MODULE = /\bimport\s+(?!type\b)[\w*{}\s,]*from\s+['"](?:node:)?child_process['"]|\bexport\s+[\w*{}\s,]*from\s+['"](?:node:)?child_process['"]|\bimport\s*\(\s*['"](?:node:)?child_process['"]\s*\)|\brequire\s*\(\s*['"](?:node:)?child_process['"]\s*\)|\bfrom\s+['"](?:execa|cross-spawn)['"]/;
const STDIO_TRANSPORT = /\bStdioClientTransport\b/;
const SPAWN_CALL = /(?<![.\w])(?:spawn|spawnSync|execFile|execFileSync|exec|execSync|fork|execa|spawnCollect|spawnCapture|spawnHostProcess)\s*\(|\bnew\s+StdioClientTransport\s*\(/g;
/** An object literal that describes a process to start (`{ command, args, env, cwd }`), wherever it is built. */
const PROCESS_OBJECT = /\{[^{}]*\b(?:command|argv)\b[^{}]*\}/g;

const DEP_NAMES = String.raw`node_modules|\.venv|venv|\.yarn(?:/[\w.-]+)?|\.pnp\.[\w.]+`;
/** A string literal that is a path segment (or starts a relative path) under .acia or a dependency entry. */
const ACIA_LITERAL = /(['"`])\.acia(?:\/[^'"`]*)?\1/;
const DEP_LITERAL = new RegExp(String.raw`(['"\x60])(?:${DEP_NAMES})(?:/[^'"\x60]*)?\1`);
/** A template literal that builds a path through .acia or a dependency entry: `${repo}/.acia/runs`. */
const ACIA_TEMPLATE = /\$\{[^}]+\}\/\.acia(?:\/|`)/;
const DEP_TEMPLATE = new RegExp(String.raw`\$\{[^}]+\}/(?:${DEP_NAMES})(?:/|\x60)`);
/** Calls that build paths or touch the filesystem. */
const PATH_CALL = /\b(?:join|resolve|relative|realpathSync|realpath|existsSync|statSync|lstatSync|stat|lstat|readFileSync|readFile|writeFileSync|writeFile|appendFile|appendFileSync|readdirSync|readdir|mkdirSync|mkdir|rmSync|rm|unlinkSync|unlink|openSync|open|symlinkSync|symlink|renameSync|rename|cpSync|cp|createReadStream|createWriteStream|accessSync|access)\s*\(/g;

/** Source without comments (block and line), so an example in a comment is never a violation. */
function code(text) {
  return text.replace(/\/\*[\s\S]*?\*\//g, (m) => m.replace(/[^\n]/g, ' ')).replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
}

/** The argument text of each call matched by `re` (up to the balancing parenthesis), with its line number. */
function callArgs(src, re) {
  const out = [];
  for (const m of src.matchAll(re)) {
    let depth = 0;
    let i = m.index + m[0].length - 1;
    const start = i + 1;
    for (; i < src.length; i++) {
      if (src[i] === '(') depth++;
      else if (src[i] === ')' && --depth === 0) break;
    }
    out.push({ args: src.slice(start, i), line: src.slice(0, m.index).split('\n').length });
  }
  return out;
}

const owned = (rel, owners) => owners.some((o) => o.test(rel));

/** The innermost bracket still open at `index` of `text`. */
function innermostBracket(text, index) {
  const open = [];
  for (let i = 0; i < index; i++) {
    const c = text[i];
    if (c === '{' || c === '[' || c === '(') open.push(c);
    else if (c === '}' || c === ']' || c === ')') open.pop();
  }
  return open.at(-1) ?? null;
}

/** The containment problems of one module (`rel` relative to src/, '/'-separated). */
export function containmentViolations(rel, text) {
  const src = code(text);
  const problems = [];
  const lineOf = (index) => src.slice(0, index).split('\n').length;
  // (a) .acia and dependency paths outside their owners.
  const rules = [
    { owners: ACIA_OWNERS, literal: ACIA_LITERAL, template: ACIA_TEMPLATE, what: 'an .acia path', where: 'src/core/contain (acia-state.ts)' },
    { owners: DEPENDENCY_OWNERS, literal: DEP_LITERAL, template: DEP_TEMPLATE, what: 'a dependency path (node_modules, .venv, venv, .yarn, .pnp.*)', where: 'src/core/contain (dependency-entry.ts) or src/core/sandbox/deps.ts' },
  ];
  for (const r of rules) {
    if (owned(rel, r.owners)) continue;
    for (const c of callArgs(src, PATH_CALL)) {
      if (r.literal.test(c.args) || r.template.test(c.args)) problems.push(`line ${c.line}: builds or touches ${r.what} outside ${r.where}`);
    }
    for (const m of src.matchAll(new RegExp(r.template.source, 'g'))) {
      const line = lineOf(m.index);
      if (!problems.some((p) => p.startsWith(`line ${line}:`))) problems.push(`line ${line}: builds ${r.what} in a template outside ${r.where}`);
    }
  }
  // (b) process-spawning modules, and host spawns in a worktree or checkout.
  if (SPAWN_MODULE.test(src) && !owned(rel, SPAWNERS)) {
    problems.push(`imports a process-spawning module outside the modules that start processes; start host processes through src/core/contain/host-process.ts`);
  }
  if (/\bnew\s+StdioClientTransport\s*\(/.test(src) && !owned(rel, STDIO_TRANSPORT_USERS)) {
    problems.push(`starts an MCP stdio transport outside src/core/tools/mcp/connection.ts`);
  }
  // The cwd of every spawn call, and of every object that describes a process to start. Plumbing that passes
  // its caller's choice on (`cwd: opts.cwd`) is checked where the caller makes it.
  const sites = [...callArgs(src, SPAWN_CALL), ...[...src.matchAll(PROCESS_OBJECT)].map((m) => ({ args: m[0], line: lineOf(m.index) }))];
  for (const site of sites) {
    for (const m of site.args.matchAll(/(?<![.\w])cwd\s*(?::\s*([^,}\n]+)|(?=\s*[,}]))/g)) {
      const value = (m[1] ?? 'cwd').trim();
      // `cwd` alone counts only as an object's shorthand property, not as an argument (`'-C', cwd`).
      if (m[1] === undefined && innermostBracket(site.args, m.index) !== '{') continue;
      if (/^(?:opts?|options|o|params|p)\.cwd$/.test(value)) continue;
      if (m[1] === undefined || /\b(?:root|repo|repoRoot|worktree|runWorktree|checkout|wt|tree|dir|cwd)\b|\.path\b/.test(value)) {
        const line = site.line + site.args.slice(0, m.index).split('\n').length - 1;
        problems.push(`line ${line}: a host spawn with cwd ${value}: processes outside the sandbox start in an empty directory (core/contain/host-process.ts), the worktree passed as an argument`);
      }
    }
  }
  // Nested calls (`readFileSync(join(...))`) and a spawn call's own options object meet the same site twice.
  return [...new Set(problems)];
}
