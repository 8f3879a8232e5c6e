// Grading, after the run and outside the agents' reach: the run branch's tree in a fresh worktree the
// agents never saw, the test patch applied there, the named tests run in the sandbox. Resolved means
// every FAIL_TO_PASS test passes and every PASS_TO_PASS test still does.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { errorMessage } from '../core/errors.js';
import type { CommandRunner } from '../core/tools/types.js';
import type { Git } from '../team/git.js';
import type { EvalInstance } from './instances.js';
import { parseTestOutcomes, statusOf, type NamedStatus } from './test-results.js';

export interface Grade {
  resolved: boolean;
  commit: string;
  failToPass: Record<string, NamedStatus>;
  passToPass: Record<string, NamedStatus>;
  exitCode: number | null;
  output: string;
  error?: string;
}

export interface GradeOptions {
  git: Git;
  /** The instance's checkout (the repository the run branch lives in). */
  repo: string;
  /** The commit to grade: the run branch head, or the base when the run left nothing. */
  commit: string;
  /** Scratch directory outside the repository; removed and recreated. */
  dir: string;
  runnerFor: (root: string) => CommandRunner;
  timeoutMs: number;
  signal?: AbortSignal;
}

const OUTPUT_CAP = 2_000_000;

export async function gradeInstance(inst: EvalInstance, o: GradeOptions): Promise<Grade> {
  const tree = join(o.dir, 'tree');
  rmSync(o.dir, { recursive: true, force: true });
  mkdirSync(o.dir, { recursive: true });
  const base = { commit: o.commit, failToPass: statusOf(inst.FAIL_TO_PASS, new Map()), passToPass: statusOf(inst.PASS_TO_PASS, new Map()), exitCode: null };
  try {
    await o.git.run(o.repo, ['worktree', 'add', '-q', '--detach', '--force', tree, o.commit]);
    const gitDir = await o.git.gitDirOf(tree);
    const runner = o.runnerFor(tree);
    const run = (command: string) => runner.run(command, { cwd: tree, timeoutMs: o.timeoutMs, outputCapBytes: OUTPUT_CAP, ...(o.signal ? { signal: o.signal } : {}) });
    for (const cmd of inst.setup) {
      const r = await run(cmd);
      if (r.exitCode !== 0) return { ...base, resolved: false, output: r.output, error: `setup command failed (exit ${String(r.exitCode)}): ${cmd}` };
    }
    if (inst.test_patch.trim() !== '') {
      // The patch lives beside the tree, never inside it.
      const patchFile = join(o.dir, 'test.patch');
      writeFileSync(patchFile, inst.test_patch.endsWith('\n') ? inst.test_patch : `${inst.test_patch}\n`);
      const applied = await o.git.run(tree, ['apply', '--whitespace=nowarn', patchFile], { allowFail: true, expectedGitDir: gitDir });
      if (applied.exitCode !== 0) return { ...base, resolved: false, output: applied.stderr, error: `the test patch does not apply to the run's tree: ${applied.stderr.split('\n')[0] ?? ''}` };
    }
    const r = await run(inst.test_command);
    const outcomes = parseTestOutcomes(r.output);
    const failToPass = statusOf(inst.FAIL_TO_PASS, outcomes);
    const passToPass = statusOf(inst.PASS_TO_PASS, outcomes);
    const allPass = (s: Record<string, NamedStatus>) => Object.values(s).every((v) => v === 'passed');
    const named = inst.FAIL_TO_PASS.length + inst.PASS_TO_PASS.length;
    // With no named tests, the whole command's exit code is the test.
    const resolved = named === 0 ? r.exitCode === 0 : allPass(failToPass) && allPass(passToPass);
    return {
      resolved,
      commit: o.commit,
      failToPass,
      passToPass,
      exitCode: r.exitCode,
      output: r.output,
      ...(r.timedOut ? { error: `the test command timed out after ${Math.round(o.timeoutMs / 1000)} s` } : {}),
    };
  } catch (e) {
    return { ...base, resolved: false, output: '', error: `grading failed: ${errorMessage(e)}` };
  } finally {
    await o.git.run(o.repo, ['worktree', 'remove', '--force', tree], { allowFail: true });
    rmSync(o.dir, { recursive: true, force: true });
    mkdirSync(dirname(o.dir), { recursive: true });
  }
}
