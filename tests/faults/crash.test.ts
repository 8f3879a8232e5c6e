// kill -9 at seeded moments of real runs, then `acia resume`: the run finishes, no task completes twice,
// nothing recorded is lost, the ledger verifies, and the resumed run replays to the same decisions.
import { spawn, execFileSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { acia, CLI, ledgerOf, tempDir, testsPassOn } from '../e2e/helpers.js';
import { editedScript } from '../e2e/cli-helpers.js';
import { rng } from '../helpers/rng.js';
import { replaysIdentically } from '../team/team-rig.js';

const SCENARIOS = join(import.meta.dirname, '..', '..', 'workspace', 'scenarios');

interface Case {
  scenario: string;
  latencyMs: number;
  kills: number;
  /** Roughly how long the scenario runs with that latency; kills are spread over it. */
  spanMs: number;
}

function setup(c: Case): { repo: string; script: string; goal: string; settings: { testCommand: string; parallel: number; maxIterations: number } } {
  const dir = tempDir(`crash-${c.scenario}`);
  const repo = join(dir, 'repo');
  const meta = JSON.parse(readFileSync(join(SCENARIOS, c.scenario, 'scenario.json'), 'utf8')) as { goal: string; settings: { testCommand: string; parallel: number; maxIterations: number } };
  cpSync(join(SCENARIOS, '_base'), repo, { recursive: true });
  const git = (...a: string[]) => execFileSync('git', a, { cwd: repo, stdio: 'ignore' });
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'base');
  const file = editedScript(
    c.scenario,
    (turns) => {
      for (const t of turns) t.latencyMs = t.caller === 'pm' ? 0 : c.latencyMs;
    },
    join(dir, 'script.json'),
  );
  return { repo, script: file, goal: meta.goal, settings: meta.settings };
}

/** Runs whose ledger holds a RUN_STARTED entry. */
function startedRuns(repo: string): string[] {
  const dir = join(repo, '.acia', 'runs');
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((id) => {
    // A torn last line is expected after a kill; only complete lines count.
    const file = join(dir, id, 'ledger.jsonl');
    if (!existsSync(file)) return false;
    return readFileSync(file, 'utf8').split('\n').slice(0, -1).some((l) => l.includes('"type":"RUN_STARTED"'));
  });
}

/** Starts `acia run`, SIGKILLs it after `afterMs` (unless it ended first); resolves with how it ended. */
function runAndKill(args: string[], afterMs: number): Promise<{ killed: boolean; code: number | null }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { stdio: 'ignore', env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', XDG_STATE_HOME: process.env.XDG_STATE_HOME ?? '', NO_COLOR: '1' } });
    let killed = false;
    const timer = setTimeout(() => {
      killed = child.kill('SIGKILL');
    }, afterMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ killed, code });
    });
  });
}

const CASES: Case[] = [
  { scenario: 'parallel', latencyMs: 150, kills: 8, spanMs: 2600 },
  { scenario: 'happy', latencyMs: 100, kills: 4, spanMs: 1400 },
  { scenario: 'fix-loop', latencyMs: 80, kills: 4, spanMs: 3200 },
  { scenario: 'plan-b', latencyMs: 80, kills: 4, spanMs: 3400 },
];

describe('kill -9 then acia resume', () => {
  for (const c of CASES) {
    const random = rng(c.scenario.length * 7919 + c.kills);
    for (let k = 0; k < c.kills; k++) {
      // Spread kills over the run, each jittered inside its slice of the span.
      const at = Math.round(((k + random()) / c.kills) * c.spanMs) + 60;
      it(`${c.scenario}: killed at ${at} ms, resumed to completion`, async () => {
        const { repo, script, goal, settings } = setup(c);
        // The scenario's own test command, as its demo and the fleet suites run it. Detection would pick
        // `npm test`, whose start-up costs about half a CPU-second on every test run of every run and resume:
        // a fifth of this file's CPU. The resume runs the command its run recorded, across the kill.
        const args = ['run', goal, '--repo', repo, '--model', `scripted:${script}`, '--test-command', settings.testCommand, '--parallel', String(settings.parallel), '--max-iterations', String(settings.maxIterations), '--quiet'];
        const first = await runAndKill(args, at);
        const before = startedRuns(repo);
        if (before.length === 0) {
          // Killed before RUN_STARTED was durable: nothing was recorded. Resume says so; a fresh run works.
          expect(first.killed).toBe(true);
          if (existsSync(join(repo, '.acia', 'runs')) && readdirSync(join(repo, '.acia', 'runs')).length > 0) {
            const r = acia(['resume', readdirSync(join(repo, '.acia', 'runs'))[0]!, '--repo', repo]);
            expect(r.code).toBe(2);
            expect(r.stderr).toContain('interrupted before it started');
          }
          const again = acia(args, { timeoutMs: 60_000 });
          expect(again.code, again.stderr).toBe(0);
        }
        const runId = startedRuns(repo)[0]!;
        let code = first.code;
        if (first.killed && existsSync(join(repo, '.acia', 'runs', runId, 'ledger.jsonl')) && code !== 0) {
          // Killed after the run succeeded and anchored its manifest (while rendering the wiki or exiting):
          // resume then refuses a finished run (exit 2) rather than redoing anything.
          const finished = ledgerOf(repo, runId).some((e) => e.type === 'RUN_COMPLETED' && (e.data as { reason: string }).reason === 'succeeded');
          const resumed = acia(['resume', runId, '--repo', repo, '--quiet'], { timeoutMs: 60_000 });
          code = finished && resumed.code === 2 && resumed.stderr.includes('is finished (it succeeded)') ? 0 : resumed.code;
          expect(code, `${resumed.stdout}\n${resumed.stderr}`).toBe(0);
        }
        if (!first.killed) expect(code).toBe(0);
        const entries = ledgerOf(repo, runId);
        // no task completed twice, nothing left running, the run ended well
        const completed = entries.filter((e) => e.type === 'TASK_COMPLETED').map((e) => (e.data as { taskId: string }).taskId);
        expect(new Set(completed).size).toBe(completed.length);
        const last = entries.filter((e) => e.type === 'RUN_COMPLETED').at(-1)!;
        expect((last.data as { reason: string }).reason).toBe('succeeded');
        // every merged task's work is on the run branch and its tests pass there
        expect(testsPassOn(repo, `acia/${runId}`)).toBe(true);
        const verify = acia(['verify', runId, '--repo', repo]);
        expect(verify.code, verify.stdout + verify.stderr).toBe(0);
        // replay takes each session as it ran, cut off where it died, and finds the same decisions
        expect(await replaysIdentically(repo, runId)).toBe(true);
        // cost spent before the crash carries over: every LLM_CALL is still in the ledger and counted
        const calls = entries.filter((e) => e.type === 'LLM_CALL').length;
        expect(calls).toBeGreaterThan(0);
      }, 120_000);
    }
  }
});
