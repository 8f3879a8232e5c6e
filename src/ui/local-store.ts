// One repository's runs for `acia ui`. The repository may be a hostile clone: its `.acia/runs` and
// every run id under it are names someone else chose. Every path the ui server touches under `.acia/`
// comes from the containment module (core/contain): run ids checked before they become paths, no link
// followed on the way to a run directory, its ledger or a blob.
import { closeSync, fstatSync, readSync, watch, type FSWatcher } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { LedgerEntry } from '../core/ledger/entry.js';
import { systemClock } from '../core/acm/ids.js';
import { AciaError } from '../core/errors.js';
import { existingRunDir, listRunIds, readRunBlob, requireRunDir, runsDir } from '../core/contain/acia-state.js';
import { checkRealDir, openRegularForRead } from '../core/contain/no-follow.js';
import { readAnchor } from '../core/ledger/anchor.js';
import { LEDGER_FILE } from '../core/ledger/file-ledger.js';
import { parseLedgerLine } from '../core/ledger/line-reader.js';
import { verifyRun } from '../core/ledger/verify.js';
import { Git } from '../team/git.js';
import { answerWithResume } from './local-answer.js';
import { isCommitName, type AnswerOutcome, type Cursor, type RunStore, type VerifyStatus } from './store.js';

/** Read at most this much of a ledger per call; the hub calls again for the rest. */
const CHUNK = 8 * 1024 * 1024;
const MAX_DIFF = 2 * 1024 * 1024;

export function localStore(repo: string, env: NodeJS.ProcessEnv = process.env): RunStore {
  const git = new Git(systemClock);
  const runDir = (runId: string): string => requireRunDir(repo, runId);

  return {
    label: repo,
    kind: 'repo',
    listRunIds: () => Promise.resolve(listRunIds(repo)),

    read(runId, from, until) {
      return Promise.resolve(readLines(join(runDir(runId), LEDGER_FILE), from, until));
    },

    watch(changed) {
      // inotify on the runs directory (a run starts) and on each run directory (its ledger grows). A
      // directory watch can miss what happens before it is set up: a slow sweep of ledger sizes covers that.
      const watchers = new Map<string, FSWatcher>();
      const sizes = new Map<string, number>();
      // A run seen for the first time is read once its watch is set, so nothing written before the watch
      // (a run that started and wrote at once) waits for the next sweep.
      const track = (id: string): void => {
        if (watchers.has(id)) return;
        try {
          const w = watch(runDir(id), { persistent: false }, () => changed(id));
          w.on('error', () => undefined);
          watchers.set(id, w);
        } catch {
          // A run directory that is not a real directory is not shown; nothing to watch.
          return;
        }
        changed(id);
      };
      const trackAll = (): void => {
        for (const id of listRunIds(repo)) track(id);
      };
      let top: FSWatcher | null = null;
      const watchTop = (): void => {
        if (top !== null || !checkRealDir(repo, runsDir(repo))) return;
        try {
          top = watch(runsDir(repo), { persistent: false }, () => {
            changed(null);
            try {
              trackAll();
            } catch {
              // the next sweep tries again
            }
          });
          top.on('error', () => undefined);
        } catch {
          top = null;
        }
      };
      const sweep = (): void => {
        watchTop();
        for (const id of listRunIds(repo)) {
          track(id);
          const size = ledgerSize(repo, id);
          if (size !== sizes.get(id)) {
            if (sizes.has(id)) changed(id);
            sizes.set(id, size);
          }
        }
      };
      const safeSweep = (): void => {
        try {
          sweep();
        } catch {
          // An unreadable runs directory shows as no runs; the next sweep tries again.
        }
      };
      safeSweep();
      const timer = setInterval(safeSweep, 2000);
      timer.unref();
      return () => {
        clearInterval(timer);
        top?.close();
        for (const w of watchers.values()) w.close();
      };
    },

    blob(runId, ref, maxBytes) {
      if (!/^sha256:[0-9a-f]{64}$/.test(ref)) return Promise.resolve(null);
      const hex = ref.slice('sha256:'.length);
      const bytes = readRunBlob(runDir(runId), ref);
      if (bytes === null) return Promise.resolve(null);
      // Content addressed: bytes that do not hash to their name were altered after the run wrote them.
      if (createHash('sha256').update(bytes).digest('hex') !== hex) throw new AciaError('LEDGER_CORRUPT', `blob ${ref} of run ${runId} does not match its hash`);
      return Promise.resolve({ bytes: bytes.subarray(0, maxBytes), truncated: bytes.length > maxBytes });
    },

    async verify(runId): Promise<VerifyStatus> {
      const dir = runDir(runId);
      const r = await verifyRun(dir, { anchor: readAnchor(env, dir, runId) });
      return { ok: r.ok, entries: r.entries, problems: r.problems.slice(0, 20) };
    },

    async diff(_runId, base, commit) {
      if ((base !== '' && !isCommitName(base)) || !isCommitName(commit)) return null;
      // safeGit: no external diff, textconv or driver the repository configured runs here. No base: the
      // commit's own change.
      const r = await git.run(repo, ['diff', '--no-color', '--find-renames', base === '' ? `${commit}^..${commit}` : `${base}..${commit}`, '--'], { allowFail: true });
      if (r.exitCode !== 0) return null;
      return r.stdout.length > MAX_DIFF ? `${r.stdout.slice(0, MAX_DIFF)}\n` : r.stdout;
    },

    answer(runId, text, recorded): Promise<AnswerOutcome> {
      runDir(runId);
      return answerWithResume({ repo, runId, text, env, recorded });
    },

    close: () => Promise.resolve(),
  };
}

function ledgerSize(repo: string, runId: string): number {
  try {
    const dir = existingRunDir(repo, runId);
    const fd = dir === null ? null : openRegularForRead(join(dir, LEDGER_FILE));
    if (fd === null) return -1;
    try {
      return fstatSync(fd).size;
    } finally {
      closeSync(fd);
    }
  } catch {
    return -1;
  }
}

/** Complete lines from `from` on; a last line without its newline is still being written and waits. */
function readLines(path: string, from: Cursor, until?: number): { entries: LedgerEntry[]; cursor: Cursor } {
  const fd = openRegularForRead(path);
  if (fd === null) return { entries: [], cursor: from };
  try {
    const st = fstatSync(fd);
    if (st.size < from.offset) throw new AciaError('LEDGER_CORRUPT', `${path} is shorter than what was read of it`);
    const want = Math.min(st.size - from.offset, CHUNK);
    const buf = Buffer.alloc(want);
    let got = 0;
    while (got < want) {
      const n = readSync(fd, buf, got, want - got, from.offset + got);
      if (n === 0) break;
      got += n;
    }
    const entries: LedgerEntry[] = [];
    let at = 0;
    let seq = from.seq;
    for (let nl = buf.indexOf(0x0a, at); nl !== -1 && nl < got; nl = buf.indexOf(0x0a, at)) {
      if (until !== undefined && seq >= until) break;
      const e = parseLedgerLine(buf.subarray(at, nl).toString('utf8'), `${path}@${from.offset + at}`);
      if (e.seq !== seq) throw new AciaError('LEDGER_CORRUPT', `${path}: seq ${e.seq} where ${seq} was expected`);
      entries.push(e);
      seq++;
      at = nl + 1;
    }
    if (at === 0 && want === CHUNK && entries.length === 0) throw new AciaError('LEDGER_CORRUPT', `${path}: a line longer than ${CHUNK} bytes`);
    return { entries, cursor: { seq, offset: from.offset + at } };
  } finally {
    closeSync(fd);
  }
}
