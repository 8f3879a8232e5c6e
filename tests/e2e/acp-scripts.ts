// What the external-agent e2e tests share: the goal, the happy scenario's script (whose PM, Dev and QA
// turns they reuse or rewrite for an agent's own tools), and a script written to a file for `--model`.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ScriptTurn } from '../../src/core/llm/script.js';
import { tempDir } from './helpers.js';
import { SCENARIOS } from './cli-helpers.js';

export const GOAL = 'Add a titleCase(text) helper that capitalises every word, with a test';

export type Turn = Pick<ScriptTurn, 'caller' | 'text' | 'latencyMs' | 'toolCalls'>;

export const happy = JSON.parse(readFileSync(join(SCENARIOS, 'happy', 'script.json'), 'utf8')) as { model?: string; turns: Turn[] };

/** `turns` at zero latency, with the happy scenario's model, written to a script file. */
export function writeScript(turns: Turn[], prefix = 'acp-script'): string {
  const file = join(tempDir(prefix), 'script.json');
  writeFileSync(file, JSON.stringify({ version: 1, model: happy.model, turns: turns.map((t) => ({ ...t, latencyMs: 0 })) }));
  return file;
}
