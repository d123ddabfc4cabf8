import crypto from 'node:crypto';
import fs from 'node:fs';
import { WorkerPool, type TaskWorker } from '../util/worker-pool.js';
import { temporaryName } from './atomic-write.js';

/**
 * Replacing (or removing) many files at once, each atomically and each only
 * while it is still what the caller saw. On ext4 the two calls that make an atomic
 * replacement (creating the temporary file, renaming it over the old one)
 * cost a few hundred microseconds each, mostly kernel work that runs in
 * parallel on other threads; one after another they were most of a
 * 1,000-file rewind. So the jobs of a large batch run on a few worker
 * threads, each doing whole files (check, write, rename) with no round trip
 * to the event loop between the steps; small batches, files over 256 KiB,
 * or any batch when workers cannot start, run right here through the same code.
 *
 * Only for directories pinned by handle (`PinnedDirectory.handlePath()`,
 * Linux): every name is reached through the open handle, which any thread
 * of the process can use, so a directory swapped for a link can never
 * redirect a write, whichever thread makes it.
 */

/** What the entry must still be for the write to go ahead. */
export type ExpectedEntry =
  | { kind: 'absent' }
  /** A regular file with these bytes and mode; `trustedSignature` proves it without reading (racy rule already applied). */
  | { kind: 'file'; sha256: string; mode: number; trustedSignature?: string | undefined };

export interface ReplaceJob {
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
   * Send back the bytes the file held (read, and checked against `expected`,
   * even where its signature vouches for it), for the caller's statistics:
   * the check reads them anyway when it cannot trust the signature, and the
   * caller then need not read the file a second time.
   */
  returnPrevious?: boolean;
  durable: boolean;
  /** An entry larger than this is not read to compare it: it is not what was seen. */
  maxBytes: number;
}

export type Refusal = 'changed' | 'symlink' | 'not-regular' | 'hard-link' | 'parent-changed';

export type ReplaceResult =
  /**
   * In place; `signature` (absent if the lstat after the rename failed) and `atNs` make the observation of the
   * written file. `previous`: what it replaced, when the job asked for it (none when there was no file).
   */
  | { status: 'written'; signature?: string; atNs: string; previous?: Uint8Array }
  | { status: 'removed'; previous?: Uint8Array }
  | { status: 'refused'; reason: Refusal }
  | { status: 'failed'; error: { message: string; code?: string; errno?: number; syscall?: string } }
  /** Not attempted: an earlier job failed. */
  | { status: 'not-started' };

/** Below this many jobs, waking workers costs more than it saves. */
const minimumForWorkers = 32;
/**
 * The same for removals: each frees a file's blocks in the kernel, about
 * as costly as a whole replacement (19 of them took 9 ms on the main thread
 * of a rewind on ext4), so fewer are worth sending.
 */
const minimumRemovalsForWorkers = 8;
/**
 * While the workers are not running, fewer writes than this are made here
 * and the workers started after them, for the next rewind: four threads
 * booting a V8 each, on the same two cores, slowed the rest of a rewind more
 * than they saved. A process's first rewind of the real tree's capture scope
 * (190 writes after 3,538 lstats) took 220-295 ms that way against 316-399 ms
 * with workers started at its beginning (separate processes); of 300 tracked
 * files 262-292 against 298-303 ms; of 500, 478-504 against 417-447 ms.
 */
const minimumForStartingWorkers = 256;
/**
 * Larger files are written here: their cost is copying bytes, not the
 * kernel's work per file, and sending them to a worker would hold them in
 * memory twice (a rewind of thousands of large files keeps a flat budget).
 */
const largestForWorkers = 256 * 1024;
/** Jobs sent to a worker at once, and the most bytes in one message. */
const batchJobs = 16;
const batchBytes = 1024 * 1024;
/** The most bytes waiting in workers at any time, so a rewind of large files holds only a few in memory. */
const bytesInFlight = 16 * 1024 * 1024;

/**
 * One job, from the check to the rename, as plain JavaScript over the
 * modules it is given. Workers get it as source text and this thread builds
 * it from the same text, so it must use nothing but its arguments.
 */
const replaceOneSource = `(fs, crypto, temporaryNames, job) => {
  const gone = (error) => error.code === 'ENOENT' || error.code === 'ENOTDIR' || error.code === 'ELOOP';
  const refused = (reason) => ({ status: 'refused', reason });
  const signatureOf = (stat) => stat.dev + ':' + stat.ino + ':' + stat.size + ':' + stat.mode + ':' + stat.mtimeNs + ':' + stat.ctimeNs;
  const C = fs.constants;
  try {
    let directory;
    try {
      directory = fs.readlinkSync(job.directoryHandle);
    } catch (error) {
      if (gone(error)) return refused('parent-changed');
      throw error;
    }
    if (directory !== job.directoryPath) return refused('parent-changed');
    const entry = job.directoryHandle + '/' + job.name;
    const stat = fs.lstatSync(entry, { bigint: true, throwIfNoEntry: false });
    let previous;
    if (stat === undefined) {
      if (job.expected.kind !== 'absent') return refused('changed');
    } else if (stat.isSymbolicLink()) {
      return refused('symlink');
    } else if (!stat.isFile()) {
      return refused('not-regular');
    } else {
      if (stat.nlink > 1n) return refused('hard-link');
      if (job.expected.kind !== 'file' || stat.size > BigInt(job.maxBytes)) return refused('changed');
      if (job.returnPrevious || signatureOf(stat) !== job.expected.trustedSignature) {
        // O_NONBLOCK: a FIFO swapped in after the lstat must not hang the open.
        const fd = fs.openSync(entry, C.O_RDONLY | C.O_NOFOLLOW | C.O_NONBLOCK);
        let content;
        let mode;
        try {
          // The open goes by name: what it opened must be the file just checked, so that the verdict on the
          // bytes is a verdict on that file.
          const opened = fs.fstatSync(fd, { bigint: true });
          if (!opened.isFile()) return refused('not-regular');
          if (opened.dev !== stat.dev || opened.ino !== stat.ino) return refused('changed');
          if (opened.nlink > 1n) return refused('hard-link');
          mode = Number(opened.mode & 0o7777n);
          content = fs.readFileSync(fd);
        } finally {
          fs.closeSync(fd);
        }
        if (mode !== job.expected.mode || crypto.createHash('sha256').update(content).digest('hex') !== job.expected.sha256) return refused('changed');
        if (job.returnPrevious) previous = content;
      }
    }
    // From here on the entry is only ever a name: removed, or replaced by a rename. Neither opens what is
    // there, so a hard link of an outside file renamed over it since the check loses this name, nothing else.
    if (job.remove) {
      fs.unlinkSync(entry);
      return { status: 'removed', previous };
    }
    const atNs = String(BigInt(Date.now()) * 1000000n);
    let temporary;
    let fd = -1;
    for (const name of temporaryNames) {
      temporary = job.directoryHandle + '/' + name;
      try {
        fd = fs.openSync(temporary, C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW, 0o600);
        break;
      } catch (error) {
        // One left by a crash (or taken by another process): the next name.
        if (error.code !== 'EEXIST' || name === temporaryNames[temporaryNames.length - 1]) throw error;
      }
    }
    try {
      try {
        for (let written = 0; written < job.bytes.length; ) written += fs.writeSync(fd, job.bytes, written, job.bytes.length - written);
        fs.fchmodSync(fd, job.mode); // exact mode, whatever the umask
        if (job.durable) fs.fsyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
      fs.renameSync(temporary, entry);
    } catch (error) {
      fs.rmSync(temporary, { force: true });
      throw error;
    }
    try {
      return { status: 'written', signature: signatureOf(fs.lstatSync(entry, { bigint: true })), atNs, previous };
    } catch {
      return { status: 'written', atNs, previous }; // written all the same; only the shortcut for the next check is lost
    }
  } catch (error) {
    return { status: 'failed', error: { message: String(error && error.message), code: error && error.code, errno: error && error.errno, syscall: error && error.syscall } };
  }
}`;

type ReplaceOne = (fsModule: typeof fs, cryptoModule: typeof crypto, temporaryNames: readonly string[], job: ReplaceJob) => ReplaceResult;

// Our own constant source, shared with the workers.
const replaceOne = new Function(`return ${replaceOneSource}`)() as ReplaceOne;

interface Batch {
  /** The jobs, each with the span of `bytes` it writes instead of bytes of its own. */
  jobs: Array<Omit<ReplaceJob, 'bytes'> & { bytes: { start: number; end: number } }>;
  /** The bytes of every job back to back, moved to the worker (not copied): one buffer per batch. */
  bytes: Uint8Array;
  temporaryNames: string[][];
  /** Set to 1 by whichever thread sees a job fail: later jobs are not started, in any thread. */
  stop: Int32Array;
}

/**
 * What a worker started for a later rewind (`startWorkersAfter`) is asked to
 * do first: one replacement and one removal in a scratch directory of its
 * own, removed after. A worker's first jobs otherwise pay for compiling this
 * code and Node's file functions in its own V8: the first rewind served by
 * workers that had started idle took 221-251 ms; warmed up as they booted,
 * 128-165 ms; warmed up by this job, 123-193 ms in four processes of six and
 * 290 and 326 ms in two (the real tree, separate processes, a noisier hour).
 * It is a job like the others, so the process
 * waits for it rather than end in the middle of it and leave the directory
 * behind. Any failure only skips it.
 */
const warmUpSource = `() => {
  const os = require('node:os');
  const path = require('node:path');
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'rewindable-warm-up-'));
  try {
    const handle = fs.openSync(directory, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
    try {
      const base = { directoryHandle: '/proc/self/fd/' + handle, directoryPath: fs.realpathSync(directory), name: 'file', mode: 0o600, durable: false, maxBytes: 1024 };
      const bytes = new Uint8Array(64);
      const written = { kind: 'file', sha256: crypto.createHash('sha256').update(bytes).digest('hex'), mode: 0o600 };
      replaceOne(fs, crypto, ['.file.1.tmp'], { ...base, expected: { kind: 'absent' }, bytes });
      replaceOne(fs, crypto, ['.file.2.tmp'], { ...base, expected: written, bytes });
      replaceOne(fs, crypto, [], { ...base, expected: written, bytes: new Uint8Array(0), remove: true });
    } finally {
      fs.closeSync(handle);
    }
  } finally {
    fs.rmSync(directory, { recursive: true, force: true });
  }
}`;

/** A batch's results as a worker sends them: each `previous` a span of the one buffer of them all. */
interface BatchReply {
  results: Array<SentBack<ReplaceResult>>;
  previous: Uint8Array;
}

type SentBack<Result> = Result extends { previous?: Uint8Array } ? Omit<Result, 'previous'> & { previous?: { start: number; end: number } } : Result;

const pool = new WorkerPool<Batch | 'warm-up', BatchReply>(
  `const fs = require('node:fs');
const crypto = require('node:crypto');
const replaceOne = ${replaceOneSource};
const warmUp = ${warmUpSource};
const handle = (message) => {
  if (message !== 'warm-up') return replaceAll(message);
  try {
    warmUp();
  } catch {}
  return { reply: { results: [], previous: new Uint8Array(0) } };
};
const replaceAll = ({ jobs, bytes, temporaryNames, stop }) => {
  const results = jobs.map((job, index) => {
    if (Atomics.load(stop, 0) === 1) return { status: 'not-started' };
    const result = replaceOne(fs, crypto, temporaryNames[index], { ...job, bytes: bytes.subarray(job.bytes.start, job.bytes.end) });
    if (result.status === 'failed') Atomics.store(stop, 0, 1);
    return result;
  });
  // The bytes sent back, as the batch came: one buffer, moved, each result with its span of it.
  let total = 0;
  for (const result of results) if (result.previous !== undefined) total += result.previous.length;
  const previous = new Uint8Array(total);
  let at = 0;
  for (const result of results) {
    if (result.previous === undefined) continue;
    previous.set(result.previous, at);
    result.previous = { start: at, end: at + result.previous.length };
    at += result.previous.end - result.previous.start;
  }
  return { reply: { results, previous }, transfer: [previous.buffer] };
};`,
  // Four, whatever the cores: part of the kernel work blocks rather than computes, and on two cores four
  // threads finished a 1,000-file rewind 10-20% sooner than two.
  4,
);

/**
 * Runs replacements (or removals) fed one at a time with `add`, on workers
 * when `expected` (the number of jobs the caller will add) is large enough
 * and the file is not (workers not yet running start with the first job sent
 * to them, from `minimumForStartingWorkers` jobs on); `finish` waits
 * for all of them. Results come back in the order the jobs were added. Once
 * a job fails, jobs not yet started are not started (`not-started`).
 */
export class ReplaceMany {
  private readonly results: Array<ReplaceResult | undefined> = [];
  /** Started at the first job that goes to them; `here` when they cannot run. */
  private workers: ReadonlyArray<TaskWorker<Batch | 'warm-up', BatchReply>> | 'here' | undefined;
  private readonly stop = new Int32Array(new SharedArrayBuffer(4));
  private batch: { jobs: ReplaceJob[]; first: number; bytes: number } | undefined;
  private readonly running = new Set<Promise<void>>();
  private waitingBytes = 0;

  /** Whether jobs may go to workers at all: enough of them (`expected`, the number the caller will add) to be worth it. */
  private readonly worthWorkers: boolean;

  /**
   * `onResult` is called with each job's result as soon as it is known (the
   * job's index, in the order added): right away for a job run here, when
   * its batch comes back for one run on a worker.
   */
  constructor(
    expected: number,
    kind: 'writes' | 'removals' = 'writes',
    private readonly onResult?: (index: number, result: ReplaceResult) => void,
  ) {
    const enough = expected >= (kind === 'removals' ? minimumRemovalsForWorkers : minimumForWorkers);
    this.worthWorkers = enough && (pool.started || expected >= minimumForStartingWorkers);
  }

  /** True once a job has failed: the caller need not add more. */
  get stopped(): boolean {
    return Atomics.load(this.stop, 0) === 1;
  }

  async add(job: ReplaceJob): Promise<void> {
    const index = this.results.length;
    this.results.push(undefined);
    if (!this.worthWorkers || job.bytes.length > largestForWorkers || (this.workers ??= pool.get() ?? 'here') === 'here') {
      this.settle(index, this.stopped ? { status: 'not-started' } : this.runHere(job));
      return;
    }
    this.batch ??= { jobs: [], first: index, bytes: 0 };
    this.batch.jobs.push(job);
    this.batch.bytes += job.bytes.length;
    if (this.batch.jobs.length >= batchJobs || this.batch.bytes >= batchBytes) await this.send();
  }

  async finish(): Promise<ReplaceResult[]> {
    if (this.batch !== undefined) await this.send();
    while (this.running.size > 0) await Promise.race(this.running);
    return this.results.map((result) => result ?? { status: 'not-started' });
  }

  private settle(index: number, result: ReplaceResult): void {
    this.results[index] = result;
    this.onResult?.(index, result);
  }

  private runHere(job: ReplaceJob): ReplaceResult {
    const result = replaceOne(fs, crypto, temporaryNamesFor(job), job);
    if (result.status === 'failed') Atomics.store(this.stop, 0, 1);
    return result;
  }

  private async send(): Promise<void> {
    const { jobs, first, bytes } = this.batch!;
    this.batch = undefined;
    while (this.waitingBytes > 0 && this.waitingBytes + bytes > bytesInFlight) await Promise.race(this.running);
    const workers = this.workers as ReadonlyArray<TaskWorker<Batch | 'warm-up', BatchReply>>;
    const worker = workers.reduce((least, candidate) => (candidate.busy < least.busy ? candidate : least), workers[0]!);
    this.waitingBytes += bytes;
    const { batch, transfer } = batchOf(jobs, bytes, this.stop);
    const done = worker
      .run(batch, transfer)
      .then(
        ({ results, previous }) =>
          results.forEach((result, offset) => {
            const span = 'previous' in result ? result.previous : undefined;
            this.settle(first + offset, (span === undefined ? result : { ...result, previous: previous.subarray(span.start, span.end) }) as ReplaceResult);
          }),
        // The worker died (it catches every error of a job, so only something like running out of memory does
        // this). Which of these it wrote is unknown: each file is whole, old or new, and the batch counts as failed.
        (error: unknown) => {
          Atomics.store(this.stop, 0, 1);
          const failed: ReplaceResult = { status: 'failed', error: { message: `a rewind worker stopped: ${String(error)}` } };
          jobs.forEach((_, offset) => this.settle(first + offset, failed));
        },
      )
      .finally(() => {
        this.waitingBytes -= bytes;
        this.running.delete(done);
      });
    this.running.add(done);
  }
}

/** Starts the workers, if they are not running: they boot on their own threads. */
export function startWorkers(): void {
  pool.get();
}

/**
 * Starts the workers now (they take tens of milliseconds to boot, on
 * another core) if a `ReplaceMany` of `expected()` writes would start them:
 * a rewind calls this before it plans, so that its first writes find them
 * ready. `expected` is only counted while the workers are not running.
 */
export function startWorkersFor(expected: () => number): void {
  if (!pool.started && expected() >= minimumForStartingWorkers) startWorkers();
}

/**
 * After a rewind that made `written` changes: if they were made here only
 * because the workers were not running, starts the workers for the next
 * rewind, and warms them up, once the caller has its result. Unreferenced, so
 * that a process about to end (a command line's one rewind) does not start
 * them for nothing.
 */
export function startWorkersAfter(written: number): void {
  if (written >= minimumForWorkers && !pool.started) setImmediate(warmUpWorkers).unref();
}

function warmUpWorkers(): void {
  for (const worker of pool.get() ?? []) worker.run('warm-up').catch(() => {}); // a pool that fails is given up by itself
}

/**
 * A batch as sent to a worker. Cloning each job's bytes would copy the whole
 * buffer under every one (a member of a bundle is a view into the bundle);
 * one buffer of exactly their bytes, moved, copies each once.
 */
function batchOf(jobs: readonly ReplaceJob[], totalBytes: number, stop: Int32Array): { batch: Batch; transfer: ArrayBuffer[] } {
  // Not zero-filled (every byte is set below), and never a slice of the shared pool: it is moved to the worker.
  const bytes = Buffer.allocUnsafeSlow(totalBytes);
  let at = 0;
  const spans = jobs.map((job) => {
    bytes.set(job.bytes, at);
    at += job.bytes.length;
    return { ...job, bytes: { start: at - job.bytes.length, end: at } };
  });
  return { batch: { jobs: spans, bytes, temporaryNames: jobs.map(temporaryNamesFor), stop }, transfer: [bytes.buffer] };
}

/** Three names to try in turn, should one be taken by a file a crash left behind. */
function temporaryNamesFor(job: ReplaceJob): string[] {
  return [temporaryName(job.name), temporaryName(job.name), temporaryName(job.name)];
}

/** An error as a worker reported it, with its errno fields back on it. */
export function errorOf(result: Extract<ReplaceResult, { status: 'failed' }>): NodeJS.ErrnoException {
  return Object.assign(new Error(result.error.message), result.error) as NodeJS.ErrnoException;
}
