// Marks the CLI entry points executable. (Prompt templates are read from src/agents/prompts, which the
// package ships; see src/core/package-root.ts.)
import { chmodSync, existsSync } from 'node:fs';

if (existsSync('dist/cli/main.js')) chmodSync('dist/cli/main.js', 0o755);
