// Finds a run's role files and skills: the user's own (`$XDG_CONFIG_HOME/acia/roles/*.md`,
// `.../acia/skills/<name>/SKILL.md`) and the repository's (`.acia/roles/*.md`, `.claude/agents/*.md`,
// `.codex/agents/*.toml`, `.agents/skills/<name>/SKILL.md`, `.claude/skills/<name>/SKILL.md`). A file the
// repository ships is someone else's prompt, tools, model and budget: it is used only once the user has
// trusted its exact content (`acia trust`, the same step as the repository's config), and read without
// following a link. A repository role overrides a user role of the same name.
import { readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { checkRealDir, readRegularFile } from '../core/contain/no-follow.js';
import { trustStateOf } from '../core/config/trust.js';
import { userConfigPath } from '../core/config/load.js';
import { parseAciaRole, parseClaudeAgent, parseCodexAgent, parseSkill, type RoleDef, type SkillDef } from '../agents/roles/role-file.js';
import type { RoleCatalog } from '../team/roles.js';

type Kind = 'acia' | 'claude' | 'codex' | 'skill';

const REPO_PLACES: { dir: string; kind: Kind }[] = [
  { dir: '.acia/roles', kind: 'acia' },
  { dir: '.claude/agents', kind: 'claude' },
  { dir: '.codex/agents', kind: 'codex' },
  { dir: '.agents/skills', kind: 'skill' },
  { dir: '.claude/skills', kind: 'skill' },
];

export interface FoundRoles {
  catalog: RoleCatalog;
  /** Repository files left out because they are not trusted as they are now, relative to the repository. */
  ignored: string[];
}

/** The role and skill files a repository ships, relative to its root (what `acia trust` records). */
export function repoRoleFiles(repo: string): string[] {
  return REPO_PLACES.flatMap((p) => filesIn(repo, join(repo, p.dir), p.kind)).map((f) => relative(repo, f));
}

/** Every role and skill for a run in `repo`, and the repository's files that were ignored until trusted. */
export function findRoles(repo: string, env: NodeJS.ProcessEnv): FoundRoles {
  const roles = new Map<string, { def: RoleDef; source: string }>();
  const skills = new Map<string, { def: SkillDef; source: string }>();
  const ignored: string[] = [];
  const add = (kind: Kind, file: string, text: string, source: string) => {
    if (kind === 'skill') {
      const def = parseSkill(text, source);
      skills.set(def.name, { def, source });
      return;
    }
    const def = kind === 'acia' ? parseAciaRole(text, source) : kind === 'claude' ? parseClaudeAgent(text, source) : parseCodexAgent(text, source);
    roles.set(def.name, { def, source });
  };
  const userDir = dirname(userConfigPath(env));
  for (const p of [{ dir: 'roles', kind: 'acia' as const }, { dir: 'skills', kind: 'skill' as const }]) {
    for (const file of filesIn(userDir, join(userDir, p.dir), p.kind)) {
      const bytes = readRegularFile(userDir, file);
      if (bytes !== null) add(p.kind, file, bytes.toString('utf8'), file);
    }
  }
  for (const p of REPO_PLACES) {
    for (const file of filesIn(repo, join(repo, p.dir), p.kind)) {
      const bytes = readRegularFile(repo, file);
      if (bytes === null) continue;
      const rel = relative(repo, file);
      if (trustStateOf(file, bytes, env) !== 'trusted') {
        ignored.push(rel);
        continue;
      }
      add(p.kind, file, bytes.toString('utf8'), rel);
    }
  }
  return { catalog: { roles: [...roles.values()], skills: [...skills.values()] }, ignored };
}

/** One line saying which repository role files were ignored and how to use them. */
export function describeIgnoredRoles(ignored: readonly string[]): string {
  const shown = ignored.slice(0, 5).join(', ') + (ignored.length > 5 ? ` (+${ignored.length - 5} more)` : '');
  return `ignored the repository's role files ${shown}: not trusted as they are now; review them, then run \`acia trust\` to use them`;
}

/** Role files (`*.md`, `*.toml`) or skill files (`<name>/SKILL.md`) in `dir`, sorted; none when it is not a real directory. */
function filesIn(root: string, dir: string, kind: Kind): string[] {
  // A link or special file where a directory or file should be is not followed: that entry is left out.
  const real = (d: string) => {
    try {
      return checkRealDir(root, d);
    } catch {
      return false;
    }
  };
  if (!real(dir)) return [];
  const names = readdirSync(dir).sort();
  if (kind === 'skill') return names.map((n) => join(dir, n, 'SKILL.md')).filter((f) => real(dirname(f)) && readable(root, f));
  const ext = kind === 'codex' ? '.toml' : '.md';
  return names.filter((n) => n.endsWith(ext)).map((n) => join(dir, n)).filter((f) => readable(root, f));
}

function readable(root: string, file: string): boolean {
  try {
    return readRegularFile(root, file, 1024 * 1024) !== null;
  } catch {
    return false;
  }
}
