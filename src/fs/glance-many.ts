import fs from 'node:fs';
import path from 'node:path';
import type { Observation } from '../schemas.js';
import { WorkerPool } from '../util/worker-pool.js';
import { stillAsSeen, type StatKey } from './stat-signature.js';

/**
 * Plain lstats of many paths at once. Checking a tree of tens of thousands
 * of files for changes is one lstat per file, and the lstats (the path
 * lookups in the kernel, and Node's work around each call) are nearly all
 * the cost. Large batches are split across two worker threads, as git's
 * preloaded index does with threads; small ones, or any batch when workers
 * cannot start, are done right here. A link in the place of a file is
 * never followed (lstat); links on the way to it are the caller's to rule
 * out (`LinkFreeDirectories`).
 */

/**
 * Below this many paths, waking workers costs more than it saves. On two
 * cores, the plan of a rewind over 3,538 files took 73-74 ms with the lstats
 * here and 85-93 ms with them on workers (medians, alternating); over
 * 20,000 files the workers won, 155 ms against 212.
 */
export const minimumForWorkers = 8192;
const workerCount = 2;
/** Per path: status, nlink, dev, ino, size, mode, mtimeMs, ctimeMs. */
const fieldsPerPath = 8;
const enum Status {
  Absent = 0,
  File = 1,
  Other = 2,
  Error = 3,
}

/** What one lstat found: `file` comes with its key and link count; the others have nothing to compare. */
export type GlanceKind = 'file' | 'other' | 'absent' | 'error';

/**
 * Lstats every path and calls `visit` with each one's index and findings, in
 * order. `key` is one object reused for every call: copy what must be kept.
 */
export async function glanceMany(paths: readonly string[], visit: (index: number, kind: GlanceKind, key: StatKey, nlink: number) => void): Promise<void> {
  const parts = await lstatInParts(paths);
  const key: StatKey = { dev: 0, ino: 0, size: 0, mode: 0, mtimeMs: 0, ctimeMs: 0 };
  let index = 0;
  for (const fields of parts) {
    for (let at = 0; at < fields.length; at += fieldsPerPath, index += 1) {
      const status = fields[at] as Status;
      if (status !== Status.File) {
        visit(index, status === Status.Absent ? 'absent' : status === Status.Other ? 'other' : 'error', key, 0);
        continue;
      }
      key.dev = fields[at + 2]!;
      key.ino = fields[at + 3]!;
      key.size = fields[at + 4]!;
      key.mode = fields[at + 5]!;
      key.mtimeMs = fields[at + 6]!;
      key.ctimeMs = fields[at + 7]!;
      visit(index, 'file', key, fields[at + 1]!);
    }
  }
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

async function lstatInParts(paths: readonly string[]): Promise<Float64Array[]> {
  const workers = paths.length >= minimumForWorkers ? pool.get() : undefined;
  if (workers !== undefined) {
    try {
      const size = Math.ceil(paths.length / workers.length);
      return await Promise.all(workers.map((worker, index) => worker.run(paths.slice(index * size, (index + 1) * size))));
    } catch {
      // A worker that failed or exited: the pool is gone, and this batch is done here.
    }
  }
  return [lstatAll(paths)];
}

/**
 * The loop both sides run. Workers get it as source text (`lstatAll` below
 * is built from the same text), so it must use nothing but its arguments.
 */
const lstatLoopSource = `(fs, paths) => {
  const fields = new Float64Array(paths.length * ${fieldsPerPath});
  for (let index = 0; index < paths.length; index += 1) {
    const at = index * ${fieldsPerPath};
    let stat;
    try {
      stat = fs.lstatSync(paths[index], { throwIfNoEntry: false });
    } catch {
      fields[at] = ${Status.Error};
      continue;
    }
    if (stat === undefined) fields[at] = ${Status.Absent};
    else if (!stat.isFile()) fields[at] = ${Status.Other};
    else {
      fields[at] = ${Status.File};
      fields[at + 1] = stat.nlink;
      fields[at + 2] = stat.dev;
      fields[at + 3] = stat.ino;
      fields[at + 4] = stat.size;
      fields[at + 5] = stat.mode;
      fields[at + 6] = stat.mtimeMs;
      fields[at + 7] = stat.ctimeMs;
    }
  }
  return fields;
}`;

// Our own constant source, shared with the workers.
const lstatLoop = new Function(`return ${lstatLoopSource}`)() as (fsModule: typeof fs, paths: readonly string[]) => Float64Array;

function lstatAll(paths: readonly string[]): Float64Array {
  return lstatLoop(fs, paths);
}

/** Two threads, as git's preloaded index uses a few. */
const pool = new WorkerPool<string[], Float64Array>(
  `const fs = require('node:fs');
const lstatLoop = ${lstatLoopSource};
const handle = (paths) => { const fields = lstatLoop(fs, paths); return { reply: fields, transfer: [fields.buffer] }; };`,
  workerCount,
);
