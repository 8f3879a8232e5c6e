// The AciaError a promise rejects with; fails the test when it resolves or rejects with anything else.
import { expect } from 'vitest';
import { AciaError } from '../../src/core/errors.js';

export async function failure(p: Promise<unknown>): Promise<AciaError> {
  const e: unknown = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(AciaError);
  return e as AciaError;
}
