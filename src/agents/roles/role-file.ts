// Roles as files. ACIA's own format is markdown with YAML frontmatter (name, description, base, tools,
// model, budget, maxTurns, skills) whose body is the role's prompt; Claude Code's agent files
// (`.claude/agents/*.md`) and Codex's agent TOML (`.codex/agents/*.toml`) are read into the same shape,
// and Agent Skills (`SKILL.md`) into skills an agent sees by description and loads when it uses one.
// Parsing only: where files are found, and whether the repository's may be used, is the app's to say.
import { parse as parseToml } from 'smol-toml';
import { z } from 'zod';
import { AciaError } from '../../core/errors.js';
import { sha256Hex, canonicalJson } from '../../core/acm/canonical-json.js';
import { splitFrontmatter } from './frontmatter.js';

export const RoleBase = z.enum(['pm', 'dev', 'qa']);
export type RoleBase = z.infer<typeof RoleBase>;
export type RoleFormat = 'builtin' | 'acia' | 'claude' | 'codex';

const RoleName = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, 'expected a lower-case name (letters, digits, - and _)');
const ModelSpecText = z.string().min(1).max(300);

/** A role as every format reads into it; `null` means "as the base role has it". */
export interface RoleDef {
  name: string;
  /** Which agent contract it runs under: the PM's plans, a Dev's change, or QA's verdict. */
  base: RoleBase;
  description: string;
  /** The role's own prompt (for a built-in role, its template). */
  prompt: string;
  /** Built-in tool names and MCP tool names (`mcp__<server>__<tool>`, or `mcp__<server>` for all of one server). */
  tools: string[] | null;
  /** `anthropic:<id>`, `openai:<id>`, `scripted:<file>`... */
  model: string | null;
  budget: { maxCostUsd?: number | undefined; maxTokens?: number | undefined } | null;
  maxTurns: number | null;
  /** Skills whose whole body the role starts with (Claude Code's `skills:`). */
  skills: string[];
  format: RoleFormat;
}

export interface SkillDef {
  name: string;
  description: string;
  /** Loaded into the conversation only when the agent asks for the skill. */
  body: string;
}

/** The sha256 a task records for the role it ran with: over the definition, not the file's bytes. */
export function roleDigest(def: RoleDef | SkillDef): string {
  return sha256Hex(canonicalJson(def));
}

const AciaFront = z.strictObject({
  name: RoleName,
  description: z.string().min(1),
  base: RoleBase.optional(),
  tools: z.array(z.string().min(1)).optional(),
  model: ModelSpecText.optional(),
  budget: z.strictObject({ maxCostUsd: z.number().positive().optional(), maxTokens: z.number().int().positive().optional() }).optional(),
  maxTurns: z.number().int().min(1).max(200).optional(),
  skills: z.array(z.string()).optional(),
});

/** ACIA's own role file. `fallbackName` (the file's name) is used when the frontmatter gives none. */
export function parseAciaRole(text: string, where: string, format: 'acia' | 'builtin' = 'acia'): RoleDef {
  const { front, body } = splitFrontmatter(text, where);
  const parsed = AciaFront.safeParse(front);
  if (!parsed.success) throw invalid(where, parsed.error);
  const f = parsed.data;
  return {
    name: f.name,
    base: f.base ?? (f.name === 'pm' || f.name === 'qa' ? f.name : 'dev'),
    description: f.description,
    prompt: body.trim(),
    tools: f.tools ?? null,
    model: f.model ?? null,
    budget: f.budget ?? null,
    maxTurns: f.maxTurns ?? null,
    skills: f.skills ?? [],
    format,
  };
}

/** Claude Code's tool names as ACIA's built-in tools (unknown ones are left out: ACIA has no such tool). */
const CLAUDE_TOOLS: Record<string, string[]> = {
  Read: ['read_file'],
  Write: ['write_file'],
  Edit: ['edit_file'],
  MultiEdit: ['edit_file'],
  Glob: ['list_dir'],
  LS: ['list_dir'],
  Grep: ['search'],
  Bash: ['run_command', 'run_tests'],
};
const CLAUDE_MODELS: Record<string, string> = { sonnet: 'anthropic:claude-sonnet-5-5', opus: 'anthropic:claude-opus-5-5', haiku: 'anthropic:claude-haiku-4-5' };

const ClaudeFront = z.looseObject({
  name: RoleName,
  description: z.string().min(1),
  tools: z.union([z.string(), z.array(z.string())]).optional(),
  disallowedTools: z.union([z.string(), z.array(z.string())]).optional(),
  model: z.string().optional(),
  maxTurns: z.number().int().min(1).max(200).optional(),
  skills: z.array(z.string()).optional(),
});

/** A Claude Code subagent file: frontmatter name, description, tools, model; the body is its prompt. */
export function parseClaudeAgent(text: string, where: string): RoleDef {
  const { front, body } = splitFrontmatter(text, where);
  const parsed = ClaudeFront.safeParse(front);
  if (!parsed.success) throw invalid(where, parsed.error);
  const f = parsed.data;
  const list = (v: string | string[] | undefined) => (v === undefined ? null : (Array.isArray(v) ? v : v.split(',')).map((s) => s.trim()).filter((s) => s !== ''));
  const denied = new Set(list(f.disallowedTools)?.flatMap(claudeTool) ?? []);
  const tools = list(f.tools)?.flatMap(claudeTool).filter((t) => !denied.has(t)) ?? null;
  return {
    name: f.name,
    base: 'dev',
    description: f.description,
    prompt: body.trim(),
    tools: tools === null ? null : [...new Set(tools)],
    model: f.model === undefined || f.model === 'inherit' ? null : (CLAUDE_MODELS[f.model] ?? withProvider(f.model, 'anthropic')),
    budget: null,
    maxTurns: f.maxTurns ?? null,
    skills: f.skills ?? [],
    format: 'claude',
  };
}

function claudeTool(name: string): string[] {
  if (name.startsWith('mcp__')) return [name];
  return CLAUDE_TOOLS[name.replace(/\(.*\)$/, '')] ?? [];
}

const CodexAgent = z.looseObject({
  name: RoleName,
  description: z.string().min(1),
  developer_instructions: z.string().min(1),
  model: z.string().optional(),
  sandbox_mode: z.enum(['read-only', 'workspace-write', 'danger-full-access']).optional(),
});

/** A Codex custom agent (TOML): name, description, developer_instructions, model; read-only sandbox mode keeps it to reading tools. */
export function parseCodexAgent(text: string, where: string): RoleDef {
  let value: unknown;
  try {
    value = parseToml(text);
  } catch (e) {
    throw new AciaError('CONFIG_INVALID', `${where} is not valid TOML: ${(e as Error).message.split('\n')[0] ?? ''}`);
  }
  const parsed = CodexAgent.safeParse(value);
  if (!parsed.success) throw invalid(where, parsed.error);
  const f = parsed.data;
  return {
    name: f.name,
    base: 'dev',
    description: f.description,
    prompt: f.developer_instructions.trim(),
    tools: f.sandbox_mode === 'read-only' ? ['read_file', 'list_dir', 'search', 'git_status', 'git_diff'] : null,
    model: f.model === undefined ? null : withProvider(f.model, 'openai'),
    budget: null,
    maxTurns: null,
    skills: [],
    format: 'codex',
  };
}

const SkillFront = z.looseObject({ name: RoleName, description: z.string().min(1).max(1024) });

/** An Agent Skill: `SKILL.md` with frontmatter name and description; the body is what loading it gives. */
export function parseSkill(text: string, where: string): SkillDef {
  const { front, body } = splitFrontmatter(text, where);
  const parsed = SkillFront.safeParse(front);
  if (!parsed.success) throw invalid(where, parsed.error);
  return { name: parsed.data.name, description: parsed.data.description, body: body.trim() };
}

/** A model named without a provider takes the one its format implies. */
function withProvider(model: string, provider: 'anthropic' | 'openai'): string {
  return /^(anthropic|openai|scripted|chaos):/.test(model) ? model : `${provider}:${model}`;
}

function invalid(where: string, error: z.ZodError): AciaError {
  const first = error.issues[0];
  const path = first?.path.join('.') ?? '';
  return new AciaError('CONFIG_INVALID', `${where}: ${path === '' ? '' : `"${path}": `}${first?.message ?? 'invalid'}`);
}
