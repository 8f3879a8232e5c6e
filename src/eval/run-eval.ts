// `acia eval`: each instance is an ordinary ACIA run on a fresh checkout at its base commit, graded
// afterwards outside the agents' reach, the grade appended to the run's ledger, the result written
// atomically so an interrupted eval resumes where it stopped.
import { wikiDir } from '../core/contain/acia-state.js';
import { existsSync, mkdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { systemClock } from '../core/acm/ids.js';
import { AciaError, errorMessage } from '../core/errors.js';
import { readManifest, writeManifest } from '../core/ledger/manifest.js';
import { safeGit } from '../core/sandbox/safe-git.js';
import type { TeamDeps } from '../team/deps.js';
import { Git } from '../team/git.js';
import { startRun, type RunResult } from '../team/team.js';
import { prepareCheckout } from './checkout.js';
import { gradeInstance, type Grade } from './grade.js';
import { goalOf, type LoadedInstance } from './instances.js';
import { writeOutputs } from './report.js';
import { readResults, writeResult, type InstanceResult } from './results.js';

export interface EvalProgress {
  done: number;
  total: number;
  resolved: number;
  spendUsd: number;
  /** Estimated ms until the rest finish; null until one instance has finished in this session. */
  etaMs: number | null;
  /** The instance that just finished (or was found finished), if any. */
  last?: InstanceResult;
  skipped: boolean;
}

export interface EvalOptions {
  instances: LoadedInstance[];
  out: string;
  parallel: number;
  /** `model_name_or_path` in predictions.jsonl. */
  modelName: string;
  /** The deps of one instance's run on its checkout (the CLI passes createDeps' eval profile with the eval's settings). */
  makeDeps: (repo: string, inst: LoadedInstance) => Promise<TeamDeps>;
  gradeTimeoutMs: number;
  /**
   * Runs the team on an instance's checkout `repo` (at its base commit) and returns how the run ended,
   * its ledger under `repo/.acia/runs`; null when interrupted. Default: here, with `startRun`.
   * `acia eval --db` runs it on the fleet and exports its ledger into the checkout.
   */
  runInstance?: (repo: string, inst: LoadedInstance, deps: TeamDeps) => Promise<RunResult | null>;
  signal?: AbortSignal;
  onProgress?: (p: EvalProgress) => void;
  now?: () => number;
}

export interface EvalSummary {
  results: InstanceResult[];
  /** Instances the harness could not run (checkout failed...), with why; they are retried on the next run. */
  failed: { instance_id: string; message: string }[];
  skipped: number;
  interrupted: boolean;
}

/** For `scripted:<dir>` and `chaos:<dir>,...`: the script of this instance is `<dir>/<instance_id>.json`. */
export function instanceModelSpec(spec: string, instanceId: string, isDir: (p: string) => boolean): string {
  const m = /^(scripted|chaos):([^,]+)(,.*)?$/.exec(spec);
  if (!m?.[2] || !isDir(m[2])) return spec;
  return `${m[1]}:${join(m[2], `${instanceId}.json`)}${m[3] ?? ''}`;
}

/**
 * `model_name_or_path` for predictions: the model (file paths shortened to their names, so results do
 * not leak local paths) and, when it is not ACIA's own, the Dev agent.
 */
export function modelNameOf(spec: string, devAgent = 'acia'): string {
  const m = /^(scripted|chaos):([^,]+)(,.*)?$/.exec(spec);
  const model = m?.[2] ? `${m[1]}:${basename(m[2])}${m[3] ?? ''}` : spec;
  const agent = devAgent === 'acia' ? '' : `+dev:${devAgent.startsWith('acp:') ? `acp:${basename(devAgent.slice(4).split(' ')[0] ?? '')}` : devAgent}`;
  return `acia/${model}${agent}`;
}

export async function runEval(o: EvalOptions): Promise<EvalSummary> {
  const now = o.now ?? Date.now;
  mkdirSync(o.out, { recursive: true });
  const finished = readResults(o.out);
  const other = [...finished.values()].find((r) => r.model_name_or_path !== o.modelName);
  if (other) {
    // Resuming must not mix two models' results in one report.
    throw new AciaError('USAGE', `${o.out} holds results of ${other.model_name_or_path} (${other.instance_id}), not ${o.modelName}`, {
      hint: 'use another --out for another model, then compare them with `acia eval compare`',
    });
  }
  const ids = new Set(o.instances.map((i) => i.instance_id));
  const results = new Map([...finished].filter(([id]) => ids.has(id)));
  const pending = o.instances.filter((i) => !results.has(i.instance_id));
  const failed: EvalSummary['failed'] = [];
  const total = o.instances.length;
  const sessionStart = now();
  let finishedThisSession = 0;

  const progress = (last: InstanceResult | undefined, skipped: boolean) => {
    const all = [...results.values()];
    const done = all.length + failed.length;
    const elapsed = now() - sessionStart;
    const etaMs = finishedThisSession === 0 ? null : Math.round((elapsed / finishedThisSession) * (total - done));
    o.onProgress?.({
      done,
      total,
      resolved: all.filter((r) => r.resolved).length,
      spendUsd: all.reduce((s, r) => s + (r.costUsd ?? 0), 0),
      etaMs,
      ...(last ? { last } : {}),
      skipped,
    });
  };
  for (const r of results.values()) progress(r, true);

  const queue = [...pending];
  const worker = async () => {
    for (let inst = queue.shift(); inst !== undefined; inst = queue.shift()) {
      if (o.signal?.aborted) return;
      try {
        const r = await runInstance(o, inst, now);
        if (r === null) return; // interrupted: not finished, redone on the next run
        writeResult(o.out, r);
        results.set(r.instance_id, r);
        finishedThisSession++;
        writeOutputs(o.out, o.instances, results);
        progress(r, false);
      } catch (e) {
        if (o.signal?.aborted) return;
        failed.push({ instance_id: inst.instance_id, message: errorMessage(e) });
        progress(undefined, false);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(o.parallel, pending.length)) }, worker));
  writeOutputs(o.out, o.instances, results);
  return {
    results: o.instances.flatMap((i) => results.get(i.instance_id) ?? []),
    failed,
    skipped: finished.size,
    interrupted: o.signal?.aborted ?? false,
  };
}

async function runInstance(o: EvalOptions, inst: LoadedInstance, now: () => number): Promise<InstanceResult | null> {
  const started = now();
  const git = new Git(systemClock);
  const work = join(o.out, 'work', inst.instance_id);
  const repo = join(work, 'repo');
  const base = await prepareCheckout(git, inst, repo);
  const deps = await o.makeDeps(repo, inst);
  const common = { instance_id: inst.instance_id, model_name_or_path: o.modelName };

  for (const cmd of inst.setup) {
    const r = await deps.tools.runnerFor(repo).run(cmd, { cwd: repo, timeoutMs: o.gradeTimeoutMs, ...(o.signal ? { signal: o.signal } : {}) });
    if (o.signal?.aborted) return null;
    if (r.exitCode !== 0) {
      return {
        ...common,
        model_patch: '',
        resolved: false,
        reason: 'error',
        message: `setup command failed (exit ${String(r.exitCode)}): ${cmd}: ${r.output.trim().split('\n').at(-1) ?? ''}`,
        runId: null,
        ledger: null,
        wiki: null,
        runBranch: null,
        headCommit: null,
        costUsd: 0,
        tokens: 0,
        wallMs: now() - started,
        failToPass: {},
        passToPass: {},
        finishedAt: new Date(now()).toISOString(),
      };
    }
  }

  const run = o.runInstance ? await o.runInstance(repo, inst, deps) : await startRun(deps, { dir: repo, goal: goalOf(inst) });
  if (run === null || (run.reason === 'aborted' && o.signal?.aborted)) return null;
  const commit = (await git.run(repo, ['rev-parse', '--verify', '--quiet', `${run.runBranch}^{commit}`], { allowFail: true })).stdout || base;
  // Raw stdout: Git.run trims, and a patch whose last context line is blank would lose it.
  const diff = await safeGit(repo, ['diff', '--no-color', '--full-index', base, commit]);
  if (diff.exitCode !== 0) throw new AciaError('INTERNAL', `git diff ${base}..${commit} failed: ${diff.stderr.trim()}`);
  const patch = diff.stdout;
  const grade = await gradeInstance(inst, {
    git,
    repo,
    base,
    commit,
    dir: join(work, 'grade'),
    runnerFor: deps.tools.runnerFor,
    timeoutMs: o.gradeTimeoutMs,
    ...(o.signal ? { signal: o.signal } : {}),
  });
  if (o.signal?.aborted) return null;
  await recordGrade(deps, run, inst, grade);
  await deps.store.renderWiki(repo, null).catch(() => undefined);
  return {
    ...common,
    model_patch: patch,
    resolved: grade.resolved,
    reason: run.reason,
    message: run.message,
    runId: run.runId,
    ledger: join(run.runDir, 'ledger.jsonl'),
    wiki: join(wikiDir(repo), 'runs', `${run.runId}.md`),
    runBranch: run.runBranch,
    headCommit: commit,
    costUsd: run.costUsd,
    tokens: run.tokens,
    wallMs: now() - started,
    failToPass: grade.failToPass,
    passToPass: grade.passToPass,
    ...(grade.tamperedFiles.length === 0 ? {} : { tampered_files: grade.tamperedFiles }),
    ...(grade.error === undefined ? {} : { gradeError: grade.error }),
    finishedAt: new Date(now()).toISOString(),
  };
}

/** EVAL_GRADED goes after RUN_COMPLETED; the manifest's anchor (and the user's) moves to it so the chain still verifies. */
async function recordGrade(deps: TeamDeps, run: RunResult, inst: LoadedInstance, grade: Grade): Promise<void> {
  if (!existsSync(join(run.runDir, 'ledger.jsonl'))) throw new AciaError('INTERNAL', `run ${run.runId} left no ledger to record its grade in`);
  const ledger = await deps.store.openLedger(run.runDir, run.runId, { create: false });
  try {
    const outputRef = await ledger.putBlob(grade.output);
    const testPatchRef = inst.test_patch === '' ? null : await ledger.putBlob(inst.test_patch);
    await ledger.append({
      actor: 'team',
      type: 'EVAL_GRADED',
      data: {
        instanceId: inst.instance_id,
        resolved: grade.resolved,
        commit: grade.commit,
        testPatchRef,
        failToPass: grade.failToPass,
        passToPass: grade.passToPass,
        exitCode: grade.exitCode,
        outputRef,
        ...(grade.tamperedFiles.length === 0 ? {} : { tamperedFiles: grade.tamperedFiles }),
        ...(grade.error === undefined ? {} : { error: grade.error }),
      },
    });
  } finally {
    await ledger.close();
  }
  const manifest = await readManifest(run.runDir);
  const head = ledger.head();
  if (manifest && head) {
    await writeManifest(run.runDir, { ...manifest, head, updatedAt: deps.runtime.clock.now().toISOString() });
    // The anchor outside the checkout moves with it, or verify would see entries past the end.
    await deps.store.anchor.write(run.runDir, run.runId, head, manifest.status);
  }
}
