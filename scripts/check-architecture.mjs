#!/usr/bin/env node
// Checks run by `npm run lint` that eslint cannot do file by file:
//  1. the layer table over every import, including dynamic ones (the eslint rule does the same per file);
//  2. no import cycles among the modules of src/core (type-only imports included: a cycle of types
//     still ties the modules together);
//  3. every agent definition's `promptVars` equals the `{{placeholders}}` of its template, and every
//     template in src/agents/prompts belongs to a definition (renderPrompt checks the values at run time);
//  4. containment (issue 27, docs/security.md): no `.acia` or dependency path (node_modules, .venv, venv,
//     .yarn, .pnp.*) built or touched outside src/core/contain, no process-spawning module imported outside
//     the modules that start processes, and no host spawn whose cwd is a worktree or checkout.
// Exits 1 with one line per problem.
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { layerOf, layerViolation } from './layers.mjs';
import { containmentViolations } from './containment.mjs';

const ROOT = resolve(import.meta.dirname, '..');
const SRC = resolve(ROOT, process.argv[2] ?? 'src');
// Problems name files as src/...
const BASE = dirname(SRC);
const problems = [];

function walk(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(join(dir, e.name)) : /\.tsx?$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

// Static imports, re-exports and import('...') with a literal; comments are stripped first so that
// an example in a comment is not an edge.
const IMPORT = /(?:\bimport\s+(?:type\s+)?(?:[\w*{}\s,]+\s+from\s+)?|\bexport\s+(?:type\s+)?[\w*{}\s,]+\s+from\s+|\bimport\s*\(\s*)['"]([^'"]+)['"]/g;
function importsOf(text) {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
  return [...code.matchAll(IMPORT)].map((m) => m[1]);
}

const files = walk(SRC);
const graph = new Map();
for (const file of files) {
  const specs = importsOf(readFileSync(file, 'utf8'));
  for (const s of specs) {
    const why = layerViolation(SRC, file, s);
    if (why !== null) problems.push(`${relative(BASE, file)}: ${why}`);
  }
  graph.set(
    file,
    specs.filter((s) => s.startsWith('.')).map((s) => resolve(dirname(file), s).replace(/\.js$/, '.ts')),
  );
}

// Cycles inside core: a depth-first search that reports each back edge's cycle once.
const core = files.filter((f) => layerOf(SRC, f) === 'core');
const state = new Map();
const stack = [];
const seenCycles = new Set();
function visit(f) {
  state.set(f, 'open');
  stack.push(f);
  for (const t of graph.get(f) ?? []) {
    if (layerOf(SRC, t) !== 'core') continue;
    if (state.get(t) === 'open') {
      const cycle = stack.slice(stack.indexOf(t)).map((x) => relative(SRC, x));
      const key = [...cycle].sort().join('|');
      if (!seenCycles.has(key)) {
        seenCycles.add(key);
        problems.push(`import cycle in core: ${[...cycle, cycle[0]].join(' -> ')}`);
      }
    } else if (!state.has(t)) {
      visit(t);
    }
  }
  stack.pop();
  state.set(f, 'done');
}
for (const f of core) if (!state.has(f)) visit(f);

function containmentProblems(all) {
  return all.flatMap((file) => containmentViolations(relative(SRC, file).split('\\').join('/'), readFileSync(file, 'utf8')).map((why) => `${relative(BASE, file)}: ${why}`));
}

// Prompt templates against the variables their definitions declare.
const PROMPTS = join(SRC, 'agents', 'prompts');
const placeholders = (t) => [...new Set([...t.matchAll(/\{\{\s*([a-zA-Z0-9_]+)\s*\}\}/g)].map((m) => m[1]))].sort();
const used = new Set();
for (const file of files.filter((f) => layerOf(SRC, f) === 'agents')) {
  const text = readFileSync(file, 'utf8');
  for (const m of text.matchAll(/defineAgent\(\{([\s\S]*?)\n\}\)/g)) {
    const body = m[1];
    const template = /instructions:\s*'([^']+)'/.exec(body)?.[1];
    const vars = /promptVars:\s*\[([^\]]*)\]/.exec(body)?.[1];
    const where = relative(BASE, file);
    if (template === undefined || vars === undefined) {
      problems.push(`${where}: a defineAgent without a literal instructions file and promptVars list`);
      continue;
    }
    used.add(template);
    const declared = [...vars.matchAll(/'([^']+)'/g)].map((v) => v[1]).sort();
    let found;
    try {
      found = placeholders(readFileSync(join(PROMPTS, template), 'utf8'));
    } catch {
      problems.push(`${where}: template ${template} does not exist`);
      continue;
    }
    for (const v of found.filter((x) => !declared.includes(x))) problems.push(`${where}: ${template} uses {{${v}}}, which the definition does not declare, so nothing fills it`);
    for (const v of declared.filter((x) => !found.includes(x))) problems.push(`${where}: declares ${v}, which ${template} never uses`);
  }
}
for (const t of readdirSync(PROMPTS).filter((n) => n.endsWith('.md'))) {
  if (!used.has(t)) problems.push(`src/agents/prompts/${t}: no agent definition renders this template`);
}

problems.push(...containmentProblems(files));

if (problems.length > 0) {
  for (const p of problems) process.stderr.write(`check-architecture: ${p}\n`);
  process.exit(1);
}
process.stdout.write(`check-architecture: ${files.length} modules, layers and core cycles clean, prompt placeholders match, containment kept\n`);
