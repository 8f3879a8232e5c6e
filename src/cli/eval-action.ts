// `acia eval` and `acia eval compare`: flags to an eval, a live progress line, the summary and exit code.
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import chalk from 'chalk';
import { AciaError } from '../core/errors.js';
import { forTerminal } from '../core/text/terminal.js';
import { loadConfig } from '../core/config/load.js';
import { detectSandbox } from '../core/sandbox/detect.js';
import { noHuman } from '../team/deps.js';
import { resolveDevAgents } from '../team/agents-acp/dev-agent-choice.js';
import { goalOf, loadInstances, type LoadedInstance } from '../eval/instances.js';
import { defaultRemotesDir, runInstanceOnFleet } from '../fleet/eval-runs.js';
import { databaseUrl, openFleetClient } from '../fleet/fleet-db.js';
import { compareEvals } from '../eval/report.js';
import { instanceModelSpec, modelNameOf, runEval, type EvalProgress } from '../eval/run-eval.js';
import { preflightModel } from '../app/build-deps.js';
import { createDeps } from '../app/create-deps.js';
import { EXIT } from '../app/exit-codes.js';
import type { EvalFlags } from './commands/eval.js';

const isDir = (p: string): boolean => {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
};

export async function evalCommand(tasks: string, flags: EvalFlags): Promise<number> {
  if (!/^[1-9][0-9]*$/.test(flags.parallel ?? '1')) throw new AciaError('USAGE', `--parallel expects a positive whole number, got "${flags.parallel ?? ''}"`);
  const parallel = Number(flags.parallel ?? '1');
  let maxCost: number | undefined;
  if (flags.maxCostUsdPerTask !== undefined) {
    maxCost = Number(flags.maxCostUsdPerTask);
    if (!Number.isFinite(maxCost) || maxCost <= 0) throw new AciaError('USAGE', `--max-cost-usd-per-task expects a positive number, got "${flags.maxCostUsdPerTask}"`);
  }
  const instances = loadInstances(tasks);
  // A script path on the command line is relative to where it was typed.
  const model = flags.model?.replace(/^(scripted|chaos):([^,]+)/, (_m, kind: string, path: string) => `${kind}:${resolve(path)}`);
  // The user's config (file, env) and these flags; never the checked-out repository's .acia/config.json,
  // which the task set's author wrote.
  const configFor = (testCommand: string, modelSpec: string | undefined) =>
    loadConfig({
      repo: null,
      env: process.env,
      flags: {
        ...(modelSpec === undefined ? {} : { model: modelSpec }),
        testCommand,
        ...(flags.sandbox === undefined ? {} : { sandbox: flags.sandbox }),
        ...(flags.devAgent === undefined ? {} : { devAgent: flags.devAgent }),
        ...(maxCost === undefined ? {} : { budget: { maxCostUsd: maxCost } }),
      },
    }).config;
  const first = configFor(instances[0]?.test_command ?? 'true', model);
  preflightModel(first, process.env, false);
  // A dev agent that is not defined is bad input now, not a failed run per instance.
  resolveDevAgents(first.devAgent, first.devAgents);
  if (first.sandbox !== 'off') {
    // Checked once here: otherwise every instance would fail on it in turn.
    const sb = detectSandbox();
    if (sb.status === 'unavailable') throw new AciaError('SANDBOX_UNAVAILABLE', `no sandbox can start: ${sb.reason}`, { hint: `install it (${sb.install}), or pass --sandbox off` });
  }
  const out = resolve(flags.out);
  if (flags.db === undefined && (flags.remotes !== undefined || flags.runTimeout !== undefined)) throw new AciaError('USAGE', '--remotes and --run-timeout go with --db (instances run here without it)');
  const onFleet = flags.db === undefined ? null : await fleetRunner(flags, instances, out, { model, maxCost });

  const stderr = process.stderr;
  const tty = stderr.isTTY && !flags.quiet;
  const warned = new Set<string>();
  const controller = new AbortController();
  let interrupts = 0;
  const onSigint = () => {
    interrupts++;
    if (interrupts > 1) process.exit(EXIT.INTERRUPTED);
    stderr.write('\nstopping: the running instances stop after their current step; rerun with the same --out to resume (Ctrl-C again to stop now)\n');
    controller.abort();
  };
  process.on('SIGINT', onSigint);
  if (!flags.quiet) stderr.write(`acia eval: ${instances.length} instance(s) from ${tasks}, model ${first.model}, results in ${out}\n`);
  let summary;
  try {
    summary = await runEval({
      ...(onFleet ? { runInstance: (repo, inst) => onFleet.run(repo, inst, controller.signal) } : {}),
      instances,
      out,
      parallel,
      modelName: modelNameOf(first.model, first.devAgent),
      gradeTimeoutMs: first.commandTimeoutS * 1000,
      signal: controller.signal,
      makeDeps: (repo, inst) =>
        createDeps({
          kind: 'eval',
          repo,
          config: configFor(inst.test_command, model === undefined ? undefined : instanceModelSpec(model, inst.instance_id, isDir)),
          env: process.env,
          escalator: noHuman,
          signal: controller.signal,
          warn: (m) => {
            if (warned.has(m)) return;
            warned.add(m);
            if (tty) stderr.write('\r\u001b[2K');
            stderr.write(`${chalk.yellow('warning:')} ${m}\n`);
          },
        }),
      onProgress: (p) => {
        if (flags.quiet) return;
        if (tty) stderr.write(`\r\u001b[2K${progressLine(p)}`);
        else if (p.last || !p.skipped) stderr.write(`${progressLine(p)}\n`);
      },
    });
  } finally {
    process.off('SIGINT', onSigint);
    if (tty) stderr.write('\n');
    await onFleet?.close();
  }
  for (const f of summary.failed) stderr.write(`${chalk.red('could not run')} ${f.instance_id}: ${f.message}\n`);
  const resolved = summary.results.filter((r) => r.resolved).length;
  // Never silent: a patch that touched how tests run is named here, not only in the report.
  for (const r of summary.results) {
    if (r.tampered_files) process.stdout.write(`tampered ${r.instance_id}: the model patch changed ${r.tampered_files.map((f) => forTerminal(f)).join(', ')} (graded as the base and the test patch have them)\n`);
  }
  process.stdout.write(
    `resolved ${resolved}/${instances.length}${summary.skipped > 0 ? ` (${summary.skipped} finished earlier, skipped)` : ''}\n` +
      `  report       ${out}/report.md\n  predictions  ${out}/predictions.jsonl\n`,
  );
  if (summary.interrupted) return EXIT.INTERRUPTED;
  return summary.failed.length > 0 ? EXIT.FAILED : EXIT.OK;
}

/**
 * `--db`: each instance's run goes to the fleet with the settings `acia submit` would send (the model per
 * instance, its test command, the sandbox and the budget); what a worker's policy lets a submitter set is
 * all there is, so instances with setup commands and other Dev agents are refused here, before anything runs.
 */
async function fleetRunner(flags: EvalFlags, instances: LoadedInstance[], out: string, o: { model: string | undefined; maxCost: number | undefined }) {
  const withSetup = instances.find((i) => i.setup.length > 0);
  if (withSetup) throw new AciaError('USAGE', `--db: instance ${withSetup.instance_id} (${withSetup.origin}) has setup commands, which fleet workers do not run for a submitter`, { hint: 'run those instances without --db' });
  if (flags.devAgent !== undefined) throw new AciaError('USAGE', '--db runs the fleet’s own Dev agents; --dev-agent is not available with it');
  const minutes = Number(flags.runTimeout ?? '30');
  if (!Number.isFinite(minutes) || minutes <= 0) throw new AciaError('USAGE', `--run-timeout expects minutes, got "${flags.runTimeout ?? ''}"`);
  const fleet = await openFleetClient(databaseUrl(flags.db, process.env));
  const remotesDir = resolve(flags.remotes ?? defaultRemotesDir(out));
  return {
    run: (repo: string, inst: LoadedInstance, signal: AbortSignal) =>
      runInstanceOnFleet(
        fleet,
        repo,
        {
          instance_id: inst.instance_id,
          goal: goalOf(inst),
          settings: {
            ...(o.model === undefined ? {} : { model: instanceModelSpec(o.model, inst.instance_id, isDir) }),
            testCommand: inst.test_command,
            ...(flags.sandbox === undefined ? {} : { sandbox: flags.sandbox }),
            ...(o.maxCost === undefined ? {} : { budget: { maxCostUsd: o.maxCost } }),
          },
        },
        { remotesDir, timeoutMs: minutes * 60_000, signal },
      ),
    close: () => fleet.close(),
  };
}

function progressLine(p: EvalProgress): string {
  const last = p.last ? ` ${p.last.instance_id} ${p.last.resolved ? chalk.green('resolved') : chalk.red('unresolved')} (${p.last.reason})${p.skipped ? ' earlier' : ''} |` : '';
  const eta = p.etaMs === null ? '' : ` | ETA ${formatMs(p.etaMs)}`;
  return `[${p.done}/${p.total}]${last} resolved ${p.resolved} | spend $${p.spendUsd.toFixed(4)}${eta}`;
}

function formatMs(ms: number): string {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
}

export function compareCommand(a: string, b: string): number {
  process.stdout.write(compareEvals(resolve(a), resolve(b)));
  return EXIT.OK;
}
