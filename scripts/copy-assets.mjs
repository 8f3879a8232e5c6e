// Copies non-TypeScript assets (prompt templates) next to the compiled code and marks the CLI executable.
import { chmodSync, cpSync, existsSync } from 'node:fs';

if (existsSync('src/agents/prompts')) cpSync('src/agents/prompts', 'dist/agents/prompts', { recursive: true });
if (existsSync('dist/cli/main.js')) chmodSync('dist/cli/main.js', 0o755);
