// Which directories are demo repos, and of which scenario. Kept in the user's state directory, not in
// the repo: a cloned repository must not be able to declare itself a demo and so pick the model.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

function markerFile(repo: string, env: NodeJS.ProcessEnv): string {
  const base = env.XDG_STATE_HOME && env.XDG_STATE_HOME !== '' ? env.XDG_STATE_HOME : join(env.HOME ?? homedir(), '.local', 'state');
  let real = repo;
  try {
    real = realpathSync(repo);
  } catch {
    // A repo that is gone has no marker worth reading; the hash of the path as given finds nothing.
  }
  return join(base, 'acia', 'demos', `${createHash('sha256').update(real).digest('hex').slice(0, 32)}.json`);
}

export function markDemoRepo(repo: string, scenario: string, env: NodeJS.ProcessEnv = process.env): void {
  const file = markerFile(repo, env);
  try {
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(file, `${JSON.stringify({ repo: realpathSync(repo), scenario })}\n`);
  } catch {
    // Without the marker, resuming this demo needs --model; the demo itself runs the same.
  }
}

/** The scenario a demo repo was created for, or null when `repo` is not a demo repo. */
export function demoScenarioOf(repo: string, env: NodeJS.ProcessEnv = process.env): string | null {
  try {
    const m = JSON.parse(readFileSync(markerFile(repo, env), 'utf8')) as { repo?: unknown; scenario?: unknown };
    if (m.repo !== realpathSync(repo) || typeof m.scenario !== 'string') return null;
    return m.scenario;
  } catch {
    return null;
  }
}
