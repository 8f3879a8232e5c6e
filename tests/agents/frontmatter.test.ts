import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { plainFrontmatter, splitFrontmatter } from '../../src/agents/roles/frontmatter.js';
import { AciaError } from '../../src/core/errors.js';

const PROMPTS = join(import.meta.dirname, '..', '..', 'src', 'agents', 'prompts');

/** The plain reading, when it gives one, is exactly what the yaml parser gives for the same block. */
function agreesWithYaml(block: string): 'plain' | 'yaml' {
  const plain = plainFrontmatter(block);
  if (plain === null) return 'yaml';
  expect(plain, block).toEqual(parseYaml(block));
  return 'plain';
}

describe('role frontmatter', () => {
  it('reads the built-in role files without the yaml parser, as the yaml parser reads them', () => {
    const files = readdirSync(PROMPTS).filter((f) => /^(pm|dev|qa)\.md$/.test(f));
    expect(files).toHaveLength(3);
    for (const f of files) {
      const block = /^---\r?\n([\s\S]*?)\r?\n---/.exec(readFileSync(join(PROMPTS, f), 'utf8'))?.[1] ?? '';
      expect(agreesWithYaml(block), f).toBe('plain');
    }
  });

  it('leaves every block outside the plain subset to the yaml parser', () => {
    const toYaml = [
      'name: pm\n# a comment',
      'name: pm\n\ndescription: x',
      'name: "quoted"',
      "name: 'quoted'",
      'name: pm\nname: dev',
      'tools:\n  - read_file',
      'budget: { maxCostUsd: 1 }',
      'description: a: b',
      'description: text # comment',
      'description: ends with colon:',
      'maxTurns: 012',
      'maxTurns: 0',
      'maxTurns: -3',
      'maxTurns: 1.5',
      'maxTurns: 0x1F',
      'flag: true',
      'flag: NULL',
      'tools: [read_file, true]',
      'tools: [read_file, "x"]',
      'tools: [a, [b]]',
      'tools: [a,, b]',
      'description: ~',
      'description: .inf',
      'description: |',
      'description: >',
      'description: &anchor x',
      'description: *alias',
      'description: !tag x',
      'description: @x',
      'description: %x',
      'description: `x`',
      'description: -x',
      'description: ?x',
      'description:',
      ' name: pm',
      'name:\tpm',
      '__proto__: x',
      'null: x',
      'true: x',
      'description: a\tb',
    ];
    for (const block of toYaml) expect(agreesWithYaml(block), block).toBe('yaml');
  });

  it('agrees with the yaml parser on plain blocks, generated', () => {
    const pieces = ['a', 'Z', 'x1', 'read_file', 'mcp__fs__read', 'a.b', 'a-b', 'yes', 'No', 'on', 'Off', 'y', 'n', 'nan', 'Infinity', 'inf', 'e3', 'x,y', 'x, y', 'x [y]', 'x {y}', 'x]', 'x}', 'x - y', 'x | y', 'x > y', 'x & y', 'x * y', 'x ! y', 'x % y', 'x @ y', 'x ? y', 'x:y', 'x#y', 'x;y', "it's", 'say "x"', 'a`b`', 'é', 'x é', 'x\u2028y', 'x\u0085y', '12', '1e3', '0', '  ', 'true', 'null'];
    let seed = 7;
    const pick = <T>(xs: readonly T[]): T => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return xs[seed % xs.length]!;
    };
    let plain = 0;
    for (let i = 0; i < 1500; i++) {
      const lines: string[] = [];
      const keys = ['name', 'description', 'tools', 'maxTurns', 'model', 'base'];
      for (let k = 0; k < 1 + (i % 4); k++) {
        const kind = pick(['text', 'text', 'list', 'int']);
        const value =
          kind === 'int'
            ? pick(['1', '12', '200', '007', '1e2', '-1', '3.0'])
            : kind === 'list'
              ? `[${Array.from({ length: i % 3 }, () => pick(pieces)).join(', ')}]`
              : Array.from({ length: 1 + (i % 3) }, () => pick(pieces)).join(pick([' ', '', ', ']));
        lines.push(`${pick(keys)}: ${value}`);
      }
      const block = lines.join(pick(['\n', '\r\n']));
      let yamlOk = true;
      try {
        parseYaml(block);
      } catch {
        yamlOk = false;
      }
      // A block the yaml parser refuses is never read the plain way.
      if (!yamlOk) expect(plainFrontmatter(block), block).toBeNull();
      else if (agreesWithYaml(block) === 'plain') plain++;
    }
    expect(plain).toBeGreaterThan(150);
  });

  it('still refuses invalid YAML and a file with no frontmatter, with one clear line', () => {
    expect(() => splitFrontmatter('---\nname: [unclosed\n---\nbody', 'role x.md')).toThrow(/role x\.md: the frontmatter is not valid YAML/);
    expect(() => splitFrontmatter('no frontmatter', 'role y.md')).toThrow(AciaError);
    expect(splitFrontmatter('---\nname: pm\ntools: [read_file]\n---\nThe body.\n', 'f')).toEqual({ front: { name: 'pm', tools: ['read_file'] }, body: 'The body.\n' });
    expect(splitFrontmatter('---\nname: "pm"\nbudget:\n  maxTokens: 5\n---\nB', 'f')).toEqual({ front: { name: 'pm', budget: { maxTokens: 5 } }, body: 'B' });
  });
});
