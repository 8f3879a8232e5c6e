// The package version, read once from package.json.
import { readFileSync } from 'node:fs';
import { packagePath } from '../core/package-root.js';

let cached: string | null = null;

export function readVersion(): string {
  cached ??= (JSON.parse(readFileSync(packagePath('package.json'), 'utf8')) as { version: string }).version;
  return cached;
}
