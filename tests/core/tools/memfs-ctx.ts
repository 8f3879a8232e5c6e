// A ToolContext over memfs for unit tests, with a runner that records commands and returns scripted outcomes.
import type * as NodeFs from 'node:fs';
import { Volume, createFsFromVolume } from 'memfs';
import type { CommandOutcome, CommandRunner, RunCommandOptions, ToolContext } from '../../../src/core/tools/types.js';

export class FakeRunner implements CommandRunner {
  readonly calls: { command: string; options: RunCommandOptions }[] = [];
  constructor(private readonly reply: Partial<CommandOutcome> = {}) {}
  run(command: string, options: RunCommandOptions): Promise<CommandOutcome> {
    this.calls.push({ command, options });
    return Promise.resolve({ exitCode: 0, signal: null, timedOut: false, output: '', truncated: false, durationMs: 1, ...this.reply });
  }
}

export function memCtx(files: Record<string, string>, runner: CommandRunner = new FakeRunner()): { ctx: ToolContext; fs: typeof NodeFs } {
  const vol = Volume.fromJSON(files, '/repo');
  vol.mkdirSync('/repo', { recursive: true });
  vol.mkdirSync('/outside', { recursive: true });
  vol.writeFileSync('/outside/secret.txt', 'TOP SECRET');
  const fs = createFsFromVolume(vol) as unknown as typeof NodeFs;
  return { ctx: { root: '/repo', fs, runner, commandTimeoutS: 30 }, fs };
}
