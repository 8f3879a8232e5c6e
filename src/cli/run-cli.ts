// Builds the commander program, runs it, and turns every failure into one line and an exit code.
import { forTerminal } from '../core/text/terminal.js';
import { Command, CommanderError } from 'commander';
import { errorMessage, isAciaError } from '../core/errors.js';
import { registerCommands } from './commands/index.js';
import { applyColourEnv } from './colour.js';
import { EXIT, exitCodeFor } from '../app/exit-codes.js';

export async function runCli(argv: string[], version: string): Promise<number> {
  const debug = argv.includes('--debug');
  applyColourEnv(process.env);
  const program = new Command('acia')
    .description('Run a team of LLM agents (PM, Dev, QA) on a git repository, with a verifiable ledger.')
    .version(version, '-V, --version')
    .option('--debug', 'print stack traces and internal detail')
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({
      writeErr: (s) => process.stderr.write(s),
      outputError: (s, write) => write(s.startsWith('error:') ? `acia: ${s}` : s),
    });
  program.addHelpText(
    'after',
    '\nExit codes: 0 succeeded, 1 task failed, 2 usage or configuration error,\n' +
      '            3 awaiting a human, 4 budget exhausted, 5 cancelled, 130 interrupted.\n\n' +
      'Examples:\n' +
      '  acia demo                                   a whole run offline, no API key\n' +
      '  acia run "add a --json flag to export"      in the current repository\n' +
      '  acia runs && acia show <runId>              what ran, and each step\n' +
      '  acia <command> --help                       each command\'s options and examples',
  );
  registerCommands(program);

  try {
    await program.parseAsync(argv, { from: 'user' });
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT.OK;
  } catch (e) {
    if (e instanceof CommanderError) {
      // help and version "errors" are successful exits; bare `acia` prints help as a usage error
      if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version' || e.code === 'commander.help') {
        return e.exitCode === 0 ? EXIT.OK : EXIT.USAGE;
      }
      return EXIT.USAGE;
    }
    if (isAciaError(e)) {
      // A message may quote a file name, a config value or model text: no terminal controls get through.
      process.stderr.write(`acia: ${forTerminal(e.message)}\n`);
      if (e.hint) process.stderr.write(`  ${forTerminal(e.hint)}\n`);
      if (debug && e.stack) process.stderr.write(`${e.stack}\n`);
      return exitCodeFor(e.code);
    }
    process.stderr.write(`acia: internal error: ${forTerminal(errorMessage(e))}\n`);
    if (debug && e instanceof Error && e.stack) process.stderr.write(`${e.stack}\n`);
    else process.stderr.write('  run again with --debug for a stack trace\n');
    return EXIT.FAILED;
  }
}
