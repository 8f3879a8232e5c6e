// `acia trust`: the user's explicit consent to the repository's own ACIA settings (.acia/config.json,
// .mcp.json). What is trusted is the files' exact content, recorded in the user's state directory; any
// later change to a file needs `acia trust` again. `--revoke` forgets it.
import type { Command } from 'commander';

interface TrustOptions {
  repo: string;
  revoke?: boolean;
  json?: boolean;
}

export function register(program: Command): void {
  program
    .command('trust')
    .description("trust the repository's .acia/config.json, .mcp.json and role files as they are now (model, endpoints, sandbox, hosts, budget, commands, hooks, MCP servers, roles)")
    .option('--repo <dir>', 'the repository (any directory inside it)', '.')
    .option('--revoke', 'forget the trust given to this repository')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      '\nUntil trusted, ACIA applies only protectedPaths, maxIterations, parallel, commandTimeoutS,\nmaxTokensPerCall and memoryLessons from a repository file, and says which keys it ignored.\nReview the files first: a trusted file can send your API key to its endpoint and turn the sandbox off.\n\nExamples:\n  acia trust\n  acia trust --repo ~/src/app --revoke',
    )
    .action(async (opts: TrustOptions) => {
      const nodePath = await import('node:path');
      const gitModule = await import('../../team/git.js');
      const { systemClock } = await import('../../core/acm/ids.js');
      const trust = await import('../../core/config/trust.js');
      const repo = await gitModule.repoRoot(new gitModule.Git(systemClock), nodePath.resolve(opts.repo));
      // Role files and skills the repository ships are trusted (and revoked) with its config, one by one.
      const { repoRoleFiles } = await import('../../app/role-catalog.js');
      const files = [...trust.REPO_TRUST_FILES, ...repoRoleFiles(repo)];
      if (opts.revoke) {
        const gone = trust.revokeRepoFiles(repo, process.env, files);
        if (opts.json) process.stdout.write(`${JSON.stringify({ revoked: gone })}\n`);
        else process.stdout.write(gone.length === 0 ? `nothing in ${repo} was trusted\n` : gone.map((f) => `no longer trusted: ${f}\n`).join(''));
        return;
      }
      const done = trust.trustRepoFiles(repo, process.env, files);
      const variables = await mcpVariables(repo);
      const { repoHooks, repoHookLines } = await import('../hooks-action.js');
      const hooks = repoHooks(repo);
      if (opts.json) {
        process.stdout.write(`${JSON.stringify({ trusted: done, store: trust.trustStorePath(process.env), mcpVariables: variables, hooks })}\n`);
        return;
      }
      if (done.length === 0) {
        process.stdout.write(`${repo} has no ${trust.REPO_TRUST_FILES.join(' or ')} and no role files; nothing to trust\n`);
        return;
      }
      for (const d of done) process.stdout.write(`trusted ${d.file} (sha256 ${d.sha256.slice(0, 16)}…)\n`);
      // Which of the user's variables each server of .mcp.json receives; the rest stay literal text.
      for (const v of variables) {
        const got = v.received.filter((n) => n !== 'ACIA_WORKTREE');
        process.stdout.write(`  MCP server ${v.server} receives ${got.length === 0 ? 'none of your variables' : got.join(', ')}${v.literal.length > 0 ? `; left literal (not in mcpEnvAllow): ${v.literal.join(', ')}` : ''}\n`);
      }
      // The commands the file now runs at the team's points: what the user just consented to, spelled out.
      for (const line of repoHookLines(hooks)) process.stdout.write(`${line}\n`);
      process.stdout.write(`recorded in ${trust.trustStorePath(process.env)}; a change to a file needs \`acia trust\` again\n`);
    });
}

/** The `${VAR}`s of the repository's .mcp.json servers, split by the user's mcpEnvAllow. */
async function mcpVariables(repo: string): Promise<{ server: string; received: string[]; literal: string[] }[]> {
  const { loadConfig } = await import('../../core/config/load.js');
  const { configuredMcpServers } = await import('../../app/mcp-trust.js');
  const { variablesOf } = await import('../../core/tools/mcp/config.js');
  // The user's config alone decides the allow-list; the repository's own file has no say in it.
  try {
    const { config } = loadConfig({ repo: null, env: process.env, flags: {} });
    return configuredMcpServers(repo, config, process.env, () => true)
      .servers.filter((s) => s.fromRepo)
      .map(variablesOf);
  } catch {
    // An invalid .mcp.json is reported when a run or `acia mcp list` reads it; trust is recorded all the same.
    return [];
  }
}
