// The layer table of ARCHITECTURE.md, shared by the eslint rule (eslint.config.js) and
// scripts/check-architecture.mjs: for each top directory under src/, the other top directories its
// modules may import. Imports point down only; src/index.ts (the library root) may import anything.
import { dirname, relative, resolve, sep } from 'node:path';

export const ALLOWED_IMPORTS = {
  cli: ['ui', 'serve', 'fleet', 'eval', 'app', 'team', 'agents', 'core'],
  serve: ['app', 'team', 'agents', 'core'],
  fleet: ['app', 'team', 'agents', 'core'],
  eval: ['app', 'team', 'agents', 'core'],
  // `acia ui`: reads local ledgers or a fleet's database (the fleet's own readers and its answer path).
  ui: ['fleet', 'app', 'team', 'agents', 'core'],
  // The composition root (createDeps) and what every front end shares: event descriptions, exit codes.
  app: ['team', 'agents', 'core'],
  team: ['agents', 'core'],
  agents: ['core'],
  core: [],
};

/** The top directory under src/ of a file (`cli`, `core` ...), or null for src/index.ts and files outside src. */
export function layerOf(srcRoot, file) {
  const rel = relative(srcRoot, file);
  if (rel.startsWith('..')) return null;
  const parts = rel.split(sep);
  return parts.length > 1 ? parts[0] : null;
}

/** Why `from` importing `specifier` breaks the layering, or null when it does not (or is not ours). */
export function layerViolation(srcRoot, from, specifier) {
  if (!specifier.startsWith('.')) return null;
  const fromLayer = layerOf(srcRoot, from);
  if (fromLayer === null) return null;
  const target = resolve(dirname(from), specifier);
  const toLayer = layerOf(srcRoot, target);
  if (toLayer === null) {
    return relative(srcRoot, target).startsWith('..') ? null : `src/${fromLayer} must not import the library root (${specifier})`;
  }
  if (toLayer === fromLayer) return null;
  const allowed = ALLOWED_IMPORTS[fromLayer];
  if (allowed === undefined) return `src/${fromLayer} is not in the layer table (scripts/layers.mjs)`;
  if (!allowed.includes(toLayer)) return `src/${fromLayer} must not import src/${toLayer} (${specifier}): layers are cli -> app -> team -> agents -> core`;
  return null;
}
