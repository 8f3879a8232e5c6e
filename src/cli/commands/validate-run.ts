// The work behind `acia validate`, loaded only when the command runs: read files, validate, print, pick the exit code.
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { CapabilityMap } from '../../core/acm/contracts.js';
import { capabilityMapFromSpec } from '../../core/acm/spec-documents.js';
import { zodProblems } from '../../core/acm/zod-paths.js';
import { DOCUMENT_KINDS, validateDocument, type DocumentResult } from '../../core/acm/validate-document.js';
import { parseDocumentText } from '../../core/acm/json-text.js';
import { PmOutput } from '../../agents/pm/pm-agent.js';
import { DevOutput } from '../../agents/dev/dev-agent.js';
import { QaOutput } from '../../agents/qa/qa-agent.js';
import { AciaError } from '../../core/errors.js';
import { EXIT } from '../../app/exit-codes.js';

export interface ValidateRunOptions {
  json?: boolean;
  kind?: string;
  /** A Context Packet file whose facts plans are checked against. */
  context?: string;
  /** A Capability Map file plans and tasks are checked against, instead of ACIA's own. */
  capabilities?: string;
}

interface Io {
  readText(file: string): Promise<string>;
  out(s: string): void;
  err(s: string): void;
}

const nodeIo: Io = {
  readText: (file) => readFile(file, 'utf8'),
  out: (s) => void process.stdout.write(s),
  err: (s) => void process.stderr.write(s),
};

type FileResult = { file: string } & (DocumentResult | { status: 'missing'; message: string });

/** What each agent role's return_result must look like, for `--kind script`. */
const RESULT_SCHEMAS = { pm: PmOutput, dev: DevOutput, qa: QaOutput };

export async function runValidate(files: string[], options: ValidateRunOptions, io: Io = nodeIo): Promise<number> {
  if (options.kind !== undefined && !(DOCUMENT_KINDS as readonly string[]).includes(options.kind)) {
    throw new AciaError('USAGE', `unknown --kind '${options.kind}'`, { hint: `known kinds: ${DOCUMENT_KINDS.join(', ')}` });
  }
  const facts = options.context === undefined ? undefined : await packetFacts(options.context, io);
  const caps = options.capabilities === undefined ? undefined : await capabilityMap(options.capabilities, io);
  const results: FileResult[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = await io.readText(file);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : `cannot read (${code ?? 'error'})`;
      results.push({ file, status: 'missing', message: why });
      continue;
    }
    const opts = {
      ...(options.kind === undefined ? {} : { kind: options.kind }),
      ...(facts === undefined ? {} : { facts }),
      ...(caps === undefined ? {} : { caps }),
      readSheet: sheetReader(file),
      resultSchemas: RESULT_SCHEMAS,
    };
    results.push({ file, ...validateDocument(text, file, opts) });
  }

  if (options.json) io.out(`${JSON.stringify({ ok: results.every(isValid), files: results }, null, 2)}\n`);
  else for (const r of results) printResult(r, io);

  if (results.some((r) => r.status === 'missing' || r.status === 'unreadable')) return EXIT.USAGE;
  return results.every(isValid) ? EXIT.OK : EXIT.FAILED;
}

/** The facts of the packet given with --context (ACIA's shape or the spec's: both keep them under `facts`). */
async function packetFacts(file: string, io: Io): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await io.readText(file);
  } catch (e) {
    throw new AciaError('USAGE', `--context ${file}: cannot read it (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  const parsed = parseDocumentText(text, file);
  if (!parsed.ok) throw new AciaError('USAGE', `--context ${file}: not JSON or YAML: ${parsed.message}`);
  const facts = (parsed.value as { facts?: unknown } | null)?.facts;
  if (typeof facts !== 'object' || facts === null || Array.isArray(facts)) throw new AciaError('USAGE', `--context ${file}: not a Context Packet (no facts object)`);
  return facts as Record<string, unknown>;
}

/** The map given with --capabilities, in ACIA's form or the spec's. */
async function capabilityMap(file: string, io: Io): Promise<CapabilityMap> {
  let text: string;
  try {
    text = await io.readText(file);
  } catch (e) {
    throw new AciaError('USAGE', `--capabilities ${file}: cannot read it (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  const parsed = parseDocumentText(text, file);
  if (!parsed.ok) throw new AciaError('USAGE', `--capabilities ${file}: not JSON or YAML: ${parsed.message}`);
  const map = CapabilityMap.safeParse(capabilityMapFromSpec(parsed.value).value);
  if (!map.success) throw new AciaError('USAGE', `--capabilities ${file}: not a Capability Map: ${zodProblems(map.error).map((p) => `${p.path}: ${p.message}`).slice(0, 3).join('; ')}`);
  return map.data;
}

/** Verification Sheets a document's verificationRefs name, read relative to the document. */
function sheetReader(file: string) {
  return (ref: string): unknown => {
    try {
      const path = resolve(dirname(file), ref);
      const parsed = parseDocumentText(readFileSync(path, 'utf8'), path);
      return parsed.ok ? parsed.value : null;
    } catch {
      return null;
    }
  };
}

function isValid(r: FileResult): boolean {
  return r.status === 'checked' && r.ok;
}

function printResult(r: FileResult, io: Io): void {
  switch (r.status) {
    case 'missing':
      io.err(`${r.file}: ${r.message}\n`);
      return;
    case 'unreadable': {
      const where = r.line === undefined ? '' : `:${r.line}:${r.column ?? 1}`;
      io.err(`${r.file}${where}: not valid JSON: ${r.message}\n`);
      return;
    }
    case 'unknown-kind':
      io.err(`${r.file}: ${r.message}\n`);
      return;
    case 'checked':
      for (const p of r.errors) io.out(`${r.file}: ${p.path}: ${p.message}\n`);
      for (const p of r.warnings) io.out(`${r.file}: warning: ${p.path}: ${p.message}\n`);
      io.out(`${r.file}: ${r.ok ? 'ok' : 'invalid'} (${r.summary}${r.ok ? '' : `, ${r.errors.length} error${r.errors.length === 1 ? '' : 's'}`})\n`);
      return;
  }
}
