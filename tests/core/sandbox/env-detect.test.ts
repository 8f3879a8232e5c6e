import { describe, expect, it } from 'vitest';
import { detectSandbox } from '../../../src/core/sandbox/detect.js';
import { buildSandboxEnv } from '../../../src/core/sandbox/env.js';

describe('buildSandboxEnv', () => {
  it('keeps allow-listed names, drops secrets and everything unlisted, and sets a private HOME', () => {
    const env = buildSandboxEnv(
      { home: '/tmp/h' },
      { PATH: '/bin', LANG: 'C', LC_ALL: 'C', CI: '1', HOME: '/root', ANTHROPIC_API_KEY: 'k', FOO_TOKEN: 't', AWS_REGION: 'x', RANDOM_VAR: 'r', LC_SECRET: 's' },
    );
    expect(env).toEqual({ PATH: '/bin', LANG: 'C', LC_ALL: 'C', CI: '1', HOME: '/tmp/h', TMPDIR: '/tmp', USER: 'acia' });
  });
});

describe('detectSandbox', () => {
  it('reports a missing bwrap with a one-line reason and the install command', () => {
    const s = detectSandbox({ bwrapPath: '/nonexistent/bwrap' });
    expect(s).toMatchObject({ status: 'unavailable', reason: 'bubblewrap (bwrap) is not installed' });
    expect(s.status === 'unavailable' && s.install).toMatch(/apt-get install bubblewrap/);
  });
});
