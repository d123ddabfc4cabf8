import fs from 'node:fs';
import path from 'node:path';
import type { FileType } from '../schemas.js';
import type { DirectoryCache } from './directory-cache.js';
import { noFollow, PinnedDirectory } from './pinned-directory.js';
import { wallClockNs } from './stat-signature.js';

/**
 * What is at a tracked path right now, found without following any link.
 * Paths handed in are canonical: their parent part was a real directory path
 * when first tracked, so a parent that no longer resolves to itself means a
 * link or a move appeared since, and nothing is written through it.
 */
export type Inspection =
  /** `missingParents`: how many of its nearest ancestors do not exist either (0: its parent does). */
  | { kind: 'absent'; missingParents: number }
  | { kind: 'file'; stat: fs.BigIntStats; observedAtNs: bigint; content?: Buffer }
  | { kind: 'too-large'; stat: fs.BigIntStats }
  | { kind: 'symlink' }
  | { kind: 'not-regular'; fileType: FileType }
  | { kind: 'unsafe-parent'; reason: string };

export interface InspectOptions {
  /** Read the file's bytes: always, or only when `needsContent(stat)` says so. */
  read: boolean | ((stat: fs.BigIntStats) => boolean);
  /** Files larger than this are reported as `too-large` and not read. */
  maxBytes: number;
}

/** Inspects a path through its pinned parent (taken from `directories` when given, which then owns it). */
export function inspectPath(filePath: string, options: InspectOptions, directories?: DirectoryCache): Inspection {
  const parent = directories !== undefined ? directories.open(path.dirname(filePath)) : PinnedDirectory.open(path.dirname(filePath));
  if (typeof parent === 'string') {
    if (parent !== 'missing') return { kind: 'unsafe-parent', reason: parentReason(parent) };
    const ancestors = findMissingParents(path.dirname(filePath));
    return 'problem' in ancestors ? { kind: 'unsafe-parent', reason: ancestors.problem } : { kind: 'absent', missingParents: ancestors.missing };
  }
  try {
    return inspectEntry(parent, path.basename(filePath), options);
  } finally {
    if (directories === undefined) parent.close();
  }
}

/** Inspects `name` inside an already pinned directory (the rewind keeps it open for the write that follows). */
export function inspectEntry(directory: PinnedDirectory, name: string, options: InspectOptions): Inspection {
  let stat: fs.BigIntStats;
  try {
    stat = fs.lstatSync(directory.entry(name), { bigint: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'absent', missingParents: 0 };
    throw error;
  }
  if (stat.isSymbolicLink()) return { kind: 'symlink' };
  if (!stat.isFile()) return { kind: 'not-regular', fileType: fileTypeOf(stat) };
  if (stat.size > BigInt(options.maxBytes)) return { kind: 'too-large', stat };
  const wantContent = typeof options.read === 'function' ? options.read(stat) : options.read;
  if (!wantContent) return { kind: 'file', stat, observedAtNs: wallClockNs() };
  return readRegularFile(directory.entry(name), options.maxBytes);
}

/** Reads the regular file at `entry` (opened without following a link, and without blocking on a FIFO). */
export function readRegularFile(entry: string, maxBytes: number): Inspection {
  // O_NONBLOCK: if a FIFO was swapped in after the lstat, opening it must not hang.
  const flags = fs.constants.O_RDONLY | noFollow | (fs.constants.O_NONBLOCK ?? 0);
  for (let attempt = 0; ; attempt += 1) {
    const observedAtNs = wallClockNs();
    let fd: number;
    try {
      fd = fs.openSync(entry, flags);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return { kind: 'absent', missingParents: 0 };
      if (code === 'ELOOP') return { kind: 'symlink' };
      throw error;
    }
    try {
      const stat = fs.fstatSync(fd, { bigint: true });
      if (!stat.isFile()) return { kind: 'not-regular', fileType: fileTypeOf(stat) };
      if (stat.size > BigInt(maxBytes)) return { kind: 'too-large', stat };
      const content = readToEnd(fd, Number(stat.size), maxBytes);
      if (content === undefined) return { kind: 'too-large', stat: fs.fstatSync(fd, { bigint: true }) };
      const after = fs.fstatSync(fd, { bigint: true });
      // Written to while we read: read again so bytes and signature belong together.
      if ((after.mtimeNs !== stat.mtimeNs || after.size !== stat.size || BigInt(content.length) !== after.size) && attempt < 3) continue;
      return { kind: 'file', stat, observedAtNs, content };
    } finally {
      fs.closeSync(fd);
    }
  }
}

function readToEnd(fd: number, expected: number, maxBytes: number): Buffer | undefined {
  // One byte more than expected: the read that finds the end then needs no larger buffer (and no copy).
  let buffer = Buffer.allocUnsafe(expected + 1);
  let length = 0;
  for (;;) {
    if (length === buffer.length) {
      if (length > maxBytes) return undefined;
      const grown = Buffer.allocUnsafe(buffer.length * 2);
      buffer.copy(grown, 0, 0, length);
      buffer = grown;
    }
    const wanted = buffer.length - length;
    const count = fs.readSync(fd, buffer, length, wanted, null);
    length += count;
    // Short of the extra byte with exactly the expected size read: the end, with no further read to find it
    // (had the file grown meanwhile, the caller's fstat after reading sees it).
    if (count === 0 || (length === expected && count < wanted)) break;
  }
  return length > maxBytes ? undefined : buffer.subarray(0, length);
}

/**
 * For a path whose parent directory is gone: every ancestor that still exists
 * must be a real directory at its own path. Returns how many ancestors are
 * missing (the parent and the ones above it), or why not.
 * An I/O error is thrown rather than reported as a changed parent.
 */
export function findMissingParents(directory: string): { missing: number } | { problem: string } {
  let missing = 0;
  for (let current = directory; ; current = path.dirname(current)) {
    let stat: fs.Stats;
    try {
      stat = fs.lstatSync(current);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if ((code === 'ENOENT' || code === 'ENOTDIR') && path.dirname(current) !== current) {
        missing += 1;
        continue;
      }
      throw error;
    }
    if (stat.isSymbolicLink()) return { problem: `${current} is now a symbolic link` };
    if (!stat.isDirectory()) return { problem: `${current} is not a directory` };
    try {
      return fs.realpathSync.native(current) === current ? { missing } : { problem: `${current} no longer resolves to itself` };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'ELOOP') return { problem: `${current} changed while it was checked` };
      throw error;
    }
  }
}

function parentReason(failure: 'link' | 'not-directory' | 'moved'): string {
  if (failure === 'link') return 'its parent directory was replaced by a symbolic link';
  if (failure === 'not-directory') return 'its parent path is no longer a directory';
  return 'its parent directory no longer resolves to where it was when first tracked';
}

export function fileTypeOf(stat: fs.BigIntStats | fs.Stats): FileType {
  if (stat.isDirectory()) return 'directory';
  if (stat.isFIFO()) return 'fifo';
  if (stat.isSocket()) return 'socket';
  if (stat.isCharacterDevice()) return 'character-device';
  if (stat.isBlockDevice()) return 'block-device';
  return 'unknown';
}
