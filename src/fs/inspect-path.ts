import fs from 'node:fs';
import path from 'node:path';
import { sha256 } from '../hash.js';
import type { FileState, FileType, Observation, RegularFileState } from '../schemas.js';
import type { DirectoryCache } from './directory-cache.js';
import { noFollow, PinnedDirectory, pinNearestDirectory, type PinFailure } from './pinned-directory.js';
import { isUnchangedSince, observe, wallClockNs } from './stat-signature.js';

/**
 * What is at a path right now, found without following any link: the state
 * a checkpoint records for it, and what was learnt on the way. Paths handed
 * in are canonical: their parent part was a real directory path when first
 * tracked, so a parent that no longer resolves to itself means a link or a
 * move appeared since, and nothing is written through it.
 */
export interface ObservedPath {
  state: FileState;
  /** Stat signature that goes with `state` (regular files only). */
  observed?: Observation;
  /** The bytes, when they were read. */
  content?: Buffer;
  /** Regular files (and files over the size cap); `nlink` tells hard links apart. */
  stat?: fs.BigIntStats;
  /** For `unsafe-parent`: what changed on the way to the file. */
  reason?: string;
  /** For `absent`: how many of its nearest ancestors are missing too (see `TrackRecord.missingParents`). */
  missingParents?: number;
}

/** A regular file as last seen: its state, and the signature that proves it while it still matches. */
export interface LastSeen {
  state: RegularFileState;
  observed: Observation;
}

export interface InspectOptions {
  /** Files larger than this are `too-large`, and not read. */
  maxBytes: number;
  /** A file whose signature still proves it is `lastSeen` is that, not read again; any other file is read. */
  lastSeen?: LastSeen | undefined;
}

/** Inspects a path through its pinned parent (taken from `directories` when given, which then owns it). */
export function inspectPath(filePath: string, options: InspectOptions, directories?: DirectoryCache): ObservedPath {
  const parent = directories !== undefined ? directories.open(path.dirname(filePath)) : PinnedDirectory.open(path.dirname(filePath));
  if (typeof parent === 'string') {
    const ancestors = parent === 'missing' ? findMissingParents(path.dirname(filePath)) : { problem: `its parent directory ${describeFailure(parent)}` };
    if ('problem' in ancestors) return { state: { kind: 'unsafe-parent' }, reason: ancestors.problem };
    return ancestors.missing > 0 ? { state: absent, missingParents: ancestors.missing } : { state: absent };
  }
  try {
    return inspectEntry(parent, path.basename(filePath), options);
  } finally {
    if (directories === undefined) parent.close();
  }
}

/** Inspects `name` inside an already pinned directory (the rewind keeps it open for the write that follows). */
export function inspectEntry(directory: PinnedDirectory, name: string, options: InspectOptions): ObservedPath {
  const stat = fs.lstatSync(directory.entry(name), { bigint: true, throwIfNoEntry: false });
  if (stat === undefined) return { state: absent };
  if (stat.isSymbolicLink()) return { state: { kind: 'symlink' } };
  if (!stat.isFile()) return { state: { kind: 'not-regular', fileType: fileTypeOf(stat) } };
  if (stat.size > BigInt(options.maxBytes)) return tooLarge(stat);
  const { lastSeen } = options;
  if (lastSeen !== undefined && isUnchangedSince(lastSeen.observed, stat)) return { state: lastSeen.state, observed: lastSeen.observed, stat };
  return readRegularFile(directory.entry(name), options.maxBytes);
}

/** Reads the regular file at `entry` (opened without following a link, and without blocking on a FIFO). */
export function readRegularFile(entry: string, maxBytes: number): ObservedPath {
  // O_NONBLOCK: if a FIFO was swapped in after the lstat, opening it must not hang.
  const flags = fs.constants.O_RDONLY | noFollow | (fs.constants.O_NONBLOCK ?? 0);
  for (let attempt = 0; ; attempt += 1) {
    const observedAtNs = wallClockNs();
    let fd: number;
    try {
      fd = fs.openSync(entry, flags);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return { state: absent };
      if (code === 'ELOOP') return { state: { kind: 'symlink' } };
      throw error;
    }
    try {
      const stat = fs.fstatSync(fd, { bigint: true });
      if (!stat.isFile()) return { state: { kind: 'not-regular', fileType: fileTypeOf(stat) } };
      if (stat.size > BigInt(maxBytes)) return tooLarge(stat);
      const content = readToEnd(fd, Number(stat.size), maxBytes);
      if (content === undefined) return tooLarge(fs.fstatSync(fd, { bigint: true }));
      const after = fs.fstatSync(fd, { bigint: true });
      // Written to while we read: read again so bytes and signature belong together.
      if ((after.mtimeNs !== stat.mtimeNs || after.size !== stat.size || BigInt(content.length) !== after.size) && attempt < 3) continue;
      const state: RegularFileState = { kind: 'file', sha256: sha256(content), size: content.length, mode: Number(stat.mode & 0o7777n) };
      return { state, observed: observe(stat, observedAtNs), content, stat };
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
  const nearest = pinNearestDirectory(directory);
  if ('failure' in nearest) return { problem: `${nearest.at} ${nearest.failure === 'missing' ? 'is missing' : describeFailure(nearest.failure)}` };
  nearest.pinned.close();
  return { missing: nearest.missing.length };
}

const absent: FileState = { kind: 'absent' };

function tooLarge(stat: fs.BigIntStats): ObservedPath {
  return { state: { kind: 'too-large', size: Number(stat.size) }, stat };
}

function describeFailure(failure: Exclude<PinFailure, 'missing'>): string {
  if (failure === 'link') return 'was replaced by a symbolic link';
  if (failure === 'not-directory') return 'is no longer a directory';
  return 'no longer resolves to where it was when first tracked';
}

export function fileTypeOf(stat: fs.BigIntStats | fs.Stats): FileType {
  if (stat.isDirectory()) return 'directory';
  if (stat.isFIFO()) return 'fifo';
  if (stat.isSocket()) return 'socket';
  if (stat.isCharacterDevice()) return 'character-device';
  if (stat.isBlockDevice()) return 'block-device';
  return 'unknown';
}
