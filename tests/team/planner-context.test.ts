// Planning on a snapshot, with what the planner read recorded (ACM v0.5 §4, §5.3.4; audit C4/C7/C8): the
// packet is versioned by its commit, lists its augmentations and digests its git source; every file the PM
// reads from the run worktree (the base commit's tree) is recorded as CONTEXT_INTERNALIZED with its digest.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ContextPacket } from '../../src/core/acm/contracts.js';
import { sha256Hex } from '../../src/core/acm/canonical-json.js';
import { ofType, replaysIdentically, teamRig, writes } from './team-rig.js';

const plan = {
  plans: [{ id: 'plan-A', rationale: 'one task', tasks: [{ id: 't1', capability: 'dev.implement', input: { instructions: 'add docs' } }], edges: [] }],
  chosenPlanId: 'plan-A',
  selectionRationale: 'the only plan',
};

describe('planner context', () => {
  it("records the PM's reads as internal context and gives the packet a commit-ordered version, augmentations and a git digest", async () => {
    const rig = teamRig({ ledger: 'file' });
    const script = [
      { caller: 'pm', toolCalls: [{ name: 'read_file', input: { path: 'README.md' } }, { name: 'list_dir', input: { path: 'src' } }] },
      { caller: 'pm', toolCalls: [{ name: 'return_result', input: plan }] },
      ...writes('dev:t1', 'docs/t1.md', 'one\n'),
    ];
    const { entries, result, exitCode } = await rig.start({ goal: 'document the project' }, { script });
    expect(exitCode, result.message).toBe(0);
    const internal = ofType(entries, 'CONTEXT_INTERNALIZED');
    const results = ofType(entries, 'TOOL_RESULT').filter((d) => d.taskId === 'plan');
    // The two reads ran side by side: either may be recorded first, each right after its own result.
    expect(internal.map((d) => (d.artifacts as { uri: string }[])[0]?.uri).sort()).toEqual(['list_dir:src', 'read_file:README.md']);
    for (const [i, d] of internal.entries()) {
      expect(d).toMatchObject({ taskId: 'plan', artifacts: [{ scope: 'internal', digest: results[i]!.outputRef, toolUseId: results[i]!.toolUseId }] });
    }
    // Only the planner's reads: a Dev agent's are its task's work, not planning context.
    expect(entries.filter((e) => e.type === 'CONTEXT_INTERNALIZED').every((e) => e.actor === 'pm')).toBe(true);

    // The plan names the prompt that produced it (F9): the PM's last model call before it.
    const pmCalls = ofType(entries, 'LLM_CALL').filter((d) => d.caller === 'pm');
    const proposed = ofType(entries, 'PLAN_PROPOSED')[0]?.planSet as { plans: { promptDigest?: string }[] };
    expect(proposed.plans.map((p) => p.promptDigest)).toEqual([pmCalls.at(-1)?.requestHash]);

    const built = ofType(entries, 'CONTEXT_BUILT')[0]!;
    const packet = JSON.parse(readFileSync(join(result.runDir, 'blobs', String(built.packetRef).slice('sha256:'.length)), 'utf8')) as ContextPacket;
    expect(packet.version).toMatch(/^\d{8}T\d{6}\.[0-9a-f]{12}$/);
    expect(packet.version.endsWith(String(packet.facts.repoHead).slice(0, 12))).toBe(true);
    expect(packet.provenance.repoCommittedAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(packet.sources[0]).toMatchObject({ uri: `git:${String(packet.facts.repoHead)}`, type: 'git_commit', digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) as unknown });
    expect(packet.augmentations?.map((a) => a.type)).toEqual(expect.arrayContaining(['file_tree', 'test_command', 'excerpt']));
    const tree = packet.augmentations!.find((a) => a.type === 'file_tree')!;
    expect(tree.digest).toBe(`sha256:${sha256Hex(JSON.stringify(packet.facts.files))}`);
    // The packet rebuilds from itself and the reads replay: the run replays to the same decisions.
    expect(await replaysIdentically(rig.repo, result.runId)).toBe(true);
  });
});
