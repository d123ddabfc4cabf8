import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sha256 } from '../../hash.js';
import { serveTasks } from '../../util/worker-pool.js';
import { PinnedDirectory } from '../pinned-directory.js';
import { replaceOne, type ReplaceJob, type ReplaceResult, type Span } from '../replace-one.js';

/**
 * A worker thread of `ReplaceMany`: runs each job of a batch through the same
 * `replaceOne` as the main thread, and sends the results back.
 */

/** A batch as `ReplaceMany` sends it. */
export interface Batch {
  /** The jobs, each with the span of `bytes` it writes instead of bytes of its own. */
  jobs: Array<Omit<ReplaceJob, 'bytes'> & { bytes: Span }>;
  /** The bytes of every job back to back, in a buffer shared with the sender (not copied), which reuses it once answered. */
  bytes: Uint8Array;
  /** Set to 1 by whichever thread sees a job fail: later jobs are not started, in any thread. */
  stop: Int32Array;
}

/** A batch's results, in the order of its jobs. */
export type BatchReply = ReplaceResult[];

serveTasks<Batch | 'warm-up', BatchReply>((message) => {
  if (message === 'warm-up') {
    try {
      warmUp();
    } catch {
      // Only a head start: a worker that cannot warm up still does its jobs.
    }
    return { reply: [] };
  }
  const { jobs, bytes, stop } = message;
  return { reply: jobs.map((job) => replaceOne({ ...job, bytes: bytes.subarray(job.bytes.start, job.bytes.end) }, stop)) };
});

/**
 * One replacement and one removal in a scratch directory of its own: a
 * worker's first jobs otherwise pay for compiling this code and Node's file
 * functions in its own V8, in the middle of a rewind.
 */
function warmUp(): void {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'rewindable-warm-up-'));
  let pinned: ReturnType<typeof PinnedDirectory.open> | undefined;
  try {
    pinned = PinnedDirectory.open(fs.realpathSync(directory));
    if (typeof pinned === 'string' || pinned.handlePath() === undefined) return;
    const bytes = new Uint8Array(64);
    const base = { directoryHandle: pinned.handlePath()!, directoryPath: pinned.path, name: 'file', bytes, mode: 0o600, durable: false, maxBytes: 1024 };
    const written = { kind: 'file', sha256: sha256(bytes), mode: 0o600 } as const;
    const stop = new Int32Array(1);
    replaceOne({ ...base, expected: { kind: 'absent' } }, stop);
    replaceOne({ ...base, expected: written }, stop);
    replaceOne({ ...base, expected: written, bytes: new Uint8Array(0), remove: true }, stop);
  } finally {
    if (typeof pinned === 'object') pinned.close();
    fs.rmSync(directory, { recursive: true, force: true });
  }
}
