// The command runner for one worktree, as a run makes it: the chosen sandbox with the configured hosts and
// limits. `acia run` and `acia hooks test` both make theirs here, so a hook tried by hand runs as in a run.
import type { Config } from '../core/config/schema.js';
import { createRunner } from '../core/sandbox/detect.js';
import type { CommandRunner } from '../core/tools/types.js';

export function sandboxRunner(config: Config, env: NodeJS.ProcessEnv, mode: 'bwrap' | 'off', root: string): CommandRunner {
  const { memoryMb, tmpMb } = config.sandboxLimits;
  return createRunner({ mode, root, allowedHosts: config.allowedHosts, parentEnv: env, limits: { maxMemoryBytes: memoryMb * 1024 * 1024, tmpBytes: tmpMb * 1024 * 1024 } });
}
