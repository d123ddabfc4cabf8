import fs from 'node:fs';
import { noFollow } from '../fs/pinned-directory.js';
import { observe, wallClockNs } from '../fs/stat-signature.js';
import type { TrackRecord } from '../schemas.js';
import type { BlobBatch } from '../store/blob-batch.js';
import { sha256 } from '../store/session-log.js';
import type { Session } from '../session/session.js';
import { now } from '../session/clock.js';
import { mapConcurrently } from '../util/concurrency.js';
import type { ScopeEntry } from './walk-scope.js';

export interface NewFiles {
  /** Files created since the last scan: first backup "absent", so a rewind deletes them. */
  created: TrackRecord[];
  /** Files that were there before (first scan, or no longer excluded): first backup is their content. */
  existing: TrackRecord[];
  overCap: Array<{ path: string; size: number }>;
}

export interface TrackNewFilesOptions {
  /** False for the session's first scan: everything found was there before. */
  scannedBefore: boolean;
  /** Paths the previous scan found but left out (over the cap): there before, not created. */
  leftOutBefore: ReadonlySet<string>;
  /** Checkpoint the "created" backups belong to: the turn during which the files appeared. */
  createdDuring: string | undefined;
  /** Checkpoint the "existing" backups belong to. */
  existingAt: string;
  maxFileBytes: number;
  batch: BlobBatch;
}

/**
 * Tracks files of the scope the session does not know yet. After the first
 * scan, every file in scope is tracked, so one the session does not know
 * appeared since the previous scan (created, or renamed or moved in): its
 * state before was "absent", and a rewind removes it, as restoring a shadow
 * git commit would. Files of the first scan, and files the previous scan found
 * but left out, were there before: they are backed up as they are. Contents
 * are read concurrently and marked for compression, since a first scan stores
 * the whole scope at once.
 */
export async function trackNewFiles(session: Session, entries: readonly ScopeEntry[], options: TrackNewFilesOptions): Promise<NewFiles> {
  const result: NewFiles = { created: [], existing: [], overCap: [] };
  const fresh = entries.filter((entry) => !session.state.paths.has(entry.path) && (entry.stat.isFile() || entry.stat.isSymbolicLink()));
  const toRead: ScopeEntry[] = [];
  for (const entry of fresh) {
    if (options.scannedBefore && options.createdDuring !== undefined && !options.leftOutBefore.has(entry.path)) {
      result.created.push(trackRecord(session, entry.path, { kind: 'absent' }, options.createdDuring));
    } else if (entry.stat.isSymbolicLink()) {
      result.existing.push(trackRecord(session, entry.path, { kind: 'symlink' }, options.existingAt));
    } else if (entry.stat.size > BigInt(options.maxFileBytes)) {
      result.overCap.push({ path: entry.path, size: Number(entry.stat.size) });
    } else {
      toRead.push(entry);
    }
  }
  const read = await mapConcurrently(toRead, 8, (entry) => readEntry(entry));
  for (let index = 0; index < toRead.length; index += 1) {
    const entry = toRead[index]!;
    const content = read[index];
    if (content === undefined) continue; // gone or replaced since the walk: the checkpoint will see what is there
    const state = { kind: 'file' as const, sha256: sha256(content.bytes), size: content.bytes.length, mode: Number(content.stat.mode & 0o7777n) };
    const observed = observe(content.stat, content.atNs);
    await session.queueBackup({ state, observed, content: content.bytes }, options.batch, undefined, true);
    result.existing.push({ ...trackRecord(session, entry.path, state, options.existingAt), observed });
  }
  return result;
}

function trackRecord(session: Session, absolute: string, state: TrackRecord['state'], checkpointId: string): TrackRecord {
  return { type: 'track', checkpointId, path: session.storedPath(absolute), state, source: 'scan', at: now() };
}

/** Reads a file the walk found, without following links, and only if it is still the same file. */
async function readEntry(entry: ScopeEntry): Promise<{ bytes: Buffer; stat: fs.BigIntStats; atNs: bigint } | undefined> {
  const atNs = wallClockNs();
  let handle: fs.promises.FileHandle;
  try {
    handle = await fs.promises.open(entry.path, fs.constants.O_RDONLY | noFollow | (fs.constants.O_NONBLOCK ?? 0));
  } catch {
    return undefined;
  }
  try {
    const stat = await handle.stat({ bigint: true });
    if (!stat.isFile() || stat.ino !== entry.stat.ino || stat.dev !== entry.stat.dev) return undefined;
    const bytes = await handle.readFile();
    const after = await handle.stat({ bigint: true });
    if (after.mtimeNs !== stat.mtimeNs || after.size !== stat.size) return undefined;
    return { bytes, stat, atNs };
  } finally {
    await handle.close();
  }
}
