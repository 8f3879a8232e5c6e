import { describe, expect, it } from 'vitest';
import { colourOverride } from '../../src/cli/colour.js';

describe('colourOverride', () => {
  it('turns colour off when NO_COLOR is set and not empty', () => {
    expect(colourOverride({ NO_COLOR: '1' })).toBe(0);
  });

  it('leaves detection alone when NO_COLOR is empty or absent', () => {
    expect(colourOverride({ NO_COLOR: '' })).toBeNull();
    expect(colourOverride({})).toBeNull();
  });

  it('lets FORCE_COLOR win over NO_COLOR, as Node does', () => {
    expect(colourOverride({ NO_COLOR: '1', FORCE_COLOR: '1' })).toBeNull();
  });
});
