// The built-in PM, Dev and QA roles are role files like any other (src/agents/prompts/{pm,dev,qa}.md):
// their frontmatter holds the tools and turn limit, their body the prompt template.
import { loadPromptFile, loadTemplate } from '../prompt-template.js';
import { parseAciaRole, type RoleBase, type RoleDef } from './role-file.js';

const cache = new Map<RoleBase, RoleDef>();

export function builtinRole(name: RoleBase): RoleDef {
  let def = cache.get(name);
  if (!def) {
    const file = `${name}.md`;
    def = { ...parseAciaRole(loadPromptFile(file), `built-in role ${file}`, 'builtin'), prompt: loadTemplate(file) };
    cache.set(name, def);
  }
  return def;
}

/** The tools and turn limit a built-in role's file gives its agent definition. */
export function builtinSettings(name: RoleBase): { tools: string[]; maxTurns: number } {
  const def = builtinRole(name);
  return { tools: def.tools ?? [], maxTurns: def.maxTurns ?? 20 };
}
