import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

// ACIA keeps trust records and run anchors in the user's state directory: tests get their own, never the
// real ~/.local/state of whoever runs them. The CLI helpers pass it on to the processes they start.
const stateHome = mkdtempSync(join(tmpdir(), 'acia-test-state-'));

// The in-process tiers: pure modules and the executor with seams. They start nothing that outlives a test,
// so one process per worker runs them all (no per-file module reload), and they go first so a broken
// unit shows within seconds instead of after the slow tier.
const FAST = ['tests/core/**/*.test.ts', 'tests/agents/**/*.test.ts', 'tests/cli/**/*.test.ts', 'tests/team/**/*.test.ts', 'tests/scripts/**/*.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // vitest's default on 2 cores is ONE worker, yet a slow-tier file keeps about half a core busy (the
    // rest is spent waiting on git, bwrap, node --test and servers it started): two workers fill both.
    maxWorkers: 2,
    env: { XDG_STATE_HOME: stateHome },
    projects: [
      {
        extends: true,
        test: { name: 'fast', include: FAST, isolate: false, sequence: { groupOrder: 0 } },
      },
      {
        // Built CLI, real sandbox, real servers, fault injection: each file keeps its own process.
        extends: true,
        test: { name: 'slow', include: ['tests/**/*.test.ts'], exclude: FAST, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
