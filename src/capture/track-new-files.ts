import fs from 'node:fs';
import { noFollow } from '../fs/pinned-directory.js';
import { statSignature, wallClockNs } from '../fs/stat-signature.js';
import type { ScanBackupsRecord } from '../schemas.js';
import type { BlobBatch } from '../store/blob-batch.js';
import { sha256 } from '../store/session-log.js';
import type { Session } from '../session/session.js';
import { now } from '../session/clock.js';
import type { ScopeEntry } from './walk-scope.js';

export interface NewFiles {
  /** Files created since the previous scan: first backup "absent", in the turn they appeared in. */
  created: ScanBackupsRecord | undefined;
  /** Files that were there before (the first scan, or found but left out last time): first backup is their content. */
  existing: ScanBackupsRecord | undefined;
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
 * but left out, were there before: they are backed up as they are, marked for
 * compression, since a first scan stores the whole scope at once.
 */
export async function trackNewFiles(session: Session, entries: readonly ScopeEntry[], options: TrackNewFilesOptions): Promise<NewFiles> {
  const observedAtNs = wallClockNs();
  const created: string[] = [];
  const existing: ScanBackupsRecord['files'] = [];
  const links: string[] = [];
  const overCap: NewFiles['overCap'] = [];
  for (const entry of entries) {
    if (session.state.paths.has(entry.path) || !(entry.stat.isFile() || entry.stat.isSymbolicLink())) continue;
    if (options.scannedBefore && options.createdDuring !== undefined && !options.leftOutBefore.has(entry.path)) {
      created.push(session.storedPath(entry.path));
    } else if (entry.stat.isSymbolicLink()) {
      links.push(session.storedPath(entry.path));
    } else if (entry.stat.size > BigInt(options.maxFileBytes)) {
      overCap.push({ path: entry.path, size: Number(entry.stat.size) });
    } else {
      const content = readEntry(entry);
      if (content === undefined) continue; // gone or replaced since the walk: the checkpoint sees what is there
      const hash = sha256(content.bytes);
      const state = { kind: 'file' as const, sha256: hash, size: content.bytes.length, mode: Number(content.stat.mode & 0o7777n) };
      await session.queueBackup({ state, content: content.bytes }, options.batch, undefined, true);
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
  };
}

/**
 * Reads a file the walk found, without following links, and only if it is
 * still the same file (same inode) and was not written to while being read.
 */
function readEntry(entry: ScopeEntry): { bytes: Buffer; stat: fs.BigIntStats } | undefined {
  let fd: number;
  try {
    fd = fs.openSync(entry.path, fs.constants.O_RDONLY | noFollow | (fs.constants.O_NONBLOCK ?? 0));
  } catch {
    return undefined;
  }
  try {
    const stat = fs.fstatSync(fd, { bigint: true });
    if (!stat.isFile() || stat.ino !== entry.stat.ino || stat.dev !== entry.stat.dev) return undefined;
    const bytes = fs.readFileSync(fd);
    const after = fs.fstatSync(fd, { bigint: true });
    if (after.mtimeNs !== stat.mtimeNs || after.size !== stat.size) return undefined;
    return { bytes, stat };
  } finally {
    fs.closeSync(fd);
  }
}
