import fs from 'node:fs';
import type { StatKey } from './stat-signature.js';

/**
 * The lstat loop of a batch glance, run by the main thread and by the
 * glance workers alike. Each way to a worker is one block: the paths as one
 * string joined by NUL (which no path holds), the findings packed as numbers
 * in one moved buffer. Arrays of strings or objects are cloned item by item
 * on the sending thread (for 500,000 paths, 0.37 s of a 2.6 s scan).
 */
export const pathSeparator = '\0';

/** Per path: kind, nlink, dev, ino, size, mode, mtimeMs, ctimeMs. */
const fieldsPerPath = 8;
const isFile = 1;

/** Lstats every path (a link is never followed), number (not bigint) stats: what a glance compares. */
export function lstatFields(paths: readonly string[]): Float64Array<ArrayBuffer> {
  const fields = new Float64Array(paths.length * fieldsPerPath);
  for (let index = 0; index < paths.length; index += 1) {
    let stat: fs.Stats | undefined;
    try {
      stat = fs.lstatSync(paths[index]!, { throwIfNoEntry: false });
    } catch {
      continue; // looked at closely by the caller, with the error reported there
    }
    if (stat?.isFile() !== true) continue;
    const at = index * fieldsPerPath;
    fields[at] = isFile;
    fields[at + 1] = stat.nlink;
    fields[at + 2] = stat.dev;
    fields[at + 3] = stat.ino;
    fields[at + 4] = stat.size;
    fields[at + 5] = stat.mode;
    fields[at + 6] = stat.mtimeMs;
    fields[at + 7] = stat.ctimeMs;
  }
  return fields;
}

/**
 * What a glance found at the path numbered `index`: `file` for a regular
 * file, with its signature's fields and link count; `other` for anything
 * else (absent, not a file, not readable), which has nothing to compare.
 * `key` is one object reused for every call: copy what must be kept.
 */
export type VisitPath = (index: number, kind: 'file' | 'other', key: StatKey, nlink: number) => void;

/** Calls `visit` for each path of `fields`, numbered from `first`. */
export function visitFields(fields: Float64Array, first: number, visit: VisitPath): void {
  const key: StatKey = { dev: 0, ino: 0, size: 0, mode: 0, mtimeMs: 0, ctimeMs: 0 };
  for (let at = 0, index = first; at < fields.length; at += fieldsPerPath, index += 1) {
    if (fields[at] !== isFile) {
      visit(index, 'other', key, 0);
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
