// A recorded model request's text, however the ledger stored it: whole as a blob, or as a delta of the
// request before it (core/ledger/request-delta.ts), rebuilt and checked against its requestHash.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readRunBlob } from '../../src/core/contain/acia-state.js';
import { RecordedRequests, type RequestRecord } from '../../src/core/ledger/request-delta.js';

export function recordedRequest(repo: string, runId: string, requestHash: string): string {
  const runDir = join(repo, '.acia', 'runs', runId);
  const calls: RequestRecord[] = [];
  for (const line of readFileSync(join(runDir, 'ledger.jsonl'), 'utf8').split('\n')) {
    if (line === '') continue;
    const e = JSON.parse(line) as { type: string; data: RequestRecord };
    if (e.type === 'LLM_CALL') calls.push(e.data);
  }
  const got = new RecordedRequests(calls, (ref) => readRunBlob(runDir, ref)).get(requestHash);
  if (!got.ok) throw new Error(got.message);
  return got.text;
}
