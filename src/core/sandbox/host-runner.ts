// The unsandboxed runner behind `--sandbox off`: same timeout, cap and env scrub, no isolation. Prints nothing.
import * as fs from 'node:fs';
import * as nodePath from 'node:path';
import type { CommandOutcome, CommandRunner, RunCommandOptions } from '../tools/types.js';
import { dependencyDirsCached, linkDependencies } from './deps.js';
import { editableSourceDirs } from './editable-installs.js';
import { materializeScript, runsNpmInstaller } from './npm-materialize.js';
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

export class HostRunner implements CommandRunner {
  readonly kind = 'off' as const;
  /** Per task worktree: its copies of the source dirs the checkout's editable installs name. */
  private readonly pythonPaths = new Map<string, string[]>();
  /** Per task worktree: its checkout and its node_modules directories (for npm's installer, npm-materialize.ts). */
  private readonly layouts = new Map<string, { checkout: string; nodeModules: string[] }>();
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
    this.layouts.set(root, { checkout, nodeModules: dirs.filter((d) => d.kind === 'node_modules' && laid.linked.includes(d.rel)).map((d) => nodePath.join(root, d.rel)) });
    const sources = dirs.filter((d) => d.kind === 'venv').flatMap((d) => editableSourceDirs(nodePath.join(checkout, d.rel), checkout));
    this.pythonPaths.set(
      root,
      sources.map((s) => nodePath.join(root, nodePath.relative(checkout, s))),
    );
  }

  run(command: string, opts: RunCommandOptions): Promise<CommandOutcome> {
    const parent = this.options.parentEnv ?? process.env;
    const env = buildSandboxEnv({ home: this.options.home ?? parent.HOME ?? '/tmp' }, parent);
    const redirect = this.pythonPathFor(opts.cwd);
    if (redirect.length > 0) env.PYTHONPATH = [...redirect, ...(env.PYTHONPATH ? [env.PYTHONPATH] : [])].join(nodePath.delimiter);
    const layout = runsNpmInstaller(command) ? this.layoutFor(opts.cwd) : undefined;
    const script = layout !== undefined && layout.nodeModules.length > 0 ? `${materializeScript(layout.nodeModules, layout.checkout)}\n${command}` : command;
    return spawnCollect(['/bin/sh', '-c', script], {
      cwd: opts.cwd,
      env,
      timeoutMs: opts.timeoutMs,
      outputCapBytes: opts.outputCapBytes ?? DEFAULT_OUTPUT_CAP,
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
  }

  private layoutFor(cwd: string): { checkout: string; nodeModules: string[] } | undefined {
    for (const [root, layout] of this.layouts) if (isWithin(root, cwd)) return layout;
    return undefined;
  }

  private pythonPathFor(cwd: string): string[] {
    for (const [root, paths] of this.pythonPaths) if (isWithin(root, cwd)) return paths;
    return [];
  }
}
