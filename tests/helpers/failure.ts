// The AciaError a promise rejects with, or a function throws: the test fails on anything else.
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

/** `fn` throws an AciaError with this code and a message matching `message`. */
export function expectAciaError(fn: () => unknown, code: string, message: RegExp): void {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  expect(caught).toBeInstanceOf(AciaError);
  expect((caught as AciaError).code).toBe(code);
  expect((caught as AciaError).message).toMatch(message);
}
