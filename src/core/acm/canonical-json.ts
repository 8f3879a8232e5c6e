// Canonical JSON (RFC 8785 style) and sha256 content addresses: the one module everything that hashes uses.
import { hash } from 'node:crypto';

/**
 * Serialise a JSON value canonically: object keys sorted by UTF-16 code units, no whitespace,
 * numbers in ECMAScript shortest form, strings escaped as JSON.stringify does (which matches
 * RFC 8785 for well-formed strings). `undefined` object members are dropped as in JSON.
 * Non-finite numbers, functions, symbols and bigints are rejected rather than silently changed.
 */
export function canonicalJson(value: unknown): string {
  return write(value, new Set());
}

/** Objects frozenJson() froze, all the way down: their serialisation cannot change, so it is kept. */
const frozen = new WeakSet<object>();
const serialised = new WeakMap<object, string>();

/**
 * Freezes a JSON value all the way down and returns it. canonicalJson then serialises each object in it
 * once and reuses the text: an agent's conversation is hashed and stored whole every turn, and only its
 * newest message is new. Writing to a frozen value throws (ES modules are strict), so nothing can change
 * it behind the cached text.
 */
export function frozenJson<T>(value: T): T {
  freezeAll(value, new Set());
  return value;
}

function freezeAll(value: unknown, visiting: Set<object>): void {
  if (typeof value !== 'object' || value === null || frozen.has(value) || visiting.has(value)) return;
  visiting.add(value); // a cycle ends here; canonicalJson still refuses it
  for (const v of Object.values(value)) freezeAll(v, visiting);
  Object.freeze(value); // throws for what cannot be frozen (a typed array): then nothing is cached for it
  frozen.add(value);
}

function write(value: unknown, seen: Set<object>): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'string':
      return JSON.stringify(value);
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`canonicalJson: non-finite number ${value}`);
      // -0 serialises as 0 (RFC 8785 §3.2.2.3); JSON.stringify already gives the shortest round-trip form.
      return Object.is(value, -0) ? '0' : JSON.stringify(value);
    case 'object':
      break;
    default:
      throw new TypeError(`canonicalJson: cannot serialise a ${typeof value}`);
  }
  const obj = value;
  const known = serialised.get(obj);
  if (known !== undefined) return known;
  const text = writeObject(obj, seen);
  if (frozen.has(obj)) serialised.set(obj, text);
  return text;
}

/** Whether frozenJson() froze this value, all the way down: its content can no longer change. */
export function isFrozenJson(value: object): boolean {
  return frozen.has(value);
}

// Built by appending to one string rather than mapping to arrays and joining: every ledger entry, request
// and blob is serialised here, and the intermediate arrays were most of the cost.
function writeObject(obj: object, seen: Set<object>): string {
  if (seen.has(obj)) throw new TypeError('canonicalJson: cyclic structure');
  seen.add(obj);
  try {
    if (Array.isArray(obj)) {
      let out = '[';
      for (let i = 0; i < obj.length; i++) {
        const v: unknown = obj[i];
        out += `${i === 0 ? '' : ','}${v === undefined ? 'null' : write(v, seen)}`;
      }
      return `${out}]`;
    }
    if (typeof (obj as { toJSON?: unknown }).toJSON === 'function') {
      return write((obj as { toJSON: () => unknown }).toJSON(), seen);
    }
    const record = obj as Record<string, unknown>;
    // sort() without a comparator orders strings by UTF-16 code units, which is what RFC 8785 prescribes.
    const keys = Object.keys(record).sort();
    let out = '{';
    for (const k of keys) {
      const v = record[k];
      if (v === undefined) continue;
      out += `${out.length === 1 ? '' : ','}${JSON.stringify(k)}:${write(v, seen)}`;
    }
    return `${out}}`;
  } finally {
    seen.delete(obj);
  }
}

export function sha256Hex(data: string | Uint8Array): string {
  // One-shot (node 20.12+): about twice as fast as createHash() for the small texts hashed per entry.
  return hash('sha256', data, 'hex');
}

/** `sha256:<hex>` of the canonical JSON of a value. */
export function contentAddress(value: unknown): `sha256:${string}` {
  return `sha256:${sha256Hex(canonicalJson(value))}`;
}

export const CONTENT_REF = /^sha256:[0-9a-f]{64}$/;
