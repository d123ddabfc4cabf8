import { WorkerPool, workerModule, type TaskWorker } from '../util/worker-pool.js';
import { packBytes, replaceOne, type ReplaceJob, type ReplaceResult } from './replace-one.js';
import type { Batch, BatchReply } from './workers/replace-worker.js';

export { errorOf, type ReplaceJob, type ReplaceResult } from './replace-one.js';

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

/** Below this many jobs, the messages to and from workers cost more than the parallel kernel work saves. */
const minimumForWorkers = 32;
/** Fewer removals suffice: freeing a file's blocks costs the kernel about as much as a whole replacement. */
const minimumRemovalsForWorkers = 8;
/**
 * While the workers are not running, fewer writes than this are made here
 * and the workers started after them, for the next rewind: booting four V8
 * isolates on the same cores slows a small rewind more than the threads
 * then save it.
 */
const minimumForStartingWorkers = 256;
/**
 * Larger files are written here: their cost is copying bytes, not the
 * kernel's work per file, and sending them to a worker would hold them in
 * memory twice (a rewind of thousands of large files keeps a flat budget).
 */
const largestForWorkers = 256 * 1024;
/** Jobs sent to a worker at once, and the most bytes in one message: few messages, none large. */
const batchJobs = 16;
const batchBytes = 1024 * 1024;
/** Batches sent to a worker and not yet answered: one it works on, one ready next; so a rewind holds few bytes. */
const batchesPerWorker = 2;

/**
 * Buffers that carry batches' bytes, shared with the workers and reused once their batch is answered: a buffer
 * moved to a worker is freed there, and each new one costs this thread a page fault per page as the bytes go in,
 * more than the copy itself. Up to `spareBytes` are kept between rewinds.
 */
const spareBuffers: SharedArrayBuffer[] = [];
const spareBytes = 4 * 1024 * 1024;

function sharedBuffer(size: number): SharedArrayBuffer {
  const index = spareBuffers.findIndex((buffer) => buffer.byteLength >= size);
  return index === -1 ? new SharedArrayBuffer(2 ** Math.ceil(Math.log2(Math.max(size, batchJobs * 16 * 1024)))) : spareBuffers.splice(index, 1)[0]!;
}

/**
 * Four, whatever the cores: part of the kernel work (an fsync above all)
 * blocks rather than computes, so more threads than cores keep them busy.
 */
const pool = new WorkerPool<Batch | 'warm-up', BatchReply>(workerModule(import.meta.url, 'replace-worker'), 4);

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
  /** Started at the first job that goes to them; `here` when they cannot run, or too few jobs are expected to be worth it. */
  private workers: ReadonlyArray<TaskWorker<Batch | 'warm-up', BatchReply>> | 'here' | undefined;
  private readonly stop = new Int32Array(new SharedArrayBuffer(4));
  /** `indices`: each job's place among all added, which jobs written here (large files) interleave. */
  private batch: { jobs: ReplaceJob[]; indices: number[]; bytes: number } | undefined;
  private readonly running = new Set<Promise<void>>();

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
    if (!enough || (!pool.started && expected < minimumForStartingWorkers)) this.workers = 'here';
  }

  /** True once a job has failed: the caller need not add more. */
  get stopped(): boolean {
    return Atomics.load(this.stop, 0) === 1;
  }

  async add(job: ReplaceJob): Promise<void> {
    const index = this.results.length;
    this.results.push(undefined);
    if (job.bytes.length > largestForWorkers || (this.workers ??= pool.get() ?? 'here') === 'here') {
      this.settle(index, replaceOne(job, this.stop));
      return;
    }
    this.batch ??= { jobs: [], indices: [], bytes: 0 };
    this.batch.jobs.push(job);
    this.batch.indices.push(index);
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

  private async send(): Promise<void> {
    const { jobs, indices, bytes } = this.batch!;
    this.batch = undefined;
    const workers = this.workers as ReadonlyArray<TaskWorker<Batch | 'warm-up', BatchReply>>;
    const leastBusy = () => workers.reduce((least, candidate) => (candidate.busy < least.busy ? candidate : least), workers[0]!);
    while (this.running.size > 0 && leastBusy().busy >= batchesPerWorker) await Promise.race(this.running);
    const packed = new Uint8Array(sharedBuffer(bytes), 0, bytes);
    const spans = packBytes(jobs.map((job) => job.bytes), packed);
    const batch: Batch = { jobs: jobs.map((job, offset) => ({ ...job, bytes: spans[offset]! })), bytes: packed, stop: this.stop };
    const done = leastBusy()
      .run(batch)
      .then(
        (results) => {
          if (spareBuffers.reduce((total, spare) => total + spare.byteLength, packed.buffer.byteLength) <= spareBytes) spareBuffers.push(packed.buffer);
          jobsDoneOnWorkers += results.length;
          results.forEach((result, offset) => this.settle(indices[offset]!, result));
        },
        // The worker died (it catches every error of a job, so only something like running out of memory does
        // this). Which of these it wrote is unknown: each file is whole, old or new, and the batch counts as failed.
        (error: unknown) => {
          Atomics.store(this.stop, 0, 1);
          const failed: ReplaceResult = { status: 'failed', error: { message: `a rewind worker stopped: ${String(error)}` } };
          indices.forEach((index) => this.settle(index, failed));
        },
      )
      .finally(() => this.running.delete(done));
    this.running.add(done);
  }
}

let jobsDoneOnWorkers = 0;

/** How many jobs worker threads have done in this process: for tests, that a large batch really left this thread. */
export function jobsDoneOffMainThread(): number {
  return jobsDoneOnWorkers;
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
