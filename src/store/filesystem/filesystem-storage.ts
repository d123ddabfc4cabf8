import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { RewindableError, storeIoError } from '../../errors.js';
import { flushDirectory, flushFileData, writeAll } from '../../fs/flush.js';
import type { BlobWrite, SessionKey, StorageAdapter, StorageLock, StoredSessionInfo } from '../storage-adapter.js';
import { BlobPack } from './blob-pack.js';
import { encodeLines, parseLog } from './log-lines.js';
import { hasLooseBlob, readLooseBlob, writeLooseBlob } from './loose-blobs.js';
import { acquireSessionLock } from './session-lock.js';

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
}

export interface FilesystemStorage extends StorageAdapter {
  readonly directory: string;
  readonly durability: Durability;
  /** Where a session's log lives (for messages and tools). */
  logPath(key: SessionKey): string;
  listProjects(): Promise<string[]>;
  collectGarbage: NonNullable<StorageAdapter['collectGarbage']>;
  lock: NonNullable<StorageAdapter['lock']>;
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
 *   projects/<project key>/<session id>.jsonl   the session log
 *   projects/<project key>/<session id>.lock    the writer's lock
 *   blobs/packs/<session id>.pack                the session's smaller blobs
 *   blobs/<ab>/<sha256>                          larger blobs, shared
 */
export function filesystemStorage(options: FilesystemStorageOptions = {}): FilesystemStorage {
  const directory = path.resolve(options.directory ?? defaultStoreDirectory());
  const durability = options.durability ?? 'full';
  const durable = durability === 'full';
  const looseBlobMinBytes = options.looseBlobMinBytes ?? 1024 * 1024;
  /** A blob appended to the pack as it is: neither a loose file of its own nor compressed in a bundle. */
  const goesToPackAsIs = (blob: BlobWrite) => blob.bytes.length < looseBlobMinBytes && blob.compress !== true;
  const projectsDirectory = path.join(directory, 'projects');
  const blobsDirectory = path.join(directory, 'blobs');
  const packsDirectory = path.join(blobsDirectory, 'packs');

  const appenders = new Map<string, Appender>();
  /** Intact length of each log as last loaded, so a writer can cut off a torn tail without parsing twice. */
  const loadedLengths = new Map<string, { size: number; validLength: number }>();
  const writePacks = new Map<string, BlobPack>();
  const readPacks = new Map<string, BlobPack>();
  /** Sessions whose pack failed to flush: its data may be lost, so nothing more is added until reopened. */
  const packFailures = new Map<string, unknown>();

  const logPath = (key: SessionKey) => path.join(projectsDirectory, key.projectKey, `${key.sessionId}.jsonl`);
  const packPath = (key: SessionKey) => path.join(packsDirectory, `${key.sessionId}.pack`);
  const keyString = (key: SessionKey) => `${key.projectKey}/${key.sessionId}`;

  async function ensureDirectory(target: string): Promise<void> {
    if (fs.existsSync(target)) return;
    const firstCreated = fs.mkdirSync(target, { recursive: true });
    if (!durable || firstCreated === undefined) return;
    // A new directory is durable once its parent's entry for it is flushed, at every level created.
    for (let current = target; ; current = path.dirname(current)) {
      await flushDirectory(path.dirname(current));
      if (current === firstCreated) break;
    }
  }

  async function openAppender(key: SessionKey): Promise<Appender> {
    const file = logPath(key);
    await ensureDirectory(path.dirname(file));
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

  function writePack(key: SessionKey): BlobPack {
    let pack = writePacks.get(key.sessionId);
    if (pack === undefined) {
      fs.mkdirSync(packsDirectory, { recursive: true });
      readPacks.get(key.sessionId)?.close();
      readPacks.delete(key.sessionId);
      pack = BlobPack.open(packPath(key), 'write')!;
      writePacks.set(key.sessionId, pack);
    }
    return pack;
  }

  function readPack(key: SessionKey, refresh: boolean): BlobPack | undefined {
    const writer = writePacks.get(key.sessionId);
    if (writer !== undefined) return writer;
    let pack = readPacks.get(key.sessionId);
    if (pack === undefined || refresh) {
      pack?.close();
      pack = BlobPack.open(packPath(key), 'read');
      if (pack === undefined) readPacks.delete(key.sessionId);
      else readPacks.set(key.sessionId, pack);
    }
    return pack;
  }

  function findInPack(key: SessionKey, hash: string): BlobPack | undefined {
    const pack = readPack(key, false);
    if (pack?.has(hash)) return pack;
    // Another process may have appended since this reader opened the pack.
    if (!writePacks.has(key.sessionId)) {
      const refreshed = readPack(key, true);
      if (refreshed?.has(hash)) return refreshed;
    }
    return undefined;
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

  /** The session's pack, opened for appending, and what makes its appended entries durable. */
  function packFor(key: SessionKey): { pack: BlobPack; flush: () => Promise<void> } {
    const failure = packFailures.get(key.sessionId);
    if (failure !== undefined) throw storeIoError('store a backup (an earlier flush of the pack failed; reopen the session)', failure);
    const isNewPack = !writePacks.has(key.sessionId) && !fs.existsSync(packPath(key));
    const pack = writePack(key);
    if (!durable) return { pack, flush: nothingToFlush };
    const flush = async () => {
      try {
        await pack.flush();
        if (isNewPack) await flushDirectory(packsDirectory);
      } catch (error) {
        packFailures.set(key.sessionId, error);
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

  return {
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
        bytes = fs.readFileSync(file);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
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
      const folder = path.join(projectsDirectory, projectKey);
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
          const sessionId = name.slice(0, -'.jsonl'.length);
          const log = fs.statSync(path.join(folder, name));
          const pack = safeLstat(packPath({ projectKey, sessionId }));
          sessions.push({ sessionId, mtime: Math.max(log.mtimeMs, pack?.mtimeMs ?? 0), bytes: log.size + (pack?.size ?? 0) });
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
      for (const packs of [writePacks, readPacks]) {
        packs.get(key.sessionId)?.close();
        packs.delete(key.sessionId);
      }
      fs.rmSync(logPath(key), { force: true });
      // Packs are named by session id alone; a session moved to another project key still needs its pack.
      const stillListed = safeReaddir(projectsDirectory).some((project) => fs.existsSync(logPath({ projectKey: project, sessionId: key.sessionId })));
      if (!stillListed) fs.rmSync(packPath(key), { force: true });
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
      writePacks.get(key.sessionId)?.forgetBundles();
      readPacks.get(key.sessionId)?.forgetBundles();
    },

    expectReads(key, hashes) {
      const pack = writePacks.get(key.sessionId);
      if (pack === undefined || packFailures.has(key.sessionId)) return;
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
      try {
        return fs.readdirSync(projectsDirectory).filter((name) => !name.startsWith('.'));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
        throw storeIoError(`list the projects in ${projectsDirectory}`, error);
      }
    },

    async collectGarbage(referenced, { graceMs }) {
      const cutoff = Date.now() - graceMs;
      let blobsRemoved = 0;
      let bytesFreed = 0;
      const remove = (file: string, size: number) => {
        fs.rmSync(file, { force: true });
        blobsRemoved += 1;
        bytesFreed += size;
      };
      const liveSessions = new Set<string>();
      for (const project of await this.listProjects()) {
        for (const session of await this.listSessions(project)) liveSessions.add(session.sessionId);
      }
      for (const folder of safeReaddir(blobsDirectory)) {
        const folderPath = path.join(blobsDirectory, folder);
        for (const name of safeReaddir(folderPath)) {
          const file = path.join(folderPath, name);
          const stat = safeLstat(file);
          // The grace period protects blobs being written right now, before any log line names them.
          if (stat === undefined || stat.mtimeMs > cutoff) continue;
          if (folder === 'packs') {
            if (name.endsWith('.pack') && !liveSessions.has(name.slice(0, -'.pack'.length))) remove(file, stat.size);
          } else if (name.endsWith('.tmp') || !referenced.has(name)) {
            remove(file, stat.size);
          }
        }
      }
      return { blobsRemoved, bytesFreed };
    },

    flushedWithLogLine(size) {
      return size < looseBlobMinBytes;
    },

    async lock(key): Promise<StorageLock> {
      const folder = path.join(projectsDirectory, key.projectKey);
      try {
        await ensureDirectory(folder);
      } catch (error) {
        throw storeIoError(`create the folder of session ${key.sessionId} (${folder})`, error);
      }
      return acquireSessionLock(path.join(projectsDirectory, key.projectKey, `${key.sessionId}.lock`), key.sessionId);
    },

    async close() {
      for (const appender of appenders.values()) fs.closeSync(appender.fd);
      appenders.clear();
      for (const pack of [...writePacks.values(), ...readPacks.values()]) pack.close();
      writePacks.clear();
      readPacks.clear();
    },
  };
}

function safeReaddir(folder: string): string[] {
  try {
    return fs.readdirSync(folder);
  } catch {
    return [];
  }
}

function safeLstat(file: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(file);
  } catch {
    return undefined;
  }
}
