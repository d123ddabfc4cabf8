import fs from 'node:fs';
import type { Refusal } from '../refusal.js';
import { readRegularFile, type ObservedPath } from './inspect-path.js';
import type { EntryDirectory } from './pinned-directory.js';
import { statSignature } from './stat-signature.js';

/**
 * The check made right before an entry of a pinned directory is replaced or
 * removed: it must still be what was seen, and nothing there may be written
 * through. Any thread can run it (it uses nothing but its arguments and `fs`).
 */

/** What the entry must still be for the change to go ahead. */
export type ExpectedEntry =
  | { kind: 'absent' }
  | { kind: 'symlink' }
  /** A regular file with these bytes and mode; `trustedSignature` proves it without reading (racy rule already applied). */
  | { kind: 'file'; sha256: string; mode: number; trustedSignature?: string | undefined };

/** Why an entry is left alone: the refusals a look at the entry itself can find. */
export type EntryRefusal = Extract<Refusal, 'symlink' | 'hard-link' | 'not-regular' | 'parent-changed' | 'changed-during-rewind'>;

/** An entry found as expected: its lstat (none when absent), and its bytes when they were read. */
export type CheckedEntry = Pick<ObservedPath, 'stat' | 'content'>;

export interface CheckOptions {
  /** An entry larger than this is not read to compare it: it is not what was seen. */
  maxBytes: number;
  /** Read and check the bytes even where the signature vouches for them, and return them. */
  read?: boolean;
}

/**
 * Whether `name` in `directory` is still `expected`, by lstat, reading the
 * file only when its signature cannot vouch for it (or `read` asks for it).
 * The open goes by name, never through a link, and must find the very file
 * the lstat saw, so that a verdict on the bytes is a verdict on that file.
 */
export function checkEntry(directory: EntryDirectory, name: string, expected: ExpectedEntry, options: CheckOptions): CheckedEntry | EntryRefusal {
  if (!directory.isStillAtPath()) return 'parent-changed';
  const entry = directory.entry(name);
  const stat = fs.lstatSync(entry, { bigint: true, throwIfNoEntry: false });
  if (stat === undefined) return expected.kind === 'absent' ? {} : 'changed-during-rewind';
  if (stat.isSymbolicLink()) return expected.kind === 'symlink' ? { stat } : 'symlink';
  if (!stat.isFile()) return 'not-regular';
  if (stat.nlink > 1n) return 'hard-link';
  if (expected.kind !== 'file' || stat.size > BigInt(options.maxBytes)) return 'changed-during-rewind';
  if (options.read !== true && statSignature(stat) === expected.trustedSignature) return { stat };
  const { state, stat: opened, content } = readRegularFile(entry, options.maxBytes);
  if (state.kind === 'symlink' || state.kind === 'not-regular') return state.kind;
  if (state.kind !== 'file') return 'changed-during-rewind';
  if (opened!.dev !== stat.dev || opened!.ino !== stat.ino) return 'changed-during-rewind';
  if (opened!.nlink > 1n) return 'hard-link';
  if (state.mode !== expected.mode || state.sha256 !== expected.sha256) return 'changed-during-rewind';
  return { stat, content };
}
