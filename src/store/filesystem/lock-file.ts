import fs from 'node:fs';
import { randomUUID } from 'node:crypto';

/**
 * A session's lock file: JSON naming the process that holds the session. Its
 * mtime is the holder's last renewal of its lease (see `HeldSessionLock`).
 */

export interface LockOwner {
  pid: number;
  hostname: string;
  /** Process start time from /proc, so a recycled pid is not taken for the owner. */
  processStart: string | null;
  /** Drawn by each holder: a lock is the holder's own only while the file carries this. */
  token: string;
  acquiredAt: string;
  /** How long the holder promises never to leave its lock unrenewed; absent in locks of older versions. */
  leaseMs?: number;
}

/** A lock file as found: its raw content, the owner it names (if any) and when it was last renewed. */
export interface FoundLock {
  content: string;
  owner: LockOwner | undefined;
  renewedAtMs: number;
}

/** The lock file's content, or undefined when there is none. Never follows a link. */
export function readLock(file: string): FoundLock | undefined {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const content = fs.readFileSync(fd, 'utf8');
    return { content, owner: parseOwner(content), renewedAtMs: fs.fstatSync(fd).mtimeMs };
  } finally {
    fs.closeSync(fd);
  }
}

/** The owner a lock names, or undefined for an empty or damaged lock (which names no process). */
export function parseOwner(content: string): LockOwner | undefined {
  try {
    const parsed = JSON.parse(content) as Partial<LockOwner> | null;
    if (typeof parsed?.pid !== 'number' || typeof parsed.hostname !== 'string' || typeof parsed.token !== 'string') return undefined;
    const leaseMs = typeof parsed.leaseMs === 'number' && parsed.leaseMs > 0 ? parsed.leaseMs : undefined;
    return { processStart: null, acquiredAt: 'an unknown time', ...parsed, leaseMs } as LockOwner;
  } catch {
    return undefined;
  }
}

/**
 * Moves the lock aside and deletes it, but only if what was moved is still
 * the lock that was judged (same content: every holder's lock carries a token
 * of its own; and, with `sameRenewal`, not renewed since). A lock another
 * process created or renewed in between is put back. True when the judged
 * lock was removed.
 */
export function removeLockIfUnchanged(lockPath: string, judged: FoundLock, sameRenewal: boolean): boolean {
  const aside = `${lockPath}.${randomUUID()}.stale`;
  try {
    fs.renameSync(lockPath, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
  const moved = readLock(aside);
  const unchanged = moved !== undefined && moved.content === judged.content && (!sameRenewal || moved.renewedAtMs === judged.renewedAtMs);
  if (!unchanged) {
    try {
      fs.linkSync(aside, lockPath);
    } catch {
      // Someone else holds the lock now; the moved one is gone either way.
    }
  }
  fs.rmSync(aside, { force: true });
  return unchanged;
}
