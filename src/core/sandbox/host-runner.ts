// The unsandboxed runner behind `--sandbox off`: same timeout, cap and env scrub, no isolation. Prints nothing.
import * as fs from 'node:fs';
import * as nodePath from 'node:path';
import type { CommandOutcome, CommandRunner, RunCommandOptions } from '../tools/types.js';
import { dependencyDirsCached, linkDependencies } from './deps.js';
import { editableSourceDirs } from './editable-installs.js';
import { materializeScript } from './npm-materialize.js';
import { runsNodeInstaller, runsPipInstaller, runsPnpmInstaller } from './installers.js';
import { venvCopyScript } from './venv-copy.js';
import { buildSandboxEnv } from './env.js';
import { gitPathsOf } from './git-paths.js';
import { isWithin } from './path-guard.js';
import { DEFAULT_OUTPUT_CAP, spawnCollect } from './spawn-collect.js';
import { checkoutOf } from './task-view.js';

export interface HostRunnerOptions {
  /** HOME for commands; defaults to the parent's HOME (there is no private one without a sandbox). */
  home?: string;
  parentEnv?: NodeJS.ProcessEnv;
}

interface Layout {
  checkout: string;
  nodeModules: string[];
  venvs: Array<{ from: string; to: string }>;
}

export class HostRunner implements CommandRunner {
  readonly kind = 'off' as const;
  /** Per task worktree: its copies of the source dirs the checkout's editable installs name. */
  private readonly pythonPaths = new Map<string, string[]>();
  /**
   * Per task worktree: its checkout, its node_modules directories (for npm's installer, npm-materialize.ts)
   * and its links to the checkout's venvs (for pip's, venv-copy.ts).
   */
  private readonly layouts = new Map<string, Layout>();
  constructor(private readonly options: HostRunnerOptions = {}) {}

  /**
   * The host layout (links to the checkout's dependencies, workspace links into the task's tree). An
   * editable install in the checkout's venv names the checkout's sources; the task's copies are put
   * first on PYTHONPATH for commands in this worktree, so its tests import the task's code.
   */
  layDependencies(worktree: string): void {
    const root = fs.realpathSync(worktree);
    const checkout = checkoutOf(root, gitPathsOf(root));
    if (checkout === null) return;
    const dirs = dependencyDirsCached(checkout);
    const laid = linkDependencies(checkout, root, dirs, 'host');
    const laidOf = (kind: string) => dirs.filter((d) => d.kind === kind && laid.linked.includes(d.rel));
    this.layouts.set(root, {
      checkout,
      nodeModules: laidOf('node_modules').map((d) => nodePath.join(root, d.rel)),
      venvs: laidOf('venv').map((d) => ({ from: nodePath.join(checkout, d.rel), to: nodePath.join(root, d.rel) })),
    });
    const sources = dirs.filter((d) => d.kind === 'venv').flatMap((d) => editableSourceDirs(nodePath.join(checkout, d.rel), checkout));
    this.pythonPaths.set(
      root,
      sources.map((s) => nodePath.join(root, nodePath.relative(checkout, s))),
    );
  }

  run(command: string, opts: RunCommandOptions): Promise<CommandOutcome> {
    const parent = this.options.parentEnv ?? process.env;
    const env = { ...buildSandboxEnv({ home: this.options.home ?? parent.HOME ?? '/tmp' }, parent), ...opts.env };
    const redirect = this.pythonPathFor(opts.cwd);
    if (redirect.length > 0) env.PYTHONPATH = [...redirect, ...(env.PYTHONPATH ? [env.PYTHONPATH] : [])].join(nodePath.delimiter);
    // Installers get copies first: nothing is written through a link into the checkout.
    const layout = this.layoutFor(opts.cwd);
    const steps: string[] = [];
    if (layout !== undefined && (runsNodeInstaller(command) || runsPnpmInstaller(command)) && layout.nodeModules.length > 0) steps.push(materializeScript(layout.nodeModules, layout.checkout));
    if (layout !== undefined && runsPipInstaller(command) && layout.venvs.length > 0) steps.push(venvCopyScript(layout.venvs, true));
    const script = steps.length === 0 ? command : `${steps.join('\n')}\n${command}`;
    return spawnCollect(['/bin/sh', '-c', script], {
      cwd: opts.cwd,
      env,
      timeoutMs: opts.timeoutMs,
      outputCapBytes: opts.outputCapBytes ?? DEFAULT_OUTPUT_CAP,
      ...(opts.signal ? { signal: opts.signal } : {}),
      ...(opts.input === undefined ? {} : { input: opts.input }),
      ...(opts.separate ? { separate: true } : {}),
    });
  }

  private layoutFor(cwd: string): Layout | undefined {
    for (const [root, layout] of this.layouts) if (isWithin(root, cwd)) return layout;
    return undefined;
  }

  private pythonPathFor(cwd: string): string[] {
    for (const [root, paths] of this.pythonPaths) if (isWithin(root, cwd)) return paths;
    return [];
  }
}
