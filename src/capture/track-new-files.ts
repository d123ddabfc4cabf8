import fs from 'node:fs';
import { noFollow } from '../fs/pinned-directory.js';
import { modifiedNear, statSignature, wallClockNs } from '../fs/stat-signature.js';
import type { ScanBackupsRecord } from '../schemas.js';
import type { BlobBatch } from '../store/blob-batch.js';
import { sha256 } from '../hash.js';
import type { Session } from '../session/session.js';
import { now } from '../session/clock.js';
import type { ScopeEntry } from './walk-scope.js';

export interface NewFiles {
  /** Files created since the previous scan: first backup "absent", in the turn they appeared in. */
  created: ScanBackupsRecord | undefined;
  /** Files that were there before (the first scan, or out of the last scan's sight): first backup is their content. */
  existing: ScanBackupsRecord | undefined;
  overCap: Array<{ path: string; size: number }>;
  /** Files in scope that could not be opened for reading: not backed up, as the files over the cap. */
  unreadable: string[];
}

/** What the previous scan of the scope knew (the session state's `lastScan*`). */
export interface PreviousScan {
  startedAtNs: bigint;
  /** The rules it applied; undefined when its record does not say. */
  rules: string | undefined;
  /** Files it found in scope but could not back up: there before, not created. */
  leftOut: ReadonlySet<string>;
  /** Relative paths an earlier walk of this process found and left out by `.gitignore` rules (not kept in the log). */
  ignored: ReadonlySet<string> | undefined;
}

export interface TrackNewFilesOptions {
  /** Undefined for the session's first scan: everything found was there before. */
  previous: PreviousScan | undefined;
  /** The rules this scan applies (see `PreviousScan.rules`). */
  rules: string;
  /** Checkpoint the "created" backups belong to: the turn during which the files appeared. */
  createdDuring: string | undefined;
  /** Checkpoint the "existing" backups belong to. */
  existingAt: string;
  maxFileBytes: number;
  batch: BlobBatch;
  /** Called before each file is examined (see `BetweenFiles`). */
  betweenFiles?: BetweenFiles;
}

/**
 * Called by a scan before each file it examines, while it has recorded
 * nothing yet: it may throw to stop the scan there (what was stored so far is
 * only blobs, which no record names), or return a promise the scan waits for.
 * A resident hook server stops a session's early first scan this way when an
 * event that does not need it is waiting.
 */
export type BetweenFiles = () => Promise<void> | undefined;

/**
 * Tracks files of the scope the session does not know yet. After the first
 * scan, every file in scope is tracked, so one the session does not know
 * appeared since the previous scan (created, or renamed or moved in): its
 * state before was "absent", and a rewind removes it, as restoring a shadow
 * git commit would. Files of the first scan were there before: they are
 * backed up as they are, marked for compression, since a first scan stores
 * the whole scope at once.
 *
 * So are files the previous scan could not see, which a rewind must never
 * take for created and delete: those it found but could not back up (over
 * the cap, unreadable), and, when the scope's rules changed since (a
 * `.gitignore` edited, other options on resuming), any file an earlier walk
 * found ignored, or whose timestamps show it was already there, unchanged,
 * when the previous scan started: a file that became un-ignored. A file
 * moved in with its directory keeps its timestamps too, so in a turn that
 * also changed the rules it is kept by a rewind rather than removed; that is
 * the safe side.
 */
export async function trackNewFiles(session: Session, entries: readonly ScopeEntry[], options: TrackNewFilesOptions): Promise<NewFiles> {
  const observedAtNs = wallClockNs();
  const created: string[] = [];
  const existing: ScanBackupsRecord['files'] = [];
  const links: string[] = [];
  const overCap: NewFiles['overCap'] = [];
  const unreadable: string[] = [];
  for (const entry of entries) {
    const pause = options.betweenFiles?.();
    if (pause !== undefined) await pause;
    if (session.state.paths.has(entry.path) || !(entry.stat.isFile() || entry.stat.isSymbolicLink())) continue;
    if (options.createdDuring !== undefined && appearedSince(options.previous, options.rules, entry)) {
      created.push(session.storedPath(entry.path));
    } else if (entry.stat.isSymbolicLink()) {
      links.push(session.storedPath(entry.path));
    } else if (entry.stat.size > BigInt(options.maxFileBytes)) {
      overCap.push({ path: entry.path, size: Number(entry.stat.size) });
    } else {
      const content = readEntry(entry);
      if (content === 'unreadable') unreadable.push(entry.path);
      if (typeof content !== 'object') continue; // unreadable, or gone or replaced since the walk: the checkpoint sees what is there
      const hash = sha256(content.bytes);
      const state = { kind: 'file' as const, sha256: hash, size: content.bytes.length, mode: Number(content.stat.mode & 0o7777n) };
      await session.queueBackup({ state, content: content.bytes }, options.batch);
      existing.push([session.storedPath(entry.path), hash, state.size, state.mode, statSignature(content.stat)]);
    }
  }
  const record = (checkpointId: string, part: Pick<ScanBackupsRecord, 'files' | 'absent' | 'links'>): ScanBackupsRecord => ({
    type: 'scan-backups',
    checkpointId,
    observedAtNs: observedAtNs.toString(),
    ...part,
    at: now(),
  });
  return {
    created: created.length > 0 ? record(options.createdDuring!, { files: [], absent: created, links: [] }) : undefined,
    existing: existing.length > 0 || links.length > 0 ? record(options.existingAt, { files: existing, absent: [], links }) : undefined,
    overCap,
    unreadable,
  };
}

/** True when `entry`, a file the session does not track, cannot have been there at the previous scan without it seeing it. */
function appearedSince(previous: PreviousScan | undefined, rules: string, entry: ScopeEntry): boolean {
  if (previous === undefined || previous.leftOut.has(entry.path)) return false;
  if (previous.rules === rules) return true;
  if (previous.ignored?.has(entry.relative) === true) return false;
  // Changed (its ctime moves with any rename, link or write) at or after the previous scan began, allowing for
  // the timestamp granularity: it may be new. Otherwise it was there, out of the old rules' scope.
  return modifiedNear(entry.stat, previous.startedAtNs);
}

/**
 * Reads a file the walk found, without following links, and only if it is
 * still the same file (same inode) and was not written to while being read.
 * `unreadable` when its permissions forbid opening it.
 */
function readEntry(entry: ScopeEntry): { bytes: Buffer; stat: fs.BigIntStats } | 'unreadable' | undefined {
  let fd: number;
  try {
    fd = fs.openSync(entry.path, fs.constants.O_RDONLY | noFollow | (fs.constants.O_NONBLOCK ?? 0));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'EACCES' || code === 'EPERM' ? 'unreadable' : undefined;
  }
  try {
    const stat = fs.fstatSync(fd, { bigint: true });
    if (!stat.isFile() || stat.ino !== entry.stat.ino || stat.dev !== entry.stat.dev) return undefined;
    const bytes = readAll(fd, Number(stat.size));
    const after = fs.fstatSync(fd, { bigint: true });
    if (after.mtimeNs !== stat.mtimeNs || after.size !== stat.size) return undefined;
    return { bytes, stat };
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * The `size` bytes of the file open at `fd`, fewer if it ends sooner (the
 * check after the read then finds it changed). `readFileSync` would ask for
 * the size again: one system call per file more, 500,000 in a first scan.
 */
function readAll(fd: number, size: number): Buffer {
  const bytes = Buffer.allocUnsafe(size);
  let read = 0;
  while (read < size) {
    const got = fs.readSync(fd, bytes, read, size - read, read);
    if (got === 0) break;
    read += got;
  }
  return read === size ? bytes : bytes.subarray(0, read);
}
