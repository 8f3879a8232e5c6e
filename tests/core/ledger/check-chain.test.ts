import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { GENESIS_HASH } from '../../../src/core/acm/contracts.js';
import { checkLedgerChain } from '../../../src/core/ledger/check-chain.js';
import { entryHash } from '../../../src/core/ledger/hash.js';

type Entry = Record<string, unknown> & { data: Record<string, unknown>; hash: string; prevHash: string };

const entries = (): Entry[] =>
  readFileSync(new URL('../../../schemas/examples/ledger.jsonl', import.meta.url), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Entry);

const rehash = (list: Entry[]): Entry[] => {
  let prev = GENESIS_HASH;
  return list.map((e) => {
    const { hash: _h, ...rest } = e;
    const body = { ...rest, prevHash: prev };
    prev = entryHash(body as never);
    return { ...body, hash: prev };
  });
};

describe('checkLedgerChain', () => {
  it('accepts the example ledger', () => {
    expect(checkLedgerChain(entries())).toEqual([]);
  });

  it('detects an edited entry by its hash', () => {
    const list = entries();
    list[1]!.data.sources = 4;
    expect(checkLedgerChain(list).map((p) => `${p.code} ${p.path}`)).toEqual(['LEDGER_HASH $[1].hash']);
  });

  it('detects a dropped entry by seq and link', () => {
    const list = entries();
    list.splice(1, 1);
    expect(checkLedgerChain(list).map((p) => `${p.code} ${p.path}`)).toEqual(['LEDGER_SEQ $[1].seq', 'LEDGER_LINK $[1].prevHash']);
  });

  it('requires the first entry to link to the genesis hash, even when rehashed', () => {
    const list = rehash(entries());
    list[0]!.prevHash = 'f'.repeat(64);
    const { hash: _h, ...body } = list[0]!;
    list[0]!.hash = entryHash(body as never);
    expect(checkLedgerChain(list).map((p) => p.code)).toContain('LEDGER_LINK');
  });

  it('reports schema problems with the entry index', () => {
    const list = entries();
    list[2]!.type = 'NOT_A_TYPE';
    expect(checkLedgerChain(list).map((p) => p.path)).toEqual(['$[2].type']);
  });
});
