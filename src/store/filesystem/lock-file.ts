import fs from 'node:fs';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { storeIoError } from '../../errors.js';
import { safeLstat, unlessMissing } from './missing-entries.js';
import { openRegularFile, type StoreFileOpening } from './store-file.js';

/**
 * A session's lock file: JSON naming the process that holds the session. Its
 * mtime is the holder's last renewal of its lease (see `HeldSessionLock`).
 */

/**
 * The longest lease a holder may state (a week). A lease is a promise to
 * renew within it; one longer than this, or not a number of milliseconds at
 * all, is damage (or a crafted lock), and a lock that states it names no
 * holder that could ever be waited for.
 */
export const maximumLeaseMs = 7 * 24 * 60 * 60 * 1000;

const lockOwnerSchema = z.object({
  pid: z.int().positive(),
  hostname: z.string(),
  /** Process start time from /proc, so a recycled pid is not taken for the owner. */
  processStart: z.string().nullable().default(null),
  /** The holder's PID namespace and boot (see lock-holder-identity.ts); absent in locks of older versions. */
  pidNamespace: z.string().nullable().optional(),
  bootId: z.string().nullable().optional(),
  /** Drawn by each holder: a lock is the holder's own only while the file carries this. */
  token: z.string(),
  acquiredAt: z.string().default('an unknown time'),
  /** How long the holder promises never to leave its lock unrenewed; absent in locks of older versions. */
  leaseMs: z.number().min(1).max(maximumLeaseMs).optional(),
});

export type LockOwner = z.infer<typeof lockOwnerSchema>;

/** A lock file as found: its raw content, the owner it names (if any) and when it was last renewed. */
export interface FoundLock {
  content: string;
  owner: LockOwner | undefined;
  renewedAtMs: number;
}

/**
 * The lock at `file`, or undefined when there is none. Never follows a link
 * and never waits on a FIFO: what no holder ever writes there (a link, a
 * directory, a special file) is reported as a lock that names no process.
 * `whileOpen` is given a lock file's descriptor, to act on the very file read.
 * Only a missing entry is "no lock": a lock that cannot be looked at (EACCES,
 * a link loop on the way) may be a live holder's, so it is a STORE_IO error.
 */
export function readLock(file: string, whileOpen?: (fd: number, found: FoundLock) => void): FoundLock | undefined {
  const entry = lstatUnlessMissing(file);
  if (entry === undefined) return undefined;
  if (!entry.isFile()) return strayEntry(entry);
  let opened: StoreFileOpening;
  try {
    opened = openRegularFile(file, fs.constants.O_RDONLY);
  } catch (error) {
    throw storeIoError(`read the session lock ${file}`, error);
  }
  if (opened.kind === 'missing') return undefined;
  if (opened.kind === 'refused') {
    // Replaced by a link, a FIFO or a socket since the lstat.
    const replaced = lstatUnlessMissing(file);
    return replaced === undefined ? undefined : strayEntry(replaced);
  }
  try {
    const content = fs.readFileSync(opened.fd, 'utf8');
    const found = { content, owner: parseOwner(content), renewedAtMs: opened.stat.mtimeMs };
    whileOpen?.(opened.fd, found);
    return found;
  } finally {
    fs.closeSync(opened.fd);
  }
}

function lstatUnlessMissing(file: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw storeIoError(`look at the session lock ${file}`, error);
  }
}

/** Something at the lock path that is not a file: its content stands for which entry it is, so a replacement is noticed. */
function strayEntry(stat: fs.Stats): FoundLock {
  const kind = stat.isSymbolicLink() ? 'a symbolic link' : stat.isDirectory() ? 'a directory' : 'a special file';
  return { content: `(${kind}, inode ${stat.ino})`, owner: undefined, renewedAtMs: stat.mtimeMs };
}

/** The owner a lock names, or undefined for an empty or damaged lock (which names no process). */
function parseOwner(content: string): LockOwner | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(content);
  } catch {
    return undefined;
  }
  const owner = lockOwnerSchema.safeParse(parsed);
  return owner.success ? owner.data : undefined;
}

/**
 * Moves the lock aside and deletes it, but only if what was moved is still
 * the lock that was judged (same content: every holder's lock carries a token
 * of its own; and, with `sameRenewal`, not renewed since). A lock another
 * process created or renewed in between is put back. True when the judged
 * lock was removed. Only names are acted on: a link is removed, never what it
 * leads to.
 */
export function removeLockIfUnchanged(lockPath: string, judged: FoundLock, sameRenewal: boolean): boolean {
  const aside = `${lockPath}.${randomUUID()}.stale`;
  if (!unlessMissing(() => fs.renameSync(lockPath, aside))) return false;
  const moved = readLock(aside);
  const unchanged = moved !== undefined && moved.content === judged.content && (!sameRenewal || moved.renewedAtMs === judged.renewedAtMs);
  if (!unchanged) {
    try {
      fs.linkSync(aside, lockPath);
    } catch {
      // Someone else holds the lock now; the moved one is gone either way.
    }
  }
  removeAside(aside, lockPath);
  return unchanged;
}

/** A directory is removed only when empty: what it holds is not a lock's to delete, so it goes back and the caller is told. */
function removeAside(aside: string, lockPath: string): void {
  if (safeLstat(aside)?.isDirectory() !== true) {
    fs.rmSync(aside, { force: true });
    return;
  }
  try {
    fs.rmdirSync(aside);
  } catch (error) {
    fs.renameSync(aside, lockPath);
    throw new Error(`${lockPath} is a directory with files in it, not a lock; move it out of the store`, { cause: error });
  }
}
