// The roles of a run: the built-in PM, Dev and QA, and the ones the user's (or a trusted repository's)
// role files define, each with its prompt, tools, model, budget and turn limit. A session records them
// once (ROLES_LOADED, each definition a blob) and from then on the run uses the recorded definitions:
// a resume or a replay runs with the roles the run started with, whatever the files say now.
import { z } from 'zod';
import { canonicalJson } from '../core/acm/canonical-json.js';
import type { PlanSet } from '../core/acm/contracts.js';
import { defineTool } from '../core/tools/define-tool.js';
import type { Tool } from '../core/tools/types.js';
import { builtinRole } from '../agents/roles/builtin.js';
import { roleDigest, type RoleBase, type RoleDef, type SkillDef } from '../agents/roles/role-file.js';
import type { ModelDeps } from './deps.js';
import type { RunContext } from './run-context.js';

/** What the app found: role files and skills, each with where it came from. */
export interface RoleCatalog {
  roles: { def: RoleDef; source: string }[];
  skills: { def: SkillDef; source: string }[];
}

export interface RunRole {
  def: RoleDef;
  digest: string;
  source: string;
  /** The model its agents call (the run's, unless the role or `--model <role>=` names another). */
  model: ModelDeps;
}

export interface RunRoles {
  /** Whether the run records roles (ROLES_LOADED, a role on each task): runs made before role files did not. */
  recorded: boolean;
  byName: Map<string, RunRole>;
  skills: Map<string, { def: SkillDef; digest: string; source: string }>;
}

const BASES: RoleBase[] = ['pm', 'dev', 'qa'];

/** The built-in roles with the run's model: what a run that records no roles uses. */
export function builtinRoles(model: ModelDeps): RunRoles {
  const byName = new Map<string, RunRole>();
  for (const b of BASES) {
    const def = builtinRole(b);
    byName.set(b, { def, digest: roleDigest(def), source: `built-in ${b}.md`, model });
  }
  return { recorded: false, byName, skills: new Map() };
}

/**
 * The session's roles: those the run recorded (a resumed or replayed run), or, for a new run given a role
 * catalog, the built-ins overridden by the catalog's, recorded now. Without a catalog nothing is recorded.
 */
export async function loadRunRoles(ctx: RunContext): Promise<void> {
  const recorded = ctx.state.roles;
  if (recorded !== null) {
    ctx.roles = await rolesFromLedger(ctx, recorded);
    return;
  }
  const catalog = ctx.deps.roles;
  if (!catalog) return;
  const roles = builtinRoles(ctx.deps.model);
  roles.recorded = true;
  for (const r of catalog.roles) roles.byName.set(r.def.name, { def: r.def, digest: roleDigest(r.def), source: r.source, model: ctx.deps.model });
  for (const s of catalog.skills) roles.skills.set(s.def.name, { def: s.def, digest: roleDigest(s.def), source: s.source });
  const given = ctx.deps.config.roleModels;
  const entries = [];
  for (const role of roles.byName.values()) {
    const spec = given[role.def.name] ?? role.def.model;
    if (spec !== null && spec !== ctx.deps.model.spec) role.model = await modelFor(ctx, spec, null);
    entries.push({
      name: role.def.name,
      base: role.def.base,
      format: role.def.format,
      source: role.source,
      digest: role.digest,
      ref: await ctx.rec.blob(canonicalJson(role.def)),
      ...(role.model === ctx.deps.model ? {} : { model: { spec: role.model.spec, id: role.model.id } }),
    });
  }
  const skills = [];
  for (const s of roles.skills.values()) skills.push({ name: s.def.name, source: s.source, digest: s.digest, ref: await ctx.rec.blob(canonicalJson(s.def)) });
  await ctx.rec.record('team', 'ROLES_LOADED', { roles: entries, skills });
  ctx.roles = roles;
}

async function rolesFromLedger(ctx: RunContext, recorded: NonNullable<RunContext['state']['roles']>): Promise<RunRoles> {
  const read = async (ref: string): Promise<unknown> => JSON.parse((await ctx.rec.ledger.getBlob(ref)).toString('utf8'));
  const roles: RunRoles = { recorded: true, byName: new Map(), skills: new Map() };
  for (const r of recorded.roles) {
    const def = (await read(r.ref)) as RoleDef;
    const model = r.model ? await modelFor(ctx, r.model.spec, r.model.id) : ctx.deps.model;
    roles.byName.set(r.name, { def, digest: r.digest, source: r.source, model });
  }
  for (const s of recorded.skills) roles.skills.set(s.name, { def: (await read(s.ref)) as SkillDef, digest: s.digest, source: s.source });
  return roles;
}

async function modelFor(ctx: RunContext, spec: string, id: string | null): Promise<ModelDeps> {
  const make = ctx.deps.model.forSpec;
  if (!make) return ctx.deps.model;
  return make(spec, id);
}

/** The role a task runs as: the one its input names, else its capability's base role. */
export function roleNameOf(capability: string, input: unknown): string {
  const named = (input as { role?: unknown } | null)?.role;
  if (typeof named === 'string' && named !== '') return named;
  return capability.startsWith('qa.') ? 'qa' : capability.startsWith('pm.') ? 'pm' : 'dev';
}

export function roleOf(ctx: RunContext, name: string): RunRole {
  const role = ctx.roles.byName.get(name) ?? ctx.roles.byName.get(name === 'qa' || name === 'pm' ? name : 'dev');
  if (!role) throw new Error(`no role ${name}`);
  // A role on the run's own model uses this session's model deps (a fleet worker's own client, metered
  // there), not those of the session that loaded the roles. A role's own model never has the run's spec.
  if (role.model !== ctx.deps.model && role.model.spec === ctx.deps.model.spec) return { ...role, model: ctx.deps.model };
  return role;
}

/** A task that names a role the run does not have, or one of another kind than its capability, is a plan problem. */
export function roleProblems(ctx: RunContext, planSet: PlanSet): { path: string; message: string }[] {
  const out: { path: string; message: string }[] = [];
  planSet.plans.forEach((plan, p) =>
    plan.tasks.forEach((task, t) => {
      const named = (task.input as { role?: unknown }).role;
      if (named === undefined) return;
      const path = `$.plans[${p}].tasks[${t}].input.role`;
      const want: RoleBase | null = task.capability.startsWith('dev.') ? 'dev' : task.capability.startsWith('qa.') ? 'qa' : null;
      const role = typeof named === 'string' ? ctx.roles.byName.get(named) : undefined;
      const known = [...ctx.roles.byName.values()].filter((r) => r.def.base === want).map((r) => r.def.name);
      if (want === null) out.push({ path, message: `a ${task.capability} task runs no agent role` });
      else if (!role) out.push({ path, message: `${JSON.stringify(named)} is not a role of this run (${want} roles: ${known.join(', ')})` });
      else if (role.def.base !== want) out.push({ path, message: `${role.def.name} is a ${role.def.base} role; a ${task.capability} task needs a ${want} role (${known.join(', ')})` });
    }),
  );
  return out;
}

/** The roles a plan may name, for the PM's prompt (empty when only the built-ins exist). */
export function rolesForPlanner(ctx: RunContext): string {
  const extra = [...ctx.roles.byName.values()].filter((r) => !BASES.includes(r.def.name as RoleBase));
  if (extra.length === 0) return '';
  const lines = extra.map((r) => `  - ${r.def.name} (${r.def.base} tasks): ${r.def.description}`);
  return `\n\nRoles a task may name in input.role (its agent then works as that role; default: dev for dev.* tasks, qa for qa.* tasks):\n${lines.join('\n')}`;
}

/** The skills a role's agent is told about (name and description): it loads one with `load_skill` when it applies. */
export function skillsNotice(ctx: RunContext, role: RunRole): string {
  const preloaded = role.def.skills.flatMap((n) => {
    const s = ctx.roles.skills.get(n);
    return s ? [`\n\n## Skill: ${s.def.name}\n${s.def.body}`] : [];
  });
  const listed = [...ctx.roles.skills.values()].filter((s) => !role.def.skills.includes(s.def.name));
  const list = listed.length === 0 ? '' : `\n\nSkills you can load with the \`load_skill\` tool when one applies to your task (its instructions come back as the result):\n${listed.map((s) => `- ${s.def.name}: ${s.def.description}`).join('\n')}`;
  return preloaded.join('') + list;
}

/** `load_skill`: a skill's body, when the agent decides it needs it (the description alone is in its prompt). */
export function skillTool(ctx: RunContext): Tool | null {
  if (ctx.roles.skills.size === 0) return null;
  return defineTool({
    name: 'load_skill',
    description: 'Load the instructions of one of the skills listed in your prompt, by name.',
    input: z.strictObject({ name: z.string().min(1) }),
    output: z.object({ skill: z.string(), digest: z.string() }),
    readOnly: true,
    run: (input) => {
      const skill = ctx.roles.skills.get(input.name);
      if (!skill) return Promise.resolve({ ok: false, forModel: `No skill ${input.name}. Skills: ${[...ctx.roles.skills.keys()].join(', ')}`, forDisplay: `no skill ${input.name}` });
      return Promise.resolve({ ok: true, forModel: `# Skill: ${skill.def.name}\n${skill.def.body}`, forDisplay: `loaded skill ${skill.def.name}`, data: { skill: skill.def.name, digest: skill.digest } });
    },
  });
}
