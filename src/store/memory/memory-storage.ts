import { RewindableError, RewindableErrorCode } from '../../errors.js';
import type { BlobWrite, SessionKey, StorageAdapter, StorageLock, StoreEntry, StoredSessionInfo } from '../storage-adapter.js';

export interface MemoryStorageOptions {
  /**
   * Milliseconds since the epoch, for `listSessions()` mtimes and the garbage
   * collector's grace period. Pass a fixed or stepping clock for fully
   * repeatable tests.
   * @default Date.now
   */
  clock?: () => number;
}

/** What a memory store holds, as plain copies (for assertions in tests). */
export interface MemoryStorageSnapshot {
  sessions: Array<{ projectKey: string; sessionId: string; entries: StoreEntry[] }>;
  /** Blob bytes by SHA-256. */
  blobs: Map<string, Uint8Array>;
}

export interface MemoryStorage extends StorageAdapter {
  listProjects(): Promise<string[]>;
  collectGarbage: NonNullable<StorageAdapter['collectGarbage']>;
  lock: NonNullable<StorageAdapter['lock']>;
  close(): Promise<void>;
  /** A deep copy of everything stored. */
  snapshot(): MemoryStorageSnapshot;
}

interface StoredSession {
  projectKey: string;
  sessionId: string;
  /** Entries as JSON text: every load hands out fresh objects, so callers cannot change the store by mutating them. */
  lines: string[];
  bytes: number;
  mtime: number;
}

/**
 * Storage that lives in this process's memory: no disk, nothing random, gone
 * when the process ends. Meant for unit tests of code that uses rewindable
 * (and as the smallest complete example of an adapter). Several managers may
 * share one instance, one after another, to test resuming.
 *
 * @example
 * import { memoryStorage } from 'rewindable/storage/memory';
 * const storage = memoryStorage();
 * const manager = await CheckpointManager.open({ cwd: projectDirectory, storage });
 */
export function memoryStorage(options: MemoryStorageOptions = {}): MemoryStorage {
  const clock = options.clock ?? Date.now;
  const sessions = new Map<string, StoredSession>();
  const blobs = new Map<string, { bytes: Uint8Array; storedAt: number }>();
  /** Which sessions hold which blobs, so `delete` frees exactly the blobs no other session holds. */
  const holdings = new Map<string, Set<string>>();
  const locks = new Map<string, symbol>();

  const keyString = (key: SessionKey) => JSON.stringify([key.projectKey, key.sessionId]);

  function storeBlobs(key: SessionKey, writes: readonly BlobWrite[]): void {
    let held = holdings.get(keyString(key));
    if (held === undefined) holdings.set(keyString(key), (held = new Set()));
    for (const blob of writes) {
      held.add(blob.hash);
      const existing = blobs.get(blob.hash);
      if (existing !== undefined) existing.storedAt = clock();
      else blobs.set(blob.hash, { bytes: Uint8Array.from(blob.bytes), storedAt: clock() });
    }
  }

  function isHeldElsewhere(hash: string, except: string): boolean {
    for (const [holder, held] of holdings) if (holder !== except && held.has(hash)) return true;
    return false;
  }

  return {
    specificationVersion: 'v2',

    async append(key, entries, writes = []) {
      // Encode first: an entry that is not JSON fails the whole append before anything is stored.
      const lines = entries.map((entry) => JSON.stringify(entry));
      storeBlobs(key, writes);
      if (lines.length === 0) return;
      let session = sessions.get(keyString(key));
      if (session === undefined) {
        session = { projectKey: key.projectKey, sessionId: key.sessionId, lines: [], bytes: 0, mtime: 0 };
        sessions.set(keyString(key), session);
      }
      session.lines.push(...lines);
      session.bytes += lines.reduce((total, line) => total + Buffer.byteLength(line), 0);
      session.mtime = clock();
    },

    async load(key) {
      const session = sessions.get(keyString(key));
      return session === undefined ? null : session.lines.map((line) => JSON.parse(line) as StoreEntry);
    },

    async listSessions(projectKey) {
      const listed: StoredSessionInfo[] = [];
      for (const [id, session] of sessions) {
        if (session.projectKey !== projectKey) continue;
        let bytes = session.bytes;
        for (const hash of holdings.get(id) ?? []) if (!isHeldElsewhere(hash, id)) bytes += blobs.get(hash)?.bytes.length ?? 0;
        listed.push({ sessionId: session.sessionId, mtime: session.mtime, bytes });
      }
      return listed;
    },

    async delete(key) {
      const id = keyString(key);
      sessions.delete(id);
      for (const hash of holdings.get(id) ?? []) if (!isHeldElsewhere(hash, id)) blobs.delete(hash);
      holdings.delete(id);
    },

    async putBlobs(key, writes) {
      storeBlobs(key, writes);
    },

    async getBlob(_key, hash) {
      const blob = blobs.get(hash);
      return blob === undefined ? null : Uint8Array.from(blob.bytes);
    },

    async hasBlobs(key, hashes) {
      // Held by this key, not merely stored: another session's blob goes when that session is deleted.
      const held = holdings.get(keyString(key));
      return new Set(hashes.filter((hash) => held?.has(hash) === true && blobs.has(hash)));
    },

    async listProjects() {
      return [...new Set([...sessions.values()].map((session) => session.projectKey))];
    },

    async collectGarbage(referenced, { graceMs }) {
      const cutoff = clock() - graceMs;
      let blobsRemoved = 0;
      let bytesFreed = 0;
      for (const [hash, blob] of blobs) {
        if (referenced.has(hash) || blob.storedAt > cutoff) continue;
        blobs.delete(hash);
        for (const held of holdings.values()) held.delete(hash);
        blobsRemoved += 1;
        bytesFreed += blob.bytes.length;
      }
      return { blobsRemoved, bytesFreed };
    },

    async lock(key): Promise<StorageLock> {
      const id = keyString(key);
      if (locks.has(id)) {
        throw new RewindableError(
          RewindableErrorCode.SESSION_LOCKED,
          `Session ${key.sessionId} is locked: another manager on this memory storage has it open. Close that manager first.`,
        );
      }
      const token = Symbol(id);
      locks.set(id, token);
      return {
        async release() {
          if (locks.get(id) === token) locks.delete(id);
        },
      };
    },

    async close() {
      // Nothing to release: the data stays readable until the instance is dropped.
    },

    snapshot() {
      return {
        sessions: [...sessions.values()].map((session) => ({
          projectKey: session.projectKey,
          sessionId: session.sessionId,
          entries: session.lines.map((line) => JSON.parse(line) as StoreEntry),
        })),
        blobs: new Map([...blobs].map(([hash, blob]) => [hash, Uint8Array.from(blob.bytes)])),
      };
    },
  };
}
