import fs from 'node:fs';
import path from 'node:path';
import type { Observation } from '../schemas.js';
import { stillAsSeen, type StatKey } from './stat-signature.js';

/**
 * Plain lstats of many paths at once. Checking a tree of tens of thousands
 * of files for changes is one lstat per file, and the lstats (the path
 * lookups in the kernel, and Node's work around each call) are nearly all
 * the cost: a plain synchronous loop, with a number (not bigint) lstat,
 * does them for the least. A link in the place of a file is never followed
 * (lstat); links on the way to it are the caller's to rule out
 * (`LinkFreeDirectories`).
 */

/**
 * Lstats every path and calls `visit` with each one's index and findings, in
 * order: `file` for a regular file, with its signature's fields and link
 * count; `other` for anything else (absent, not a file, not readable), which
 * has nothing to compare.
 */
export function glanceMany(paths: readonly string[], visit: (index: number, kind: 'file' | 'other', key: StatKey, nlink: number) => void): void {
  paths.forEach((file, index) => {
    let stat: fs.Stats | undefined;
    try {
      stat = fs.lstatSync(file, { throwIfNoEntry: false });
    } catch {
      stat = undefined; // looked at closely by the caller, with the error reported there
    }
    if (stat?.isFile() === true) visit(index, 'file', stat, stat.nlink);
    else visit(index, 'other', noKey, 0);
  });
}

const noKey: StatKey = { dev: 0, ino: 0, size: 0, mode: 0, mtimeMs: 0, ctimeMs: 0 };

/**
 * For each entry, whether it is still what was seen (`stillAsSeen`: a
 * regular file with one link, unchanged since `observed`, the racy rule
 * included). False means "look closer", never "changed".
 */
export function unchangedSinceSeen(entries: ReadonlyArray<{ path: string; observed: Observation }>): boolean[] {
  const verdicts = new Array<boolean>(entries.length).fill(false);
  glanceMany(
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
