import fs from 'node:fs';
import { lineStats, type LineStats } from '../text/line-stats.js';
import { writeFileAtomicallySync } from './atomic-write.js';
import { checkEntry, type CheckOptions, type EntryRefusal, type ExpectedEntry } from './entry.js';
import { directoryAtHandle } from './pinned-directory.js';
import { statSignature, wallClockNs } from './stat-signature.js';

/**
 * One replacement (or removal) of a file, from the check to the rename, in
 * one synchronous run: what `ReplaceMany` does for each job, on this thread
 * or on a worker (replace-worker.ts). The directory is reached through its
 * handle path, valid in every thread of the process. Between threads, the
 * bytes of a batch travel packed in one buffer (`packBytes`); results carry no bytes.
 */

export interface ReplaceJob extends Pick<CheckOptions, 'maxBytes'> {
  /** The pinned directory's handle path, and the path it must still resolve to. */
  directoryHandle: string;
  directoryPath: string;
  name: string;
  expected: ExpectedEntry;
  /** The new content, with its mode; none (empty, ignored) for a removal. */
  bytes: Uint8Array;
  mode: number;
  /** Remove the file instead of replacing it (once it is found to be what was seen). */
  remove?: boolean;
  /**
   * Count the line statistics of the change (`lineStats` of the bytes the
   * file held against `bytes`, none for a removal) and send them back: the
   * file is read, and checked against `expected`, even where its signature
   * vouches for it. The check reads it anyway when it cannot trust the
   * signature; counting where it was read spares sending its bytes back.
   */
  countLines?: boolean;
  durable: boolean;
}

export type ReplaceResult =
  /**
   * In place; `signature` (absent if the lstat after the rename failed) and `atNs` make the observation of the
   * written file. `stats`: the change's line statistics, when the job asked for them.
   */
  | { status: 'written'; signature?: string; atNs: string; stats?: LineStats }
  | { status: 'removed'; stats?: LineStats }
  | { status: 'refused'; reason: EntryRefusal }
  | { status: 'failed'; error: { message: string; code?: string; errno?: number; syscall?: string } }
  /** Not attempted: an earlier job failed. */
  | { status: 'not-started' };

/** `stop` is shared by the jobs of one `ReplaceMany`, in every thread: a job that fails sets it, and later ones are not started. */
export function replaceOne(job: ReplaceJob, stop: Int32Array): ReplaceResult {
  if (Atomics.load(stop, 0) === 1) return { status: 'not-started' };
  try {
    const directory = directoryAtHandle(job.directoryHandle, job.directoryPath);
    const found = checkEntry(directory, job.name, job.expected, { maxBytes: job.maxBytes, read: job.countLines === true });
    if (typeof found === 'string') return { status: 'refused', reason: found };
    const stats = job.countLines === true ? lineStats(found.content, job.remove === true ? undefined : job.bytes) : undefined;
    const entry = directory.entry(job.name);
    // From here on the entry is only ever a name: removed, or replaced by a rename. Neither opens what is
    // there, so a hard link of an outside file renamed over it since the check loses this name, nothing else.
    if (job.remove === true) {
      fs.unlinkSync(entry);
      return { status: 'removed', ...(stats !== undefined ? { stats } : {}) };
    }
    const atNs = String(wallClockNs());
    const written = writeFileAtomicallySync(directory, job.name, job.bytes, job.mode, job.durable);
    // Without a signature (its fstat failed) the file is written all the same; only the shortcut for the next check is lost.
    return { status: 'written', ...(written !== undefined ? { signature: statSignature(written) } : {}), atNs, ...(stats !== undefined ? { stats } : {}) };
  } catch (error) {
    Atomics.store(stop, 0, 1);
    const { message, code, errno, syscall } = error as NodeJS.ErrnoException;
    return { status: 'failed', error: { message: String(message), code, errno, syscall } };
  }
}

/** An error as `replaceOne` reported it, with its errno fields back on it. */
export function errorOf(result: Extract<ReplaceResult, { status: 'failed' }>): NodeJS.ErrnoException {
  return Object.assign(new Error(result.error.message), result.error) as NodeJS.ErrnoException;
}

/** Where the bytes of one job are in the one buffer its batch carries. */
export type Span = { start: number; end: number };

/** `parts` back to back in `into` (at least their total length), with where each is in it: what goes to a worker. */
export function packBytes(parts: readonly Uint8Array[], into: Uint8Array): Span[] {
  let at = 0;
  return parts.map((part) => {
    into.set(part, at);
    at += part.length;
    return { start: at - part.length, end: at };
  });
}
