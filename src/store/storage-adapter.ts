/**
 * The storage contract, version 2. A storage adapter keeps two things:
 *
 * - session logs: ordered, append-only lists of JSON entries, one list per
 *   session. This half has the shape of the Claude Agent SDK's `SessionStore`
 *   (`append`, `load`, `listSessions`, `delete`, keyed by `{ projectKey, sessionId }`),
 *   so an existing implementation can be reused;
 * - blobs: immutable byte strings named by their SHA-256 (lowercase hex).
 *
 * The manager checks every blob's hash on read, validates every entry, and
 * serializes all writes to one session, so adapters stay simple. What makes
 * an adapter fast or small (deltas, compression, caches) stays inside it: the
 * entries an adapter stores are rewindable's own log records, which it may
 * read to decide (the filesystem adapter stores a file's next version as a
 * delta of the one before).
 */

/** Addresses one session's log. `projectKey` is the encoded project path. */
export interface SessionKey {
  readonly projectKey: string;
  readonly sessionId: string;
}

/** One log entry: any JSON-safe object with a string `type`. */
export interface StoreEntry {
  readonly type: string;
  readonly [field: string]: unknown;
}

export interface StoredSessionInfo {
  readonly sessionId: string;
  /** Last modification, milliseconds since the epoch. */
  readonly mtime: number;
  /** Bytes the session occupies on its own (log and unshared blobs), when the adapter knows. */
  readonly bytes?: number;
}

export interface BlobWrite {
  /** SHA-256 of `bytes`, lowercase hex. */
  readonly hash: string;
  /** Never changed once handed over: an adapter may keep the buffer itself. */
  readonly bytes: Uint8Array;
}

export interface AppendOptions {
  /**
   * `false`: the entries need not be durable when the promise resolves; the
   * next flushed append makes them so. For bookkeeping the manager can afford
   * to lose in a power cut (never for backups).
   * @default true
   */
  flush?: boolean;
}

export interface StorageLock {
  release(): Promise<void>;
  /**
   * Resolves while this lock is still its holder's; rejects with a
   * `SESSION_LOCKED` `RewindableError` once it is not (broken by hand, taken
   * over, or lost with a connection and taken by another holder since), and
   * keeps rejecting. The manager calls it before every write it makes under
   * the lock (each append, each stored batch of backups, the note of a rewind
   * and its removal), so a write is tied to the lock of the session that makes
   * it, not to whichever lock the adapter holds for the key now. A lock that
   * can be lost while held must implement it.
   *
   * Optional: a lock without it is taken to be held until released.
   */
  assertHeld?(): Promise<void>;
}

export interface StorageAdapter {
  readonly specificationVersion: 'v2';

  /**
   * Appends entries in order. Resolves once they are stored as durably as the
   * adapter promises (the filesystem adapter: fsynced, unless `durability: 'none'`).
   *
   * `blobs` are the backups the entries name. They are stored no later than
   * the entries: if storing a blob fails, the entries are not appended. An
   * adapter may flush both together (one round of flushes for a tracked
   * edit): after a crash, the manager takes a last entry naming a blob the
   * key does not hold (`hasBlobs`) as never acknowledged, and discards it.
   */
  append(key: SessionKey, entries: readonly StoreEntry[], blobs?: readonly BlobWrite[], options?: AppendOptions): Promise<void>;
  /** Every entry appended under `key`, in order, or `null` when the session does not exist. */
  load(key: SessionKey): Promise<StoreEntry[] | null>;
  /** Sessions of one project. */
  listSessions(projectKey: string): Promise<StoredSessionInfo[]>;
  /** Removes a session's log and the blobs only it holds. */
  delete(key: SessionKey): Promise<void>;

  /**
   * Stores blobs on their own (copies between stores, forks, relocation). A
   * blob written under a key is then held by that key (see `hasBlobs`);
   * adapters may share storage between sessions by hash.
   */
  putBlobs(key: SessionKey, blobs: readonly BlobWrite[]): Promise<void>;
  /**
   * The blob's bytes, or `null` when it is not stored. Every blob `key` holds
   * reads; an adapter may also return one only another key holds. Callers
   * verify the hash.
   */
  getBlob(key: SessionKey, hash: string): Promise<Uint8Array | null>;
  /**
   * The subset of `hashes` that `key` holds. `key` holds a blob stored under
   * it (by `append` or `putBlobs`) once that call resolves, durably so no
   * later than the entries appended with it; as far as the adapter can tell,
   * it keeps holding it when damage makes it unreadable (`getBlob` says so
   * then), until `key`
   * itself is deleted, or `collectGarbage` removes a blob no session it was
   * told of names: deleting *another* key never makes a held blob
   * unreadable under `key`. Callers rely on that: a blob reported here is not
   * stored again (relocation copies only the rest, then deletes the old key).
   * An adapter that shares blobs between sessions by hash must count who
   * holds each one, and may report a blob stored under another key only when
   * deleting that key can never free it.
   */
  hasBlobs(key: SessionKey, hashes: readonly string[]): Promise<Set<string>>;
  /** Every project key with at least one session (retention needs it). */
  listProjects?(): Promise<string[]>;
  /**
   * Deletes shared blobs that no session in `referenced` names and that are
   * older than `graceMs`. Returns how many bytes were freed, and, when it
   * removed nothing on purpose, why (`keptBecause`, shown to the user).
   */
  collectGarbage?(referenced: ReadonlySet<string>, options: { graceMs: number }): Promise<{ blobsRemoved: number; bytesFreed: number; keptBecause?: string }>;
  /**
   * Exclusive write access to one session. Rejects with a `SESSION_LOCKED`
   * `RewindableError` while another live process holds it, through this
   * instance or any other over the same data. A lock that can be lost while
   * held (with a connection) implements `StorageLock.assertHeld`, which takes
   * it again first when nobody took the session meanwhile; an adapter shared
   * by processes also fences each write against a takeover that lands after
   * that check (PostgreSQL: a writer token checked inside the write's transaction).
   */
  lock?(key: SessionKey): Promise<StorageLock>;
  /** Releases open handles. */
  close?(): Promise<void>;
}
