import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AciaError } from '../../../src/core/errors.js';
import { createLlmClient } from '../../../src/core/llm/model-spec.js';

describe('createLlmClient', () => {
  it('builds each provider from its spec', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'acia-spec-'));
    writeFileSync(join(dir, 's.json'), JSON.stringify({ version: 1, model: 'claude-haiku-4-5', turns: [] }));
    const scripted = await createLlmClient('scripted:s.json', {}, { cwd: dir });
    expect([scripted.provider, scripted.model, scripted.client.provider]).toEqual(['scripted', 'claude-haiku-4-5', 'scripted']);
    const anthropic = await createLlmClient('anthropic:claude-sonnet-5-5', { ANTHROPIC_API_KEY: 'k' });
    expect([anthropic.model, anthropic.client.provider]).toEqual(['claude-sonnet-5-5', 'anthropic']);
    const openai = await createLlmClient('openai:llama3', { OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1' });
    expect([openai.model, openai.client.provider]).toEqual(['llama3', 'openai']);
  });

  it('rejects an unknown prefix with CONFIG_INVALID on one line', async () => {
    const e: unknown = await createLlmClient('gemini:pro', {}).catch((err: unknown) => err);
    expect(e).toBeInstanceOf(AciaError);
    expect((e as AciaError).code).toBe('CONFIG_INVALID');
    expect((e as AciaError).message).not.toContain('\n');
  });

  it('reports an invalid script file with its JSON path', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'acia-spec-'));
    writeFileSync(join(dir, 'bad.json'), JSON.stringify({ version: 1, turns: [{ caller: 'pm', stopReason: 'maybe' }] }));
    await expect(createLlmClient(`scripted:${join(dir, 'bad.json')}`, {})).rejects.toThrow(/\$\.turns\[0\]\.stopReason/);
  });
});
