import fs from 'node:fs';
import path from 'node:path';
import { RewindableError, RewindableErrorCode, storeIoError } from '../../errors.js';
import type { SessionKey, StorageAdapter, StorageLock, StoredSessionInfo } from '../storage-adapter.js';
import { storeBlobs, type BlobPlacement } from './blob-placement.js';
import { collectGarbage } from './collect-garbage.js';
import { keyString, LogFiles } from './log-files.js';
import { encodeLines } from './log-lines.js';
import { maximumLeaseMs } from './lock-file.js';
import { hasLooseBlob, readLooseBlob } from './loose-blobs.js';
import { entriesIn, listFolder, safeLstat } from './missing-entries.js';
import { PathVersions } from '../path-versions.js';
import { defaultStoreDirectory } from '../default-store-directory.js';
import { linkedProjectFolders, listProjectFolders, projectFolder } from './project-folders.js';
import { SessionPacks } from './session-packs.js';
import { acquireSessionLock, breakSessionLock, defaultLockLeaseMs, inspectSessionLock, type SessionLockHolder } from './session-lock.js';

export type Durability = 'full' | 'none';

export interface FilesystemStorageOptions {
  /**
   * Root of the store.
   * @default process.env.REWINDABLE_HOME, else `~/.rewindable`
   */
  directory?: string;
  /**
   * `full`: every append and blob is flushed to disk (fsync) before the call
   * resolves. `none`: handed to the operating system only, which survives a
   * killed process but not a power cut.
   * @default 'full'
   */
  durability?: Durability;
  /**
   * Blobs of at least this many bytes are stored as loose files shared by all
   * sessions; smaller ones are appended to the session's pack.
   * @default 1048576 (1 MiB)
   */
  looseBlobMinBytes?: number;
  /**
   * How long a session's lock stands without being renewed. A holder renews
   * its lock every quarter of this; a lock written on another host (whose
   * process cannot be checked from here) is reclaimed once it went unrenewed
   * for longer than the lease its holder stated. At most a week.
   * @default 120000 (two minutes)
   */
  lockLeaseMs?: number;
}

export interface FilesystemStorage extends StorageAdapter {
  readonly directory: string;
  readonly durability: Durability;
  /** Where a session's log lives (for messages and tools). */
  logPath(key: SessionKey): string;
  listProjects(): Promise<string[]>;
  /**
   * `collectGarbage` of the contract; `keptBecause` says why nothing was
   * removed when the store holds what it cannot account for (a link in `projects/`).
   */
  collectGarbage(referenced: ReadonlySet<string>, options: { graceMs: number }): Promise<{ blobsRemoved: number; bytesFreed: number; keptBecause?: string }>;
  lock: NonNullable<StorageAdapter['lock']>;
  /** Who holds the session's lock, or undefined when it is not locked. */
  inspectLock(key: SessionKey): Promise<SessionLockHolder | undefined>;
  /**
   * Removes the session's lock whoever holds it, and returns what it said.
   * A holder still running gets `SESSION_LOCKED` on its next write, but a
   * write it is in the middle of may still land while a new holder writes
   * too: two writers on one session lose backups. Only for a lock whose
   * holder is known to be gone.
   */
  breakLock(key: SessionKey): Promise<SessionLockHolder | undefined>;
  close(): Promise<void>;
}

/**
 * The default storage: everything under one directory.
 *
 *   projects/<project key>/<session id>.jsonl      the session log
 *   projects/<project key>/<session id>.lock       the writer's lock
 *   blobs/packs/<project key>/<session id>.pack    the session's smaller blobs
 *   blobs/<ab>/<sha256>                            larger blobs, shared
 *
 * A session id is unique only within its project, so everything named by a
 * session is named by its project too. Packs of an older layout,
 * `blobs/packs/<session id>.pack`, are still read (never written).
 */
export function filesystemStorage(options: FilesystemStorageOptions = {}): FilesystemStorage {
  const directory = path.resolve(options.directory ?? defaultStoreDirectory());
  const durability = options.durability ?? 'full';
  const durable = durability === 'full';
  const lockLeaseMs = options.lockLeaseMs ?? defaultLockLeaseMs;
  if (!(lockLeaseMs >= 1 && lockLeaseMs <= maximumLeaseMs)) {
    throw new RewindableError(RewindableErrorCode.INVALID_OPTIONS, `lockLeaseMs must be a number of milliseconds from 1 to ${maximumLeaseMs} (a week); got ${lockLeaseMs}.`);
  }
  const projectsDirectory = path.join(directory, 'projects');
  const blobsDirectory = path.join(directory, 'blobs');
  const logs = new LogFiles(projectsDirectory, durable);
  const packs = new SessionPacks(path.join(blobsDirectory, 'packs'), durable);
  const placement: BlobPlacement = { packs, blobsDirectory, durable, looseBlobMinBytes: options.looseBlobMinBytes ?? 1024 * 1024 };
  const versions = new Map<string, PathVersions>();
  const lockPath = (key: SessionKey) => path.join(projectsDirectory, key.projectKey, `${key.sessionId}.lock`);

  function versionsOf(key: SessionKey): PathVersions {
    let known = versions.get(keyString(key));
    if (known === undefined) versions.set(keyString(key), (known = new PathVersions()));
    return known;
  }

  /** Every session with a log, as `<project key>/<session id>`. */
  async function listEverySession(): Promise<string[]> {
    const sessions: string[] = [];
    for (const projectKey of listProjectFolders(projectsDirectory)) {
      for (const session of await storage.listSessions(projectKey)) sessions.push(keyString({ projectKey, sessionId: session.sessionId }));
    }
    return sessions;
  }

  /** Runs a lock operation with its folder checked, its failures typed. */
  async function onLock<T>(key: SessionKey, action: string, operation: () => Promise<T>): Promise<T> {
    try {
      projectFolder(projectsDirectory, key.projectKey);
      return await operation();
    } catch (error) {
      if (RewindableError.isInstance(error)) throw error;
      throw storeIoError(`${action} session ${key.sessionId} (${lockPath(key)})`, error);
    }
  }

  const storage: FilesystemStorage = {
    specificationVersion: 'v2',
    directory,
    durability,
    logPath: (key) => logs.path(key),

    async append(key, entries, blobs = [], appendOptions = {}) {
      if (entries.length === 0 && blobs.length === 0) return;
      const appender = entries.length === 0 ? undefined : (logs.openAppender(key) ?? (await logs.appender(key)));
      appender?.assertUsable();
      const history = versionsOf(key).changesIn(entries);
      // Blob bytes reach the OS before the lines that name them, so a killed process never leaves a line without its blob.
      const flushBlobs = await storeBlobs(placement, key, blobs, history);
      if (appender === undefined) return flushBlobs();
      const before = appender.write(encodeLines(entries));
      versionsOf(key).noteStored(entries);
      if (!durable) return;
      if (appendOptions.flush === false) return flushBlobs();
      // Both files flush at once: if the pack's flush is lost in a crash, the line is the log's
      // last, naming a blob the session does not hold, and the manager drops it on load.
      const flushes = await Promise.allSettled([appender.flush(), flushBlobs()]);
      const failure = flushes.find((flush): flush is PromiseRejectedResult => flush.status === 'rejected');
      if (failure === undefined) return;
      // The caller is told these entries were not stored, so a reopened session must not find
      // them either (a rewind whose end record failed would otherwise count as complete).
      appender.cutBack(before, failure.reason);
      throw failure.reason;
    },

    async load(key) {
      const entries = logs.load(key);
      const loaded = new PathVersions();
      if (entries !== null) loaded.noteStored(entries);
      versions.set(keyString(key), loaded);
      return entries;
    },

    async listSessions(projectKey) {
      const folder = projectFolder(projectsDirectory, projectKey);
      const sessions: StoredSessionInfo[] = [];
      for (const { name } of listFolder(folder, 'sessions')) {
        if (!name.endsWith('.jsonl')) continue;
        try {
          const key = { projectKey, sessionId: name.slice(0, -'.jsonl'.length) };
          // A log that is a link is listed as it is (its load then says what is wrong), never followed.
          const log = fs.lstatSync(path.join(folder, name));
          const packFiles = [safeLstat(packs.path(key)), safeLstat(packs.legacyPath(key))];
          const mtime = Math.max(log.mtimeMs, ...packFiles.map((pack) => pack?.mtimeMs ?? 0));
          sessions.push({ sessionId: key.sessionId, mtime, bytes: packFiles.reduce((sum, pack) => sum + (pack?.size ?? 0), log.size) });
        } catch {
          // Deleted while listing.
        }
      }
      return sessions;
    },

    async delete(key) {
      logs.delete(key);
      versions.delete(keyString(key));
      // A pack of the older layout is named by session id alone: a session of that id in another project may read it.
      const stillListed = entriesIn(projectsDirectory).some((project) => fs.existsSync(logs.path({ projectKey: project.name, sessionId: key.sessionId })));
      for (const file of stillListed ? [packs.path(key)] : [packs.path(key), packs.legacyPath(key)]) {
        packs.close(file);
        fs.rmSync(file, { force: true });
      }
    },

    async putBlobs(key, blobs) {
      // Called directly (not through a log append) for large batches of backups, so it types its own failures.
      try {
        await (await storeBlobs(placement, key, blobs))();
      } catch (error) {
        if (RewindableError.isInstance(error)) throw error;
        throw storeIoError(`store backups of session ${key.sessionId}`, error);
      }
    },

    async getBlob(key, hash) {
      return packs.find(key, hash)?.read(hash) ?? readLooseBlob(blobsDirectory, hash);
    },

    async hasBlobs(key, hashes) {
      return new Set(hashes.filter((hash) => packs.find(key, hash) !== undefined || hasLooseBlob(blobsDirectory, hash)));
    },

    async listProjects() {
      return listProjectFolders(projectsDirectory);
    },

    async collectGarbage(referenced, { graceMs }) {
      const linked = linkedProjectFolders(projectsDirectory);
      if (linked.length > 0) {
        // Sessions of this store may lie behind such a link (a project folder moved to another disk): any blob may be theirs.
        const names = linked.map((name) => path.join('projects', name)).join(', ');
        const verb = linked.length === 1 ? 'is a symbolic link' : 'are symbolic links';
        return { blobsRemoved: 0, bytesFreed: 0, keptBecause: `${names} in the store ${verb}, which the store never follows: replace it with a real folder, or remove it` };
      }
      // The grace period protects blobs being written or reused right now, before any log line names them.
      const cutoff = Date.now() - graceMs;
      // Listed twice, the second time after the first listing ended: a session that moves meanwhile (copied under its
      // new project's key, then deleted under the old one) can be missed by a listing that reaches the new key before
      // the copy and the old one after the deletion, but the second listing finds it where it moved (see cleanup.ts).
      const sessions = new Set([...(await listEverySession()), ...(await listEverySession())]);
      return collectGarbage({ blobsDirectory, referenced, cutoff, sessions });
    },

    // The lock checks itself before each write of the session that holds it (HeldSessionLock.assertHeld).
    lock: (key): Promise<StorageLock> =>
      onLock(key, 'lock', async () => {
        await logs.ensureProjectFolder(key.projectKey);
        return acquireSessionLock(lockPath(key), key.sessionId, lockLeaseMs);
      }),

    inspectLock: (key) => onLock(key, 'read the lock of', async () => inspectSessionLock(lockPath(key), lockLeaseMs)),

    breakLock: (key) => onLock(key, 'break the lock of', async () => breakSessionLock(lockPath(key), lockLeaseMs)),

    async close() {
      logs.closeAll();
      packs.closeAll();
    },
  };
  return storage;
}
