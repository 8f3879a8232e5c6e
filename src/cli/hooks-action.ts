// The work of `acia hooks list` and `acia hooks test`, loaded only when they run.
import { readFileSync, realpathSync } from 'node:fs';
import chalk from 'chalk';
import { describeIgnored, loadConfig, userConfigPath } from '../core/config/load.js';
import { readRepoFile } from '../core/config/trust.js';
import { repoConfigPath } from '../core/contain/acia-state.js';
import { AciaError, errorMessage } from '../core/errors.js';
import { eventOf, resolveHooks, type ResolvedHook } from '../core/hooks/config.js';
import { DENY_EFFECT } from '../core/hooks/events.js';
import { PartialHookInput } from '../core/hooks/input.js';
import { matchingHooks, occurrenceOf } from '../core/hooks/occurrence.js';
import { runHook } from '../core/hooks/run-hook.js';
import { forTerminal } from '../core/text/terminal.js';
import { sandboxRunner } from '../app/sandbox-runner.js';
import { EXIT } from '../app/exit-codes.js';
import type { HooksListFlags, HooksTestFlags } from './commands/hooks.js';
import { repoOf } from './runs-action.js';

export async function hooksListCommand(flags: HooksListFlags): Promise<number> {
  const repo = await repoOf(flags.repo, true);
  const loaded = loadConfig({ repo, env: process.env, flags: {} });
  const hooks = resolveHooks(loaded.config.hooks);
  const blocked = loaded.ignored?.keys.includes('hooks') ? untrustedHooks(repo, describeIgnored(loaded.ignored)) : [];
  if (flags.json) {
    process.stdout.write(`${JSON.stringify({ hooks: hooks.map(listed), notApplied: blocked }, null, 2)}\n`);
    return EXIT.OK;
  }
  if (hooks.length === 0 && blocked.length === 0) {
    process.stdout.write(`no hooks configured; add "hooks" to ${userConfigPath(process.env)} or to the repository's .acia/config.json (docs/hooks.md)\n`);
    return EXIT.OK;
  }
  for (const h of hooks) {
    const on = h.claudeCode === null ? h.event : `${h.claudeCode} (= ${h.event}, Claude Code input)`;
    const where = h.sandbox ? 'sandboxed' : chalk.yellow('NOT sandboxed');
    process.stdout.write(`${chalk.bold(h.id)}  on ${on}${forTerminal(matchers(h))}  (${forTerminal(h.source ?? 'unknown source')}; ${where}; timeout ${h.timeoutMs / 1000}s)\n`);
    process.stdout.write(`  ${shown(h.command)}\n`);
    process.stdout.write(chalk.dim(`  a denial: ${DENY_EFFECT[h.event]}\n`));
  }
  for (const b of blocked) process.stdout.write(`${chalk.bold(forTerminal(b.name))}  on ${forTerminal(b.on)}  ${chalk.red(`not applied: ${forTerminal(b.reason)}`)}\n  ${shown(b.command)}\n`);
  return EXIT.OK;
}

export async function hooksTestCommand(event: string, flags: HooksTestFlags): Promise<number> {
  let point;
  try {
    point = eventOf(event);
  } catch {
    throw new AciaError('USAGE', `unknown event "${event}"; expected one of ${Object.keys(DENY_EFFECT).join(', ')} or a Claude Code event name`);
  }
  const doc = readDocument(flags.input);
  const repo = realpathSync(await repoOf(flags.repo, true));
  const loaded = loadConfig({ repo, env: process.env, flags: {} });
  const config = loaded.config;
  // As `acia run` says it: the repository's hooks are not among those tried until the file is trusted.
  if (loaded.ignored) process.stderr.write(`${chalk.yellow('warning:')} ${describeIgnored(loaded.ignored)}\n`);
  const all = resolveHooks(config.hooks).filter((h) => h.event === point);
  const occurrence = occurrenceOf(point, doc, repo);
  let chosen: ResolvedHook[];
  if (flags.hook !== undefined) {
    chosen = all.filter((h) => h.id === flags.hook);
    if (chosen.length === 0) throw new AciaError('USAGE', `no ${point} hook named "${flags.hook}"; configured for ${point}: ${all.map((h) => h.id).join(', ') || 'none'}`);
  } else {
    chosen = matchingHooks(all, occurrence);
    if (chosen.length === 0) {
      process.stderr.write(`no ${point} hook applies to this document (${all.length} configured for ${point}; acia hooks list shows them)\n`);
      return EXIT.OK;
    }
  }
  // As in a run: the repository is the worktree, commands in the sandbox (its limits too) unless the config turns it off.
  const runner = sandboxRunner(config, process.env, config.sandbox === 'off' ? 'off' : 'bwrap', repo);
  const results = [];
  for (const hook of chosen) {
    const r = await runHook(hook, occurrence, { runner, writable: [repo], parentEnv: process.env });
    const matched = matchingHooks([hook], occurrence).length === 1;
    results.push({ hook: hook.id, matched, ...r.verdict, exitCode: r.exec.exitCode, timedOut: r.exec.timedOut, durationMs: r.exec.durationMs, stdout: r.exec.stdout, stderr: r.exec.stderr });
    if (!flags.json) {
      const verdict = r.verdict.allow ? chalk.green('allow') : chalk.red('deny');
      const how = r.exec.timedOut ? 'timed out' : r.exec.exitCode === null ? `killed by ${r.exec.signal ?? 'a signal'}` : `exit ${r.exec.exitCode}`;
      process.stdout.write(`${chalk.bold(hook.id)}: ${verdict}  (${how}, ${(r.exec.durationMs / 1000).toFixed(2)}s)${matched ? '' : chalk.dim('  [its matchers would not select this document]')}\n`);
      // A hook's output is often the repository's (a linter's): shown only as text, never as terminal controls.
      if (!r.verdict.allow) process.stdout.write(`  reason: ${forTerminal(r.verdict.reason, { newlines: true }).split('\n').join('\n          ')}\n`);
      else if (r.verdict.context !== undefined) process.stdout.write(`  context for the agent: ${forTerminal(r.verdict.context)}\n`);
    }
    // As in a run, the first denial ends the chain.
    if (!r.verdict.allow) break;
  }
  if (flags.json) process.stdout.write(`${JSON.stringify({ event: point, results }, null, 2)}\n`);
  return results.every((r) => r.allow) ? EXIT.OK : EXIT.FAILED;
}

function readDocument(file: string): PartialHookInput {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new AciaError('FILE_NOT_FOUND', `cannot read --input ${file}: ${errorMessage(e)}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new AciaError('JSON_PARSE', `--input ${file} is not valid JSON: ${errorMessage(e)}`);
  }
  const parsed = PartialHookInput.safeParse(value);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    throw new AciaError('INPUT_INVALID', `--input ${file}: ${first?.path.join('.') || '(root)'}: ${first?.message ?? 'invalid'}`, { hint: 'the document is described by schemas/hook-input.schema.json' });
  }
  return parsed.data;
}

/**
 * A command as configured, for the user to review before trusting it: a repository's file can hold escape
 * sequences that would hide part of it, so controls are dropped and a multi-line command stays visibly so.
 */
function shown(command: string): string {
  return forTerminal(command, { newlines: true }).split('\n').join('\n    ');
}

function matchers(h: ResolvedHook): string {
  const parts = [h.kind.length > 0 ? `kind ${h.kind.join('|')}` : '', h.tool.length > 0 ? `tool ${h.tool.join('|')}` : '', h.paths.length > 0 ? `paths ${h.paths.join('|')}` : ''].filter((p) => p !== '');
  return parts.length === 0 ? '' : ` [${parts.join('; ')}]`;
}

function listed(h: ResolvedHook) {
  return { name: h.id, event: h.event, claudeCode: h.claudeCode, command: h.command, kind: h.kind, tool: h.tool, paths: h.paths, timeoutS: h.timeoutMs / 1000, sandbox: h.sandbox, source: h.source, onDeny: DENY_EFFECT[h.event] };
}

/** The hooks of a repository file that is not trusted (yet): listed so the user sees what trusting it adds. */
function untrustedHooks(repo: string, reason: string): { name: string; on: string; command: string; reason: string }[] {
  try {
    const bytes = readRepoFile(repo, repoConfigPath(repo));
    const hooks = bytes === null ? [] : (JSON.parse(bytes.toString('utf8')) as { hooks?: unknown }).hooks;
    if (!Array.isArray(hooks)) return [];
    return hooks.map((h: { name?: unknown; on?: unknown; command?: unknown }, i) => ({
      name: typeof h.name === 'string' ? h.name : `#${i + 1}`,
      on: String(h.on),
      command: String(h.command),
      reason,
    }));
  } catch {
    return [];
  }
}

export type RepoHooks = { hooks: { name: string; on: string; command: string }[] } | { problem: string };

/** The hooks the repository's (trusted) .acia/config.json adds, as a run would load them (`acia trust`). */
export function repoHooks(repo: string): RepoHooks {
  try {
    const { config } = loadConfig({ repo, env: process.env, flags: {} });
    // The repository's own file never leaves the sandbox (loadConfig refuses it): no hook here runs outside.
    return { hooks: resolveHooks(config.hooks).filter((h) => !h.fromUser).map((h) => ({ name: h.id, on: h.claudeCode ?? h.event, command: h.command })) };
  } catch (e) {
    // Trust is recorded all the same; a run (or `acia config`) would stop at the same problem.
    return { problem: errorMessage(e) };
  }
}

/** What `acia trust` says of them: the commands the user just consented to, as text. */
export function repoHookLines(r: RepoHooks): string[] {
  if ('problem' in r) return [`warning: ${forTerminal(r.problem)}`];
  return r.hooks.map((h) => `  hook ${forTerminal(h.name)} runs at ${h.on}, sandboxed like the agents' commands: ${forTerminal(h.command)}`);
}
