import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

// ACIA keeps trust records and run anchors in the user's state directory: tests get their own, never the
// real ~/.local/state of whoever runs them. The CLI helpers pass it on to the processes they start.
const stateHome = mkdtempSync(join(tmpdir(), 'acia-test-state-'));

// The in-process tiers: pure modules and the executor with seams. They start nothing that outlives a test,
// so one process per worker runs them all (no per-file module reload), and they go first so a broken
// unit shows within seconds instead of after the slow tier.
const FAST = ['tests/core/**/*.test.ts', 'tests/agents/**/*.test.ts', 'tests/cli/**/*.test.ts', 'tests/team/**/*.test.ts', 'tests/scripts/**/*.test.ts', 'tests/ui/**/*.test.ts'];

// The slow tier's heaviest files, longest first (CI, a slow hour, ms): crash 211939, fleet-scale 127480,
// fleet-faults 103954, fleet-tasks 92427, checkpoint 66892, real-projects 65888, first-hour 62974, repos 46588,
// model 41533, acp-dev-agent 40276, disk 38393, fleet-ops 36767, mcp-client 35555, chaos 32510. Vitest orders
// files by the durations it cached on this machine, and with no cache (CI's fresh clone) by file size: the
// 7 KB crash suite then started two thirds of the way through and ran on alone for minutes while the other
// worker idled. Starting the longest first leaves only short files for the end, whatever the cache holds.
const HEAVIEST = [
  // (CI at load 18, 2026-11-27: real-projects 247 s, crash 83, fleet-faults 79, checkpoint 71, fleet-tasks 59.)
  'tests/e2e/real-projects.test.ts',
  'tests/faults/crash.test.ts',
  'tests/e2e/fleet-scale.test.ts',
  'tests/e2e/fleet-faults.test.ts',
  'tests/e2e/fleet-tasks.test.ts',
  'tests/e2e/checkpoint.test.ts',
  'tests/e2e/first-hour.test.ts',
  'tests/faults/repos.test.ts',
  'tests/faults/model.test.ts',
  'tests/e2e/acp-dev-agent.test.ts',
  'tests/faults/disk.test.ts',
  'tests/e2e/fleet-ops.test.ts',
  'tests/e2e/mcp-client.test.ts',
  'tests/eval/chaos.test.ts',
];

class HeaviestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (f: TestSpecification) => {
      const i = HEAVIEST.indexOf(relative(this.ctx.config.root, f.moduleId));
      return i === -1 ? HEAVIEST.length : i;
    };
    // Array.prototype.sort is stable: the base order (groups, projects, then cache or size) stays for the rest.
    return (await super.sort(files)).sort(
      (a, b) => a.project.config.sequence.groupOrder - b.project.config.sequence.groupOrder || (a.project.name < b.project.name ? -1 : a.project.name > b.project.name ? 1 : 0) || rank(a) - rank(b),
    );
  }
}

export default defineConfig({
  test: {
    sequence: { sequencer: HeaviestFirst },
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // vitest's default on 2 cores is ONE worker, yet a slow-tier file keeps about half a core busy (the
    // rest is spent waiting on git, bwrap, the sample repo's tests and servers it started): two workers fill both.
    maxWorkers: 2,
    env: { XDG_STATE_HOME: stateHome },
    projects: [
      {
        extends: true,
        test: { name: 'fast', include: FAST, isolate: false, sequence: { groupOrder: 0 } },
      },
      {
        // Built CLI, real sandbox, real servers, fault injection. These files share their worker processes
        // too (isolate: false): none changes process.env, the cwd or process handlers, and each cleans up
        // the servers it starts. A fresh process per file cost ~75 node starts with vitest's imports (import
        // time 31-33 s -> 20 s; with the CommonJS CLI, vitest 882-942 s -> 821 s on this machine).
        extends: true,
        test: { name: 'slow', include: ['tests/**/*.test.ts'], exclude: FAST, isolate: false, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
