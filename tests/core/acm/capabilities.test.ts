import { describe, expect, it } from 'vitest';
import { ACIA_CAPS_VERSION, CAPABILITY_INPUTS, defaultCapabilityMap } from '../../../src/core/acm/capabilities.js';
import { CapabilityMap } from '../../../src/core/acm/contracts.js';

describe('defaultCapabilityMap', () => {
  it('is a valid CapabilityMap at version acia-caps@1', () => {
    expect(CapabilityMap.safeParse(defaultCapabilityMap).success).toBe(true);
    expect(defaultCapabilityMap.version).toBe(ACIA_CAPS_VERSION);
    expect(ACIA_CAPS_VERSION).toBe('acia-caps@1');
  });

  it('names each capability with its actor', () => {
    const actors = Object.fromEntries(defaultCapabilityMap.capabilities.map((c) => [c.name, c.actor]));
    expect(actors).toEqual({
      'dev.implement': 'dev',
      'dev.fix': 'dev',
      'dev.merge': 'dev',
      'qa.verify': 'qa',
      'qa.write_tests': 'qa',
      'human.approve': 'human',
      'pm.replan': 'pm',
    });
  });

  it('publishes JSON input schemas that agree with the zod inputs', () => {
    const dev = defaultCapabilityMap.capabilities.find((c) => c.name === 'dev.implement');
    expect(dev?.inputSchema).toMatchObject({ type: 'object', required: ['instructions'], additionalProperties: false });
    expect(CAPABILITY_INPUTS['dev.implement'].safeParse({ instructions: 'x', files: ['a.ts'] }).success).toBe(true);
    expect(CAPABILITY_INPUTS['human.approve'].safeParse({}).success).toBe(false);
    expect(CAPABILITY_INPUTS['qa.verify'].safeParse({}).success).toBe(true);
    expect(CAPABILITY_INPUTS['pm.replan'].safeParse({ reason: 'tests keep failing' }).success).toBe(true);
  });

  it('gives every entry what ACM v0.5 §5.2 lists: a semver version, input and output schemas, invariants, side effects and tools', () => {
    for (const c of defaultCapabilityMap.capabilities) {
      expect(c.version, c.name).toMatch(/^\d+\.\d+\.\d+$/);
      expect(c.inputSchema, c.name).toMatchObject({ type: 'object' });
      expect(c.outputSchema, c.name).toMatchObject({ type: 'object' });
      expect(c.invariants?.length, c.name).toBeGreaterThan(0);
      expect(Array.isArray(c.sideEffects), c.name).toBe(true);
      expect(Array.isArray(c.tools), c.name).toBe(true);
    }
    const qa = defaultCapabilityMap.capabilities.find((c) => c.name === 'qa.verify');
    expect(qa?.outputSchema).toMatchObject({ required: expect.arrayContaining(['passed', 'exitCode']) as unknown });
  });
});
