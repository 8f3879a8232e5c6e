// The command table. Each command module registers its options; its work is imported only when it runs.
import type { Command } from 'commander';
import { register as run } from './run.js';
import { register as demo } from './demo.js';
import { register as plan } from './plan.js';
import { register as replay } from './replay.js';
import { register as runs } from './runs.js';
import { register as validate } from './validate.js';
import { register as tool } from './tool.js';
import { register as verify } from './verify.js';
import { register as bundle } from './bundle.js';
import { register as wiki } from './wiki.js';
import { register as memory } from './memory.js';
import { register as config } from './config.js';
import { register as init } from './init.js';
import { register as mcp } from './mcp.js';
import { register as trust } from './trust.js';
import { register as acp } from './acp.js';
import { register as fleet } from './fleet.js';
import { register as evalCmd } from './eval.js';
import { register as clean } from './clean.js';
import { register as cancel } from './cancel.js';
import { register as logs } from './logs.js';
import { register as ui } from './ui.js';
import { register as say } from './say.js';
import { register as hooks } from './hooks.js';

type Register = (program: Command) => void;

const registrations: Register[] = [run, plan, demo, runs, logs, say, cancel, replay, validate, verify, tool, bundle, wiki, memory, init, config, trust, mcp, hooks, acp, fleet, evalCmd, clean, ui];

export function registerCommands(program: Command): void {
  for (const register of registrations) register(program);
}
