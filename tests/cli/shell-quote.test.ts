import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { shellLine, shellQuote } from '../../src/cli/shell-quote.js';

describe('shellQuote', () => {
  it('leaves plain words bare and quotes the rest', () => {
    expect(shellQuote('acia')).toBe('acia');
    expect(shellQuote('/tmp/a-b_c.d/repo')).toBe('/tmp/a-b_c.d/repo');
    expect(shellQuote('scripted:/x/y.json')).toBe('scripted:/x/y.json');
    expect(shellQuote('')).toBe("''");
    expect(shellQuote('my repo')).toBe("'my repo'");
    expect(shellQuote("it's")).toBe("'it'\\''s'");
  });

  it('round-trips hostile words through a real shell', () => {
    const words = ['a b', "it's", '$(touch /tmp/pwned)', '`id`', 'x;y', 'new\nline', '*', '~root', '!', '"q"', '\\'];
    const out = execFileSync('sh', ['-c', `printf '%s\\0' ${shellLine(words)}`], { encoding: 'utf8' });
    expect(out.split('\0').slice(0, -1)).toEqual(words);
  });
});
