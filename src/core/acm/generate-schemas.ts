// Generates schemas/<id>.schema.json from the zod contracts; `npm run schemas` runs it, a test checks disk matches.
import { mkdirSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { packagePath } from '../package-root.js';
import { z } from 'zod';
import { SCHEMA_IDS, SCHEMAS } from './schema-validator.js';

/** A URN, not a URL: the schemas ship in the package and are not served anywhere. */
export const SCHEMA_ID_PREFIX = 'urn:acia:schema:';

/** File name -> file content for every registered schema; input view, so fields with defaults are optional. */
export function generateSchemas(): Record<string, string> {
  const files: Record<string, string> = {};
  for (const id of SCHEMA_IDS) {
    const { $schema, ...body } = z.toJSONSchema(SCHEMAS[id], { io: 'input', unrepresentable: 'throw' });
    const doc = { $schema, $id: `${SCHEMA_ID_PREFIX}${id}`, title: titleOf(id), ...body };
    files[`${id}.schema.json`] = `${JSON.stringify(doc, null, 2)}\n`;
  }
  return files;
}

function titleOf(id: string): string {
  return `ACIA ${id.split('-').map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('')}`;
}

/** schemas/ at the package root, from either src/core/acm or dist/core/acm. */
export const SCHEMAS_DIR = `${packagePath('schemas')}/`;

export function writeSchemas(dir: string = SCHEMAS_DIR): string[] {
  mkdirSync(dir, { recursive: true });
  const written: string[] = [];
  for (const [file, content] of Object.entries(generateSchemas())) {
    writeFileSync(`${dir}/${file}`, content);
    written.push(file);
  }
  return written;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const written = writeSchemas();
  process.stdout.write(`wrote ${written.length} schemas to ${SCHEMAS_DIR}\n`);
}
