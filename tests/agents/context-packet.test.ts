// A fleet task job reads the agents' instructions back from the recorded packet (instructionsOf) instead of
// building the packet again: both must give the agents the same files, in the same order, with the same text.
import { expect, it } from 'vitest';
import { buildContextPacket, instructionsOf, type RepoReader } from '../../src/agents/pm/context-packet.js';
import { Goal, type ContextPacket } from '../../src/core/acm/contracts.js';

const files: Record<string, string> = {
  'pkg/deep/CLAUDE.md': 'deepest\n',
  'pkg/AGENTS.md': 'package rules\n',
  'CLAUDE.md': 'root claude\n',
  'AGENTS.md': `root agents ${'x'.repeat(9000)}\n`,
  'README.md': 'the readme\n',
  'package.json': '{"name":"p"}\n',
  'src/a.ts': 'export {};\n',
};

const reader: RepoReader = {
  listFiles: () => Promise.resolve(Object.keys(files)),
  readText: (p, max) => Promise.resolve(files[p]?.slice(0, max) ?? null),
  head: () => Promise.resolve('a'.repeat(40)),
};

const goal = Goal.parse({ id: 'g1', intent: 'do it' });

it('reads back from a recorded packet exactly the instructions a rebuild gives', async () => {
  const built = await buildContextPacket({ goal, repo: reader, memory: [{ page: 'AGENTS.md', content: 'not an instruction' }], testCommand: 'npm test', constraints: {}, createdAt: '' });
  expect(built.instructions.map((i) => i.path)).toEqual(['AGENTS.md', 'CLAUDE.md', 'pkg/AGENTS.md', 'pkg/deep/CLAUDE.md']);
  // As the ledger holds it: canonical JSON, parsed back.
  const recorded = JSON.parse(JSON.stringify(built.packet)) as ContextPacket;
  expect(instructionsOf(recorded)).toEqual(built.instructions);
  // A packet that lists an instruction file without its text (an older one) is not read back: it is rebuilt.
  const older = { ...recorded, sources: recorded.sources.filter((s) => s.uri !== 'file:pkg/AGENTS.md') };
  expect(instructionsOf(older)).toBeNull();
  expect(instructionsOf({ ...recorded, facts: { ...recorded.facts, instructionFiles: undefined } })).toBeNull();
});
