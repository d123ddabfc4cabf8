import fs from 'node:fs';
import path from 'node:path';
import type { Observation } from '../schemas.js';
import { WorkerPool, workerModule } from '../util/worker-pool.js';
import { lstatFields, pathSeparator, visitFields, type VisitPath } from './lstat-fields.js';
import { stillAsSeen } from './stat-signature.js';

/**
 * Plain lstats of many paths at once. Checking a tree for changes is one
 * lstat per file, and the lstats (the kernel's path lookups, and Node's work
 * around each call) are nearly all the cost. Large batches are split across
 * two worker threads, as git's preloaded index does; small ones, or any
 * batch when workers cannot start, run here through the same loop
 * (lstat-fields.ts). A link in the place of a file is never followed; links
 * on the way to it are the caller's to rule out (`LinkFreeDirectories`).
 */

/**
 * Below this many paths, the messages to the workers cost more than they
 * save: a rewind plan of a few thousand files was slower with them, a
 * capture scan of 20,000 files faster (docs/benchmarks.md, "Threads or
 * promises"; measured on a 2-core machine only). It changes only speed:
 * both sides run the same loop.
 */
export const minimumForWorkers = 8192;

/** Two threads, as git's preloaded index uses a few: the kernel's path lookups, not the cores, are what they overlap. */
const pool = new WorkerPool<string, Float64Array<ArrayBuffer>>(workerModule(import.meta.url, 'lstat-worker'), 2);

/** Lstats every path and calls `visit` with each one's findings, in order of index. */
export async function glanceMany(paths: readonly string[], visit: VisitPath): Promise<void> {
  const workers = paths.length >= minimumForWorkers ? pool.get() : undefined;
  if (workers !== undefined) {
    const size = Math.ceil(paths.length / workers.length);
    // A worker that failed or exited, or a part that could not be joined: this batch is done here (nothing was visited yet).
    const parts = await Promise.all(workers.map(async (worker, index) => worker.run(paths.slice(index * size, (index + 1) * size).join(pathSeparator)))).catch(() => undefined);
    if (parts !== undefined) {
      glancedOnWorkers += paths.length;
      parts.forEach((fields, index) => visitFields(fields, index * size, visit));
      return;
    }
  }
  visitFields(lstatFields(paths), 0, visit);
}

let glancedOnWorkers = 0;

/** How many paths worker threads have glanced at in this process: for tests, that a large batch really left this thread. */
export function pathsGlancedOffMainThread(): number {
  return glancedOnWorkers;
}

/**
 * For each entry, whether it is still what was seen (`stillAsSeen`: a
 * regular file with one link, unchanged since `observed`, the racy rule
 * included). False means "look closer", never "changed".
 */
export async function unchangedSinceSeen(entries: ReadonlyArray<{ path: string; observed: Observation }>): Promise<boolean[]> {
  const verdicts = new Array<boolean>(entries.length).fill(false);
  await glanceMany(
    entries.map((entry) => entry.path),
    (index, kind, key, nlink) => (verdicts[index] = stillAsSeen(entries[index]!.observed, kind === 'file', nlink, key)),
  );
  return verdicts;
}

/** `unchangedSinceSeen` for one path, right here. */
export function unchangedSinceSeenNow(file: string, observed: Observation): boolean {
  let verdict = false;
  visitFields(lstatFields([file]), 0, (_, kind, key, nlink) => (verdict = stillAsSeen(observed, kind === 'file', nlink, key)));
  return verdict;
}

/**
 * Which directories are directories right now with no link anywhere on
 * their path (absolute, canonical paths). Each directory on the way is
 * looked at once (lstat), however many share it, for as long as this
 * object is kept (one operation: a checkpoint, a rewind).
 */
export class LinkFreeDirectories {
  private readonly verdicts = new Map<string, boolean>();

  has(directory: string): boolean {
    let verdict = this.verdicts.get(directory);
    if (verdict === undefined) {
      const parent = path.dirname(directory);
      verdict = (parent === directory || this.has(parent)) && isDirectoryItself(directory);
      this.verdicts.set(directory, verdict);
    }
    return verdict;
  }
}

function isDirectoryItself(directory: string): boolean {
  try {
    return fs.lstatSync(directory, { throwIfNoEntry: false })?.isDirectory() === true;
  } catch {
    return false; // unreadable: looked at closely, with the error reported there
  }
}
