// Colour policy: chalk honours FORCE_COLOR and the terminal, but not NO_COLOR (no-color.org), so we add it.
import chalk from 'chalk';

/** Colour level the CLI should use given the environment; null leaves chalk's own detection in place. */
export function colourOverride(env: NodeJS.ProcessEnv): 0 | null {
  // As in Node itself, FORCE_COLOR wins over NO_COLOR.
  if (env.FORCE_COLOR !== undefined) return null;
  return env.NO_COLOR !== undefined && env.NO_COLOR !== '' ? 0 : null;
}

export function applyColourEnv(env: NodeJS.ProcessEnv): void {
  const level = colourOverride(env);
  if (level !== null) chalk.level = level;
}
