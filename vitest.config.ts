import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

// ACIA keeps trust records and run anchors in the user's state directory: tests get their own, never the
// real ~/.local/state of whoever runs them. The CLI helpers pass it on to the processes they start.
const stateHome = mkdtempSync(join(tmpdir(), 'acia-test-state-'));

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    env: { XDG_STATE_HOME: stateHome },
  },
});
