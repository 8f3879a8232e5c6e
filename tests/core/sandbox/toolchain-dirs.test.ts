import { describe, expect, it } from 'vitest';
import { toolchainDirs } from '../../../src/core/sandbox/bwrap-runner.js';

describe('toolchainDirs', () => {
  const dirs = ['/tmp/ci1', '/home/u/.nvm/versions/node/v20', '/usr'];

  it('binds back what a mask hides: a clone under /tmp, node under a home', () => {
    expect(toolchainDirs(['/tmp', '/home', '/root'], [], dirs)).toEqual(['/tmp/ci1', '/home/u/.nvm/versions/node/v20']);
  });

  it('never unmasks a checkout: not when ACIA lives inside the user checkout, nor when it holds it', () => {
    expect(toolchainDirs(['/tmp', '/home'], ['/tmp/ci1'], dirs)).toEqual(['/home/u/.nvm/versions/node/v20']);
    expect(toolchainDirs(['/tmp', '/home'], ['/tmp/ci1/sub/repo'], dirs)).toEqual(['/home/u/.nvm/versions/node/v20']);
    expect(toolchainDirs(['/tmp', '/home'], ['/tmp'], dirs)).toEqual(['/home/u/.nvm/versions/node/v20']);
  });

  it('leaves alone what no mask covers', () => {
    expect(toolchainDirs(['/tmp'], [], ['/usr', '/opt/acia'])).toEqual([]);
  });
});
