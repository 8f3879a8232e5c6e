// Role files read into one shape: ACIA's own format, Claude Code agent files, Codex agent TOML and Agent
// Skills (`SKILL.md`); a bad file is one clear CONFIG_INVALID naming the file and the field.
import { describe, expect, it } from 'vitest';
import { parseAciaRole, parseClaudeAgent, parseCodexAgent, parseSkill, roleDigest } from '../../src/agents/roles/role-file.js';
import { expectAciaError } from '../helpers/failure.js';

describe("ACIA's own role format", () => {
  it('reads every field of the frontmatter, and the body as the prompt', () => {
    const role = parseAciaRole(
      '---\nname: reviewer\ndescription: reads the change\nbase: qa\nmodel: anthropic:claude-haiku-4-5\nbudget: { maxCostUsd: 2, maxTokens: 50000 }\nmaxTurns: 12\ntools: [read_file, search]\nskills: [small-changes]\n---\n\nReview the diff.\n\n',
      'roles/reviewer.md',
    );
    expect(role).toEqual({
      name: 'reviewer',
      base: 'qa',
      description: 'reads the change',
      prompt: 'Review the diff.',
      tools: ['read_file', 'search'],
      model: 'anthropic:claude-haiku-4-5',
      budget: { maxCostUsd: 2, maxTokens: 50000 },
      maxTurns: 12,
      skills: ['small-changes'],
      format: 'acia',
    });
  });

  it('takes the base from the name when none is given (pm and qa are theirs, anything else a Dev), and leaves unset fields to the base role', () => {
    const role = (name: string) => parseAciaRole(`---\nname: ${name}\ndescription: d\n---\nx`, `${name}.md`);
    expect([role('pm').base, role('qa').base, role('docs-writer').base]).toEqual(['pm', 'qa', 'dev']);
    expect(role('docs-writer')).toMatchObject({ tools: null, model: null, budget: null, maxTurns: null, skills: [] });
  });

  it('refuses a bad file with the file and the field: no frontmatter, bad YAML, an unknown key, a bad name, a budget that is no budget', () => {
    expectAciaError(() => parseAciaRole('Just a prompt.\n', 'roles/a.md'), 'CONFIG_INVALID', /^roles\/a\.md has no frontmatter: it must start with a --- block holding at least name and description$/);
    expectAciaError(() => parseAciaRole('---\nname: [unclosed\n---\nx', 'roles/b.md'), 'CONFIG_INVALID', /^roles\/b\.md: the frontmatter is not valid YAML: /);
    expectAciaError(() => parseAciaRole('---\nname: c\ndescription: d\nendpoint: https://evil.example\n---\nx', 'roles/c.md'), 'CONFIG_INVALID', /^roles\/c\.md: .*endpoint/);
    expectAciaError(() => parseAciaRole('---\nname: Bad Name\ndescription: d\n---\nx', 'roles/d.md'), 'CONFIG_INVALID', /^roles\/d\.md: "name": expected a lower-case name/);
    expectAciaError(() => parseAciaRole('---\nname: e\ndescription: d\nbudget: { maxCostUsd: -1 }\n---\nx', 'roles/e.md'), 'CONFIG_INVALID', /^roles\/e\.md: "budget\.maxCostUsd": /);
    expectAciaError(() => parseAciaRole('---\nname: f\n---\nx', 'roles/f.md'), 'CONFIG_INVALID', /^roles\/f\.md: "description": /);
    expectAciaError(() => parseAciaRole('---\nname: g\ndescription: d\nbase: boss\n---\nx', 'roles/g.md'), 'CONFIG_INVALID', /^roles\/g\.md: "base": /);
  });

  it('digests the definition: the same role gives the same digest, any change another', () => {
    const a = parseAciaRole('---\nname: dev\ndescription: d\n---\nKeep it small.', 'a.md');
    const b = parseAciaRole('---\ndescription: d\nname: dev\n---\n\nKeep it small.\n', 'b.md');
    expect(roleDigest(a)).toMatch(/^[0-9a-f]{64}$/);
    expect(roleDigest(b)).toBe(roleDigest(a));
    expect(roleDigest({ ...a, model: 'anthropic:claude-haiku-4-5' })).not.toBe(roleDigest(a));
  });
});

describe('Claude Code agent files', () => {
  it("maps Claude Code's tools to ACIA's (permission patterns dropped, MCP tools kept, unknown ones left out) and minus the disallowed ones", () => {
    const role = parseClaudeAgent('---\nname: fixer\ndescription: fixes tests\ntools: Read, Edit, MultiEdit, Bash(npm test:*), Grep, WebFetch, mcp__github__get_issue\ndisallowedTools: Bash\n---\nFix the failing test.\n', '.claude/agents/fixer.md');
    expect(role).toMatchObject({ name: 'fixer', base: 'dev', format: 'claude', prompt: 'Fix the failing test.', budget: null });
    expect(role.tools).toEqual(['read_file', 'edit_file', 'search', 'mcp__github__get_issue']);
  });

  it('reads model aliases, inherit and bare ids; no tools line means the base role’s tools', () => {
    const model = (m: string) => parseClaudeAgent(`---\nname: a\ndescription: d\nmodel: ${m}\n---\nx`, 'a.md').model;
    expect(model('haiku')).toBe('anthropic:claude-haiku-4-5');
    expect(model('inherit')).toBeNull();
    expect(model('claude-opus-4-1')).toBe('anthropic:claude-opus-4-1');
    expect(model('openai:gpt-5')).toBe('openai:gpt-5');
    expect(parseClaudeAgent('---\nname: a\ndescription: d\n---\nx', 'a.md').tools).toBeNull();
  });

  it('refuses a file without a name or description, naming the file', () => {
    expectAciaError(() => parseClaudeAgent('---\ndescription: d\n---\nx', '.claude/agents/x.md'), 'CONFIG_INVALID', /^\.claude\/agents\/x\.md: "name": /);
    expectAciaError(() => parseClaudeAgent('no frontmatter', '.claude/agents/y.md'), 'CONFIG_INVALID', /^\.claude\/agents\/y\.md has no frontmatter/);
  });
});

describe('Codex agent TOML', () => {
  it('reads developer_instructions as the prompt, a bare model as OpenAI’s, and read-only sandbox mode as the reading tools', () => {
    const role = parseCodexAgent('name = "explorer"\ndescription = "maps the code"\ndeveloper_instructions = """\nRead, do not write.\n"""\nmodel = "gpt-5.5"\nsandbox_mode = "read-only"\n', '.codex/agents/explorer.toml');
    expect(role).toMatchObject({ name: 'explorer', base: 'dev', format: 'codex', prompt: 'Read, do not write.', model: 'openai:gpt-5.5' });
    expect(role.tools).toEqual(['read_file', 'list_dir', 'search', 'git_status', 'git_diff']);
    expect(parseCodexAgent('name = "w"\ndescription = "d"\ndeveloper_instructions = "x"\n', 'w.toml')).toMatchObject({ tools: null, model: null });
  });

  it('refuses TOML that does not parse, or lacks developer_instructions, naming the file', () => {
    expectAciaError(() => parseCodexAgent('name = "unclosed\n', '.codex/agents/a.toml'), 'CONFIG_INVALID', /^\.codex\/agents\/a\.toml is not valid TOML: /);
    expectAciaError(() => parseCodexAgent('name = "b"\ndescription = "d"\n', '.codex/agents/b.toml'), 'CONFIG_INVALID', /^\.codex\/agents\/b\.toml: "developer_instructions": /);
    expectAciaError(() => parseCodexAgent('name = "c"\ndescription = "d"\ndeveloper_instructions = "x"\nsandbox_mode = "yolo"\n', 'c.toml'), 'CONFIG_INVALID', /^c\.toml: "sandbox_mode": /);
  });
});

describe('Agent Skills (SKILL.md)', () => {
  it('reads the name and description from the frontmatter and keeps the body for when the skill is loaded', () => {
    expect(parseSkill('---\nname: small-changes\ndescription: how to keep a change small\nlicense: MIT\n---\n\nTouch only what the task names.\n', 'skills/small-changes/SKILL.md')).toEqual({
      name: 'small-changes',
      description: 'how to keep a change small',
      body: 'Touch only what the task names.',
    });
  });

  it('refuses a skill without a description, with one past 1024 characters, or without frontmatter', () => {
    expectAciaError(() => parseSkill('---\nname: a\n---\nbody', 'a/SKILL.md'), 'CONFIG_INVALID', /^a\/SKILL\.md: "description": /);
    expectAciaError(() => parseSkill(`---\nname: b\ndescription: ${'x'.repeat(1025)}\n---\nbody`, 'b/SKILL.md'), 'CONFIG_INVALID', /^b\/SKILL\.md: "description": /);
    expectAciaError(() => parseSkill('body only', 'c/SKILL.md'), 'CONFIG_INVALID', /^c\/SKILL\.md has no frontmatter/);
  });
});
