import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/core/config/load.js';

function repoWith(config: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), 'acia-cfg-'));
  mkdirSync(join(dir, '.acia'));
  writeFileSync(join(dir, '.acia', 'config.json'), typeof config === 'string' ? config : JSON.stringify(config));
  return dir;
}

describe('loadConfig', () => {
  it('layers defaults, user file, repo file, env and flags, and says where each value came from', () => {
    const repo = repoWith({ parallel: 3, maxIterations: 5 });
    const userDir = mkdtempSync(join(tmpdir(), 'acia-user-'));
    const userFile = join(userDir, 'config.json');
    writeFileSync(userFile, JSON.stringify({ parallel: 1, sandbox: 'off' }));
    const { config, sources } = loadConfig({ repo, env: { ACIA_MAX_ITERATIONS: '7' }, flags: { model: 'scripted:x.json' }, userFile });
    expect(config.parallel).toBe(3);
    expect(sources.parallel).toBe(join(repo, '.acia', 'config.json'));
    expect(config.sandbox).toBe('off');
    expect(sources.sandbox).toBe(userFile);
    expect(config.maxIterations).toBe(7);
    expect(sources.maxIterations).toBe('env:ACIA_MAX_ITERATIONS');
    expect(config.model).toBe('scripted:x.json');
    expect(sources.model).toBe('flag');
    expect(sources.commandTimeoutS).toBe('default');
  });

  it("a continued run's recorded settings are a layer over files and env, under flags; a budget flag overrides that limit only; never the sandbox", () => {
    const repo = repoWith({ parallel: 3 });
    const recorded = { runId: 'r1', model: 'anthropic:claude-sonnet-5-5', parallel: 4, maxIterations: 1, budget: { maxCostUsd: 2, maxTokens: 9000 }, memoryLessons: false };
    const { config, sources } = loadConfig({ repo, env: { ACIA_MAX_ITERATIONS: '7', ACIA_SANDBOX: 'off' }, flags: { parallel: 1, budget: { maxTokens: 20000 } }, userFile: null, recorded });
    expect(config).toMatchObject({ model: 'anthropic:claude-sonnet-5-5', parallel: 1, maxIterations: 1, memoryLessons: false, sandbox: 'off', budget: { maxCostUsd: 2, maxTokens: 20000 } });
    expect(sources).toMatchObject({ model: 'run:r1', parallel: 'flag', maxIterations: 'run:r1', memoryLessons: 'run:r1', sandbox: 'env:ACIA_SANDBOX', budget: 'flag' });
    // The sandbox is whatever the user says now: a recorded run cannot carry one.
    expect(loadConfig({ repo, env: {}, flags: {}, userFile: null, recorded }).config.sandbox).toBe('auto');
  });

  it('names an unknown key and its file', () => {
    const repo = repoWith({ paralel: 2 });
    expect(() => loadConfig({ repo, env: {}, flags: {}, userFile: null })).toThrow(/unknown key "paralel" in .*\.acia\/config\.json/);
  });

  it('names a bad value and its file', () => {
    const repo = repoWith({ parallel: 0 });
    expect(() => loadConfig({ repo, env: {}, flags: {}, userFile: null })).toThrow(/invalid value for "parallel" in .*config\.json/);
  });

  it('rejects a file that is not JSON', () => {
    const repo = repoWith('{ nope');
    expect(() => loadConfig({ repo, env: {}, flags: {}, userFile: null })).toThrow(/is not valid JSON/);
  });

  it('names the environment variable that holds a bad value', () => {
    expect(() => loadConfig({ repo: null, env: { ACIA_PARALLEL: 'abc' }, flags: {}, userFile: null })).toThrow(/"parallel" in \$ACIA_PARALLEL/);
  });

  it('names the flag that holds a bad value', () => {
    expect(() => loadConfig({ repo: null, env: {}, flags: { maxIterations: -1 }, userFile: null })).toThrow(/"maxIterations" in --max-iterations/);
  });

  it('rejects an unknown model prefix from a flag', () => {
    expect(() => loadConfig({ repo: null, env: {}, flags: { model: 'gemini:pro' }, userFile: null })).toThrow(/"model" in --model: expected anthropic:<id>/);
  });
});
