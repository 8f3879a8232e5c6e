// Which tools each role gets: PM reads, QA reads + tests + edits, Dev everything.
import { editFile } from './edit-file.js';
import { gitDiff, gitStatus } from './git-tools.js';
import { listDir } from './list-dir.js';
import { readFile } from './read-file.js';
import { runCommand } from './run-command.js';
import { runSetup } from './run-setup.js';
import { runTests } from './run-tests.js';
import { search } from './search.js';
import type { Tool } from './types.js';
import { writeFile } from './write-file.js';

export const readOnlyTools: readonly Tool[] = [readFile, listDir, search] as Tool[];
export const qaTools: readonly Tool[] = [...readOnlyTools, gitStatus, gitDiff, runTests, runCommand, writeFile, editFile] as Tool[];
export const devTools: readonly Tool[] = [readFile, writeFile, editFile, listDir, search, runCommand, runTests, gitStatus, gitDiff] as Tool[];
/** Every built-in tool a run provides: run_setup is the team's own (config `setup`); no agent definition names it. */
export const builtinTools: readonly Tool[] = [...devTools, runSetup] as Tool[];

export { editFile, gitDiff, gitStatus, listDir, readFile, runCommand, runTests, search, writeFile };
