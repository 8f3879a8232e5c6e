import { describe, expect, it } from 'vitest';
import { devAgent } from '../../src/agents/dev/dev-agent.js';
import { pmAgent } from '../../src/agents/pm/pm-agent.js';
import { renderPrompt, renderTemplate, templatePlaceholders } from '../../src/agents/prompt-template.js';
import { qaAgent } from '../../src/agents/qa/qa-agent.js';
import { AciaError } from '../../src/core/errors.js';

describe('prompt templates', () => {
  it('render every agent prompt with no placeholder left', () => {
    const prompts = [renderPrompt(pmAgent, { capabilities: '- dev.implement (dev): edits code' }), renderPrompt(devAgent, {}), renderPrompt(qaAgent, {})];
    for (const p of prompts) {
      expect(p).not.toMatch(/\{\{|\}\}/);
      expect(p.length).toBeGreaterThan(200);
    }
    expect(prompts[0]).toContain('- dev.implement (dev): edits code');
  });

  it('refuse a missing value, a value with no placeholder, and a malformed placeholder', () => {
    expect(() => renderTemplate('a {{x}} b {{ y }}', { x: '1' })).toThrow(/no value for \{\{y\}\}/);
    expect(() => renderTemplate('a {{x}}', { x: '1', z: '2' })).toThrow(/no placeholder for z/);
    expect(() => renderTemplate('a {{two words}}', {})).toThrow(/malformed/);
    expect(() => renderTemplate('a {{x}}', {})).toThrow(AciaError);
    expect(renderTemplate('a {{x}} {{x}} {{ y }}', { x: '1', y: '$&' })).toBe('a 1 1 $&');
  });

  it('refuse a definition whose declared variables differ from its template', () => {
    expect(() => renderPrompt({ instructions: 'dev.md', promptVars: ['instructions'] }, { instructions: 'x' })).toThrow(
      /declares \{instructions\} but the template uses \{\}/,
    );
    expect(templatePlaceholders('{{a}} {{ b }} {{a}}')).toEqual(['a', 'b']);
  });
});
