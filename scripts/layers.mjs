// The layer table of ARCHITECTURE.md, shared by the eslint rule (eslint.config.js) and
// scripts/check-architecture.mjs: for each top directory under src/, the other top directories its
// modules may import. Imports point down only; src/index.ts (the library root) may import anything.
import { dirname, relative, resolve, sep } from 'node:path';

export const ALLOWED_IMPORTS = {
  cli: ['serve', 'fleet', 'eval', 'team', 'agents', 'core'],
  serve: ['team', 'agents', 'core'],
  fleet: ['team', 'agents', 'core'],
  eval: ['team', 'agents', 'core'],
  team: ['agents', 'core'],
  agents: ['core'],
  core: [],
};

/**
 * Known upward imports, each named with why it is tolerated, so that nothing new slips in beside them:
 * `from` layer -> the src/ path it may import. The composition root `buildDeps` still lives in the CLI
 * (moving it is a separate change, issue 15); the ACP and MCP servers reuse the CLI's event
 * descriptions and its error-to-exit-code table, so their errors carry the CLI's codes.
 */
export const KNOWN_EXCEPTIONS = {
  serve: ['cli/build-deps.ts', 'cli/describe.ts', 'cli/exit-codes.ts'],
  fleet: ['cli/build-deps.ts'],
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
  const targetPath = relative(srcRoot, target).split(sep).join('/').replace(/\.js$/, '.ts');
  if ((KNOWN_EXCEPTIONS[fromLayer] ?? []).includes(targetPath)) return null;
  if (!allowed.includes(toLayer)) return `src/${fromLayer} must not import src/${toLayer} (${specifier}): layers are cli -> team -> agents -> core`;
  return null;
}
