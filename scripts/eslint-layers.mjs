// A tiny local eslint plugin: `acia/layers` reports any import (static, re-export or dynamic) that points
// up or sideways in the layer table of scripts/layers.mjs.
import { resolve } from 'node:path';
import { layerViolation } from './layers.mjs';

const SRC = resolve(import.meta.dirname, '..', 'src');

const layers = {
  meta: { type: 'problem', docs: { description: 'imports point down the layers: cli -> app -> team -> agents -> core' }, schema: [] },
  create(context) {
    const check = (node) => {
      const source = node.source;
      if (!source || source.type !== 'Literal' || typeof source.value !== 'string') return;
      const why = layerViolation(SRC, context.filename, source.value);
      if (why !== null) context.report({ node: source, message: why });
    };
    return { ImportDeclaration: check, ExportNamedDeclaration: check, ExportAllDeclaration: check, ImportExpression: check };
  },
};

export default { meta: { name: 'acia-local' }, rules: { layers } };
