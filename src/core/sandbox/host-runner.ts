// The unsandboxed runner behind `--sandbox off`: same timeout, cap and env scrub, no isolation. Prints nothing.
import type { CommandOutcome, CommandRunner, RunCommandOptions } from '../tools/types.js';
import { buildSandboxEnv } from './env.js';
import { DEFAULT_OUTPUT_CAP, spawnCollect } from './spawn-collect.js';

export interface HostRunnerOptions {
  /** HOME for commands; defaults to the parent's HOME (there is no private one without a sandbox). */
  home?: string;
  parentEnv?: NodeJS.ProcessEnv;
}

export class HostRunner implements CommandRunner {
  readonly kind = 'off' as const;
  constructor(private readonly options: HostRunnerOptions = {}) {}

  run(command: string, opts: RunCommandOptions): Promise<CommandOutcome> {
    const parent = this.options.parentEnv ?? process.env;
    const env = { ...buildSandboxEnv({ home: this.options.home ?? parent.HOME ?? '/tmp' }, parent), ...opts.env };
    return spawnCollect(['/bin/sh', '-c', command], {
      cwd: opts.cwd,
      env,
      timeoutMs: opts.timeoutMs,
      outputCapBytes: opts.outputCapBytes ?? DEFAULT_OUTPUT_CAP,
      ...(opts.signal ? { signal: opts.signal } : {}),
      ...(opts.input === undefined ? {} : { input: opts.input }),
      ...(opts.separate ? { separate: true } : {}),
    });
  }
}
