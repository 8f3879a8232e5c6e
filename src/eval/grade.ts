// Grading, after the run and outside the agents' reach: a fresh worktree of the base commit that the
// agents never saw, with only the model's patch brought in — except the files that decide how tests run
// (test files, runner config, test scripts: test-inputs.ts), which stay as the base has them and get the
// test patch; a patch that touched them is reported in `tamperedFiles`. The named tests run in the
// sandbox. Resolved means every FAIL_TO_PASS test passes and every PASS_TO_PASS test still does.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { errorMessage } from '../core/errors.js';
import type { CommandRunner } from '../core/tools/types.js';
import type { Git } from '../team/git.js';
import type { EvalInstance } from './instances.js';
import { decidesTests, filesNamedBy } from './test-inputs.js';
import { parseTestOutcomes, statusOf, type NamedStatus } from './test-results.js';

export interface Grade {
  resolved: boolean;
  commit: string;
  /** Files the model's patch changed that decide how tests run: graded as the base and the test patch have them. */
  tamperedFiles: string[];
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
  /** The instance's base commit: the graded tree starts from it. */
  base: string;
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
  const base = { commit: o.commit, tamperedFiles: [] as string[], failToPass: statusOf(inst.FAIL_TO_PASS, new Map()), passToPass: statusOf(inst.PASS_TO_PASS, new Map()), exitCode: null };
  try {
    await o.git.run(o.repo, ['worktree', 'add', '-q', '--detach', '--force', tree, o.base]);
    const gitDir = await o.git.gitDirOf(tree);
    base.tamperedFiles = await bringInModelPatch(inst, o, tree, gitDir);
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
      if (applied.exitCode !== 0) return { ...base, resolved: false, output: applied.stderr, error: `the test patch does not apply to the graded tree: ${applied.stderr.split('\n')[0] ?? ''}` };
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
      tamperedFiles: base.tamperedFiles,
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

/**
 * Brings the model's changes (base..commit) into the base worktree, file by file, leaving out the files
 * that decide how tests run and those the test patch touches; returns the ones left out, sorted.
 */
async function bringInModelPatch(inst: EvalInstance, o: GradeOptions, tree: string, gitDir: string): Promise<string[]> {
  if (o.commit === o.base) return [];
  const listed = await o.git.run(o.repo, ['diff', '--name-status', '-z', '--no-renames', '--no-ext-diff', '--no-textconv', o.base, o.commit]);
  const fields = listed.stdout.split('\0').filter((f) => f !== '');
  const changes: { status: string; path: string }[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) changes.push({ status: fields[i]!, path: fields[i + 1]! });
  const named = filesNamedBy(inst.test_command);
  const patched = filesOfPatch(inst.test_patch);
  const show = async (rev: string, path: string): Promise<string | null> => {
    const r = await o.git.run(o.repo, ['show', `${rev}:${path}`], { allowFail: true });
    return r.exitCode === 0 ? r.stdout : null;
  };
  const tampered: string[] = [];
  const take: string[] = [];
  const drop: string[] = [];
  for (const c of changes) {
    // Manifests that hold more than test settings are read whole only when their test part may matter.
    const manifest = /(^|\/)(package\.json|pyproject\.toml|setup\.cfg)$/.test(c.path);
    const [before, after] = manifest ? [await show(o.base, c.path), await show(o.commit, c.path)] : [null, null];
    if (patched.has(c.path) || decidesTests(c.path, before, after, named)) tampered.push(c.path);
    else if (c.status === 'D') drop.push(c.path);
    else take.push(c.path);
  }
  // Literal pathspecs, NUL-separated on stdin: any file name is just a name.
  const literal = { env: { GIT_LITERAL_PATHSPECS: '1' }, expectedGitDir: gitDir };
  if (take.length > 0) await o.git.run(tree, ['checkout', o.commit, '--pathspec-from-file=-', '--pathspec-file-nul'], { ...literal, input: `${take.join('\0')}\0` });
  if (drop.length > 0) await o.git.run(tree, ['rm', '-q', '--pathspec-from-file=-', '--pathspec-file-nul'], { ...literal, input: `${drop.join('\0')}\0` });
  return tampered.sort();
}

/** The paths a unified diff touches (both sides of each file header). */
export function filesOfPatch(patch: string): Set<string> {
  const out = new Set<string>();
  for (const line of patch.split('\n')) {
    const m = /^(?:---|\+\+\+) (?:[ab]\/)?(.+?)\t?$/.exec(line);
    if (m?.[1] && m[1] !== '/dev/null') out.add(m[1]);
    const g = /^diff --git a\/(.+) b\/(.+)$/.exec(line);
    if (g) {
      out.add(g[1]!);
      out.add(g[2]!);
    }
  }
  return out;
}
