import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { RewindableError, RewindableErrorCode, storeIoError } from '../../errors.js';
import { flushDirectory, flushFileData, writeAll } from '../../fs/flush.js';
import type { BlobWrite, SessionKey, StorageAdapter, StorageLock, StoredSessionInfo } from '../storage-adapter.js';
import { BlobPack } from './blob-pack.js';
import { collectGarbage } from './collect-garbage.js';
import { encodeLines, parseLog } from './log-lines.js';
import { maximumLeaseMs } from './lock-file.js';
import { hasLooseBlob, readLooseBlob, writeLooseBlob } from './loose-blobs.js';
import { linkedProjectFolders, listProjectFolders, projectFolder } from './project-folders.js';
import { acquireSessionLock, breakSessionLock, defaultLockLeaseMs, inspectSessionLock, type SessionLockHolder } from './session-lock.js';
import { safeLstat, safeReaddir } from './quiet-lookup.js';

export type Durability = 'full' | 'none';

const deflateRaw = promisify(zlib.deflateRaw);
/**
 * Uncompressed size of a bundle of bulk backups. Reading one member inflates
 * its bundle up to that member, so bundles stay small; deflate's window is
 * 32 KiB, so larger ones would barely compress better.
 */
const bundleBytes = 128 * 1024;
/** The flush of an append that stored nothing in the pack, or of any append with durability 'none'. */
const nothingToFlush = async (): Promise<void> => {};

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
  /**
   * Whether a backup of this size goes to the pack, which is flushed together
   * with its log line: a crash may keep the line and lose the backup, and the
   * call never returned. A loose backup is flushed before its line is written,
   * so a loose backup missing under an intact line is damage (see `SessionLog.load`).
   */
  flushedWithLogLine(size: number): boolean;
  close(): Promise<void>;
}

export function defaultStoreDirectory(): string {
  const fromEnvironment = process.env.REWINDABLE_HOME;
  return path.resolve(fromEnvironment !== undefined && fromEnvironment !== '' ? fromEnvironment : path.join(os.homedir(), '.rewindable'));
}

interface Appender {
  fd: number;
  /** Bytes in the log: kept here rather than asked of the file before every append. */
  length: number;
  /** Set after a failed flush: the data may be lost, so nothing more is appended until the session is reopened. */
  failure?: unknown;
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
  const looseBlobMinBytes = options.looseBlobMinBytes ?? 1024 * 1024;
  const lockLeaseMs = options.lockLeaseMs ?? defaultLockLeaseMs;
  if (!(lockLeaseMs >= 1 && lockLeaseMs <= maximumLeaseMs)) {
    throw new RewindableError(RewindableErrorCode.INVALID_OPTIONS, `lockLeaseMs must be a number of milliseconds from 1 to ${maximumLeaseMs} (a week); got ${lockLeaseMs}.`);
  }
  /** A blob appended to the pack as it is: neither a loose file of its own nor compressed in a bundle. */
  const goesToPackAsIs = (blob: BlobWrite) => blob.bytes.length < looseBlobMinBytes && blob.compress !== true;
  const projectsDirectory = path.join(directory, 'projects');
  const blobsDirectory = path.join(directory, 'blobs');
  const packsDirectory = path.join(blobsDirectory, 'packs');

  const appenders = new Map<string, Appender>();
  /** Intact length of each log as last loaded, so a writer can cut off a torn tail without parsing twice. */
  const loadedLengths = new Map<string, { size: number; validLength: number }>();
  // Packs are kept by file, whose name carries the project and the session.
  const writePacks = new Map<string, BlobPack>();
  const readPacks = new Map<string, BlobPack>();
  /** Packs that failed to flush: their data may be lost, so nothing more is added until the session is reopened. */
  const packFailures = new Map<string, unknown>();

  const logPath = (key: SessionKey) => path.join(projectsDirectory, key.projectKey, `${key.sessionId}.jsonl`);
  const lockPath = (key: SessionKey) => path.join(projectsDirectory, key.projectKey, `${key.sessionId}.lock`);
  /** `logPath` once its folder is checked not to be a link: for reading, writing and deleting. */
  const checkedLogPath = (key: SessionKey) => path.join(projectFolder(projectsDirectory, key.projectKey), `${key.sessionId}.jsonl`);
  const packPath = (key: SessionKey) => path.join(packsDirectory, key.projectKey, `${key.sessionId}.pack`);
  /** Where packs were named by session alone: read as a fallback, never written. */
  const legacyPackPath = (key: SessionKey) => path.join(packsDirectory, `${key.sessionId}.pack`);
  const keyString = (key: SessionKey) => `${key.projectKey}/${key.sessionId}`;

  /** The project's folder, created if missing; never a link (see project-folders.ts). */
  async function ensureProjectFolder(projectKey: string): Promise<string> {
    const folder = projectFolder(projectsDirectory, projectKey);
    if (fs.existsSync(folder)) return folder;
    const firstCreated = fs.mkdirSync(folder, { recursive: true });
    if (durable && firstCreated !== undefined) await flushCreatedDirectories(folder, firstCreated);
    return folder;
  }

  async function openAppender(key: SessionKey): Promise<Appender> {
    const file = path.join(await ensureProjectFolder(key.projectKey), `${key.sessionId}.jsonl`);
    const existed = fs.existsSync(file);
    const fd = fs.openSync(file, fs.constants.O_RDWR | fs.constants.O_CREAT | fs.constants.O_APPEND, 0o600);
    let length = 0;
    try {
      const size = fs.fstatSync(fd).size;
      length = size;
      if (size > 0) {
        const known = loadedLengths.get(keyString(key));
        const validLength = known !== undefined && known.size === size ? known.validLength : parseLog(fs.readFileSync(fd), file).validLength;
        if (validLength < size) {
          // A torn tail from a crash was never acknowledged; appending after it would merge it into the next line.
          fs.ftruncateSync(fd, validLength);
          if (durable) await flushFileData(fd);
          length = validLength;
        }
      }
      if (!existed && durable) await flushDirectory(path.dirname(file));
    } catch (error) {
      fs.closeSync(fd);
      throw error;
    }
    const appender: Appender = { fd, length };
    appenders.set(keyString(key), appender);
    return appender;
  }

  function readPack(file: string, refresh: boolean): BlobPack | undefined {
    const writer = writePacks.get(file);
    if (writer !== undefined) return writer;
    let pack = readPacks.get(file);
    if (pack === undefined || (refresh && !pack.unchangedOnDisk())) {
      pack?.close();
      pack = BlobPack.open(file, 'read');
      if (pack === undefined) readPacks.delete(file);
      else readPacks.set(file, pack);
    }
    return pack;
  }

  /** The pack holding `hash` for this session: its own, else one of the older layout under its id. */
  function findInPack(key: SessionKey, hash: string): BlobPack | undefined {
    for (const file of [packPath(key), legacyPackPath(key)]) {
      const pack = readPack(file, false);
      if (pack?.has(hash)) return pack;
      // Another process may have appended since this reader opened the pack.
      if (!writePacks.has(file)) {
        const refreshed = readPack(file, true);
        if (refreshed?.has(hash)) return refreshed;
      }
    }
    return undefined;
  }

  function closePack(file: string): void {
    for (const packs of [writePacks, readPacks]) {
      packs.get(file)?.close();
      packs.delete(file);
    }
  }

  /**
   * Writes blobs the store does not hold yet and returns a function that makes
   * them durable. Large ones become loose files (flushed as they are written);
   * small ones are appended to the session's pack.
   */
  async function storeBlobs(key: SessionKey, blobs: readonly BlobWrite[]): Promise<() => Promise<void>> {
    const plain: BlobWrite[] = [];
    const bulk: BlobWrite[] = [];
    for (const blob of blobs) {
      if (blob.bytes.length >= looseBlobMinBytes) await writeLooseBlob(blobsDirectory, blob.hash, blob.bytes, durable);
      else if (blob.compress === true) bulk.push(blob);
      else plain.push(blob);
    }
    if (plain.length === 0 && bulk.length === 0) return nothingToFlush;
    const { pack, flush } = packFor(key);
    if (plain.length > 0) pack.append(plain);
    if (bulk.length > 0) await appendBundles(pack, bulk);
    return flush;
  }

  /** `storeBlobs` for blobs that all go to the pack as they are: nothing to wait for, so no await (a tool's first backup). */
  function storeSmallBlobs(key: SessionKey, blobs: readonly BlobWrite[]): () => Promise<void> {
    const { pack, flush } = packFor(key);
    pack.append(blobs);
    return flush;
  }

  /**
   * Opens a pack for appending. A pack that did not exist yet (nor perhaps
   * its project's folder) is durable once the directory entries naming it are
   * flushed too: `flushNewEntries` does that.
   */
  function openWritePack(file: string): { pack: BlobPack; flushNewEntries: () => Promise<void> } {
    const firstCreated = fs.mkdirSync(path.dirname(file), { recursive: true });
    const isNew = !fs.existsSync(file);
    readPacks.get(file)?.close();
    readPacks.delete(file);
    const pack = BlobPack.open(file, 'write')!;
    writePacks.set(file, pack);
    return { pack, flushNewEntries: isNew ? () => flushCreatedDirectories(file, firstCreated ?? file) : nothingToFlush };
  }

  /** The session's pack, opened for appending, and what makes its appended entries durable. */
  function packFor(key: SessionKey): { pack: BlobPack; flush: () => Promise<void> } {
    const file = packPath(key);
    const failure = packFailures.get(file);
    if (failure !== undefined) throw storeIoError('store a backup (an earlier flush of the pack failed; reopen the session)', failure);
    const opened = writePacks.get(file);
    const { pack, flushNewEntries } = opened !== undefined ? { pack: opened, flushNewEntries: nothingToFlush } : openWritePack(file);
    if (!durable) return { pack, flush: nothingToFlush };
    const flush = async () => {
      try {
        await pack.flush();
        await flushNewEntries();
      } catch (error) {
        packFailures.set(file, error);
        throw error;
      }
    };
    return { pack, flush };
  }

  /**
   * Bulk backups (a first scan) are compressed in bundles of about 128 KiB:
   * one compressor per bundle instead of per file, run on the thread pool in
   * parallel. A bundle that does not shrink is stored as plain entries.
   */
  async function appendBundles(pack: BlobPack, blobs: readonly BlobWrite[]): Promise<void> {
    const seen = new Set<string>();
    const groups: BlobWrite[][] = [];
    let size = 0;
    for (const blob of blobs) {
      if (pack.has(blob.hash) || seen.has(blob.hash)) continue;
      seen.add(blob.hash);
      if (groups.length === 0 || size + blob.bytes.length > bundleBytes) {
        groups.push([]);
        size = 0;
      }
      groups.at(-1)!.push(blob);
      size += blob.bytes.length;
    }
    const compressed = await Promise.all(groups.map((group) => deflateRaw(Buffer.concat(group.map((blob) => blob.bytes)), { level: 1 })));
    groups.forEach((group, index) => {
      const raw = group.reduce((sum, blob) => sum + blob.bytes.length, 0);
      if (compressed[index]!.length < raw * 0.9) pack.appendBundle(group, compressed[index]!);
      else pack.append(group);
    });
  }

  /** Every session with a log, as `<project key>/<session id>`. */
  async function listEverySession(): Promise<string[]> {
    const sessions: string[] = [];
    for (const projectKey of listProjectFolders(projectsDirectory)) {
      for (const session of await storage.listSessions(projectKey)) sessions.push(keyString({ projectKey, sessionId: session.sessionId }));
    }
    return sessions;
  }

  const storage: FilesystemStorage = {
    specificationVersion: 'v1',
    directory,
    durability,
    logPath,

    async append(key, entries, blobs = [], appendOptions = {}) {
      if (entries.length === 0 && blobs.length === 0) return;
      const appender = entries.length === 0 ? undefined : (appenders.get(keyString(key)) ?? (await openAppender(key)));
      if (appender?.failure !== undefined) throw storeIoError('append to the session log (an earlier flush failed; reopen the session)', appender.failure);
      // Blob bytes reach the OS before the lines that name them, so a killed process never leaves a line without its blob.
      const flushBlobs = blobs.length === 0 ? nothingToFlush : blobs.every(goesToPackAsIs) ? storeSmallBlobs(key, blobs) : await storeBlobs(key, blobs);
      if (appender === undefined) return flushBlobs();
      const bytes = encodeLines(entries);
      const before = appender.length;
      try {
        writeAll(appender.fd, bytes);
        appender.length += bytes.length;
      } catch (error) {
        // Cut a partial line off so the log stays a list of whole lines.
        try {
          fs.ftruncateSync(appender.fd, before);
        } catch {
          appender.failure = error;
        }
        throw error;
      }
      if (!durable) return;
      if (appendOptions.flush === false) return flushBlobs();
      // Both files flush at once; if the blobs' flush is lost in a crash, the line is the
      // log's last and the manager drops it on load (it was never acknowledged).
      const flushing = flushFileData(appender.fd).catch((error: unknown) => {
        appender.failure = error;
        throw error;
      });
      const [logFlush, blobFlush] = await Promise.allSettled([flushing, flushBlobs()]);
      const failure = logFlush.status === 'rejected' ? logFlush : blobFlush.status === 'rejected' ? blobFlush : undefined;
      if (failure === undefined) return;
      // The caller is told these entries were not stored, so a reopened session must not find
      // them either (a rewind whose end record failed would otherwise count as complete).
      try {
        fs.ftruncateSync(appender.fd, before);
        appender.length = before;
      } catch {
        appender.failure ??= failure.reason;
      }
      throw failure.reason;
    },

    async load(key) {
      const file = logPath(key);
      let bytes: Buffer;
      try {
        bytes = readLogFile(checkedLogPath(key), key.sessionId);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
        if (RewindableError.isInstance(error)) throw error;
        throw storeIoError(`read the log of session ${key.sessionId} (${file})`, error);
      }
      const parsed = parseLog(bytes, file);
      loadedLengths.set(keyString(key), { size: bytes.length, validLength: parsed.validLength });
      // A crash between creating the log and completing its first line: nothing was ever
      // acknowledged, so the session does not exist (resuming it would skip its header).
      if (parsed.entries.length === 0) return null;
      return parsed.entries;
    },

    async listSessions(projectKey) {
      const folder = projectFolder(projectsDirectory, projectKey);
      let names: string[];
      try {
        names = fs.readdirSync(folder);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
        throw storeIoError(`list the sessions in ${folder}`, error);
      }
      const sessions: StoredSessionInfo[] = [];
      for (const name of names) {
        if (!name.endsWith('.jsonl')) continue;
        try {
          const key = { projectKey, sessionId: name.slice(0, -'.jsonl'.length) };
          // A log that is a link is listed as it is (its load then says what is wrong), never followed.
          const log = fs.lstatSync(path.join(folder, name));
          const packs = [safeLstat(packPath(key)), safeLstat(legacyPackPath(key))];
          const mtime = Math.max(log.mtimeMs, ...packs.map((pack) => pack?.mtimeMs ?? 0));
          sessions.push({ sessionId: key.sessionId, mtime, bytes: packs.reduce((sum, pack) => sum + (pack?.size ?? 0), log.size) });
        } catch {
          // Deleted while listing.
        }
      }
      return sessions;
    },

    async delete(key) {
      const appender = appenders.get(keyString(key));
      if (appender !== undefined) fs.closeSync(appender.fd);
      appenders.delete(keyString(key));
      closePack(packPath(key));
      fs.rmSync(checkedLogPath(key), { force: true });
      fs.rmSync(packPath(key), { force: true });
      // A pack of the older layout is named by session id alone: a session of that id in another project may read it.
      const stillListed = safeReaddir(projectsDirectory).some((project) => fs.existsSync(logPath({ projectKey: project, sessionId: key.sessionId })));
      if (!stillListed) {
        closePack(legacyPackPath(key));
        fs.rmSync(legacyPackPath(key), { force: true });
      }
    },

    async putBlobs(key, blobs) {
      // Called directly (not through a log append) for large batches of backups, so it types its own failures.
      try {
        await (await storeBlobs(key, blobs))();
      } catch (error) {
        if (RewindableError.isInstance(error)) throw error;
        throw storeIoError(`store backups of session ${key.sessionId}`, error);
      }
    },

    async getBlob(key, hash) {
      return findInPack(key, hash)?.read(hash) ?? readLooseBlob(blobsDirectory, hash);
    },

    releaseReadCaches(key) {
      for (const file of [packPath(key), legacyPackPath(key)]) {
        writePacks.get(file)?.forgetBundles();
        readPacks.get(file)?.forgetBundles();
      }
    },

    expectReads(key, hashes) {
      const pack = writePacks.get(packPath(key));
      if (pack === undefined || packFailures.has(packPath(key))) return;
      try {
        pack.takeOut(hashes);
      } catch {
        // Only a hint: a failed write leaves the pack as it was (see `writeStaged`), and the blobs in their bundles.
      }
    },

    async hasBlobs(key, hashes) {
      const present = new Set<string>();
      for (const hash of hashes) {
        if (findInPack(key, hash) !== undefined || hasLooseBlob(blobsDirectory, hash)) present.add(hash);
      }
      return present;
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

    flushedWithLogLine(size) {
      return size < looseBlobMinBytes;
    },

    async lock(key): Promise<StorageLock> {
      const folder = path.join(projectsDirectory, key.projectKey);
      try {
        await ensureProjectFolder(key.projectKey);
      } catch (error) {
        if (RewindableError.isInstance(error)) throw error;
        throw storeIoError(`create the folder of session ${key.sessionId} (${folder})`, error);
      }
      // The lock checks itself before each write of the session that holds it (HeldSessionLock.assertHeld).
      return acquireSessionLock(lockPath(key), key.sessionId, lockLeaseMs);
    },

    async inspectLock(key) {
      try {
        projectFolder(projectsDirectory, key.projectKey);
        return inspectSessionLock(lockPath(key), lockLeaseMs);
      } catch (error) {
        if (RewindableError.isInstance(error)) throw error;
        throw storeIoError(`read the lock of session ${key.sessionId} (${lockPath(key)})`, error);
      }
    },

    async breakLock(key) {
      try {
        projectFolder(projectsDirectory, key.projectKey);
        return breakSessionLock(lockPath(key), lockLeaseMs);
      } catch (error) {
        if (RewindableError.isInstance(error)) throw error;
        throw storeIoError(`break the lock of session ${key.sessionId} (${lockPath(key)})`, error);
      }
    },

    async close() {
      for (const appender of appenders.values()) fs.closeSync(appender.fd);
      appenders.clear();
      for (const pack of [...writePacks.values(), ...readPacks.values()]) pack.close();
      writePacks.clear();
      readPacks.clear();
    },
  };
  return storage;
}

/**
 * Makes what was just created at `target` durable: its entry in its parent,
 * and so on up to `firstCreated`, the highest directory created for it.
 */
async function flushCreatedDirectories(target: string, firstCreated: string): Promise<void> {
  for (let current = target; ; current = path.dirname(current)) {
    await flushDirectory(path.dirname(current));
    if (current === firstCreated) break;
  }
}

/** A session log's bytes, never read through a link (ENOENT when there is none). */
function readLogFile(file: string, sessionId: string): Buffer {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ELOOP') throw error;
    throw new RewindableError(
      RewindableErrorCode.STORE_IO,
      `The log of session ${sessionId}, ${file}, is a symbolic link: the store never reads a log through a link. Replace it with the file it leads to, or remove it.`,
      { details: { path: file } },
    );
  }
  try {
    if (!fs.fstatSync(fd).isFile()) throw new Error('it is not a regular file');
    return fs.readFileSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}
