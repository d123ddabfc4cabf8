import { RewindableError, RewindableErrorCode } from '../../errors.js';
import { SerialQueue } from '../../util/serial-queue.js';
import { sha256 } from '../../hash.js';
import type { SessionKey, StorageAdapter, StoreEntry, StoredSessionInfo } from '../storage-adapter.js';
import { compareLogs } from './log-comparison.js';
import { divergedError, flushTimeoutError, remoteUnreadable } from './mirror-errors.js';
import { lockBoth, RemoteLock } from './mirror-lock.js';
import type { RetrySettings } from './retry-delay.js';
import type { ReplicatorStatus } from './replicator-status.js';
import { SessionReplicator, type ReplicatorEvent } from './session-replicator.js';

export { MirrorFlushError } from './mirror-errors.js';
export type { RetrySettings } from './retry-delay.js';
export type { ReplicatorStatus as MirrorSessionStatus } from './replicator-status.js';

export interface MirroredStorageOptions {
  /** The store the running session works on: every write lands here first, and reads are answered from here when it can. */
  local: StorageAdapter;
  /** The store that receives a copy of every entry and blob, in the background (for example `postgresStorage()`). */
  remote: StorageAdapter;
  /** Waits between attempts to reach the remote: exponential, capped. Attempts go on until the remote answers. */
  retry?: RetrySettings;
  /**
   * How long `flush()` and `close()` wait for the remote to catch up before
   * rejecting with a `MirrorFlushError`.
   * @default 30000
   */
  flushTimeoutMs?: number;
  /**
   * Entries per remote append.
   * @default 500
   */
  maxBatchEntries?: number;
  /**
   * Blob bytes per remote call.
   * @default 8388608 (8 MiB)
   */
  maxBatchBytes?: number;
  /**
   * Take the remote's lock too (when it has one), so two machines cannot
   * write one session. When the remote cannot be reached, the local lock
   * alone is taken and the session opens anyway; the remote's is taken
   * before any entry is copied there. With `false`, entries are copied
   * without it.
   * @default true
   */
  lockRemote?: boolean;
  /** Observes the mirror: pushes, retries, and remote failures it worked around. Must not throw. */
  onEvent?: (event: MirrorEvent) => void;
}

export type MirrorEvent =
  | ReplicatorEvent
  /** A remote failure the mirror worked around by answering from the local store alone. */
  | { type: 'remote-skip'; operation: 'load' | 'lock'; key: SessionKey; error: unknown }
  /** A blob fetched from the remote could not be kept in the local store (it was still returned). */
  | { type: 'blob-cache-fail'; key: SessionKey; hash: string; error: unknown };

export interface MirrorStatus {
  /** True when the remote holds every entry and blob written so far. */
  caughtUp: boolean;
  pendingEntries: number;
  pendingBlobs: number;
  sessions: ReplicatorStatus[];
}

export interface MirroredStorage extends StorageAdapter {
  readonly local: StorageAdapter;
  readonly remote: StorageAdapter;
  /** The local store's directory, when it has one (the manager never tracks files inside it). */
  readonly directory?: string;
  /**
   * Resolves once the remote holds every entry and blob written before the
   * call; rejects with a `MirrorFlushError` after `timeoutMs`, or with the
   * error of a session whose copies diverged. Cuts any backoff wait short.
   */
  flush(options?: { timeoutMs?: number }): Promise<void>;
  status(): MirrorStatus;
  /** Flushes (bounded by `flushTimeoutMs`), stops copying, and closes both stores. Rejects if the flush did. */
  close(): Promise<void>;
}

interface MirroredSession {
  queue: SerialQueue;
  /** Replaced when the session is deleted, so writes queued behind the delete start a fresh copy. */
  replicator: SessionReplicator;
  /** Held while entries are copied to the remote (and while a manager has the session open). */
  remoteLock: RemoteLock;
  /** Local and remote logs were compared in this process (or the remote could not be reached to do it). */
  compared: boolean;
  /** The remote holds entries the local copy lacks; they are copied down before the first local write. */
  behindRemote: boolean;
}

/**
 * Local-first storage with a remote copy. Writes go to `local` and return as
 * soon as it has them; a background replicator per session copies every
 * entry and blob to `remote`, in order, retrying with capped exponential
 * backoff through outages, without losing or duplicating anything.
 *
 * A machine without a local copy resumes from the remote: `load` reads the
 * remote log (and the local store is brought up to date before the session
 * writes again), and `getBlob` fetches backups on demand, keeping each one
 * locally once its hash checks out.
 *
 * @example
 * import { filesystemStorage } from 'rewindable';
 * import { mirroredStorage } from 'rewindable/storage/mirror';
 * import { postgresStorage } from 'rewindable/storage/postgres';
 *
 * const storage = mirroredStorage({ local: filesystemStorage(), remote: postgresStorage({ connection: process.env.DATABASE_URL! }) });
 * const manager = await CheckpointManager.open({ cwd, storage });
 * // ... the agent works ...
 * await manager.close();
 * await storage.close(); // waits until the database has everything
 */
export function mirroredStorage(options: MirroredStorageOptions): MirroredStorage {
  const { local, remote } = options;
  const settings = {
    retry: options.retry ?? {},
    maxBatchEntries: options.maxBatchEntries ?? 500,
    maxBatchBytes: options.maxBatchBytes ?? 8 * 1024 * 1024,
  };
  const flushTimeoutMs = options.flushTimeoutMs ?? 30_000;
  const sessions = new Map<string, MirroredSession>();
  const lockedRemote = options.lockRemote === false ? undefined : remote;
  let closed = false;

  const emit = (event: MirrorEvent) => {
    try {
      options.onEvent?.(event);
    } catch {
      // An observer's bug must not stop the copying it observes.
    }
  };

  function sessionFor(key: SessionKey): MirroredSession {
    const id = JSON.stringify([key.projectKey, key.sessionId]);
    let session = sessions.get(id);
    if (session === undefined) {
      const queue = new SerialQueue();
      const remoteLock = new RemoteLock(key, lockedRemote);
      session = { queue, remoteLock, replicator: new SessionReplicator(key, local, remote, queue, remoteLock, settings, emit), compared: false, behindRemote: false };
      sessions.set(id, session);
    }
    return session;
  }

  /** A fresh replicator for a session whose copies were just deleted; writes queued behind the delete use it. */
  function restartReplicator(key: SessionKey, session: MirroredSession): void {
    session.replicator = new SessionReplicator(key, local, remote, session.queue, session.remoteLock, settings, emit);
    session.compared = false;
    session.behindRemote = false;
  }

  /**
   * Compares the two logs (inside the session's queue). With `catchUp`, a
   * local copy that lacks the remote's last entries gets them, so local writes
   * continue the same log.
   */
  async function compare(key: SessionKey, session: MirroredSession, catchUp: boolean): Promise<StoreEntry[] | null> {
    const generation = session.replicator.generation;
    const localEntries = await local.load(key);
    let remoteEntries: StoreEntry[] | null;
    try {
      remoteEntries = await remote.load(key);
    } catch (error) {
      if (localEntries === null && !catchUp) throw remoteUnreadable(key, error);
      // Local first: work on what this machine has; the replicator compares again once the remote answers.
      emit({ type: 'remote-skip', operation: 'load', key, error });
      session.compared = true;
      session.replicator.forget();
      return localEntries;
    }
    const comparison = compareLogs(localEntries ?? [], remoteEntries ?? []);
    if (comparison.kind === 'diverged') throw divergedError(key, comparison.at);
    session.compared = true;
    if (comparison.kind !== 'remote-ahead') {
      session.behindRemote = false;
      session.replicator.compared(localEntries ?? [], remoteEntries?.length ?? 0, generation);
      return localEntries;
    }
    session.behindRemote = !catchUp;
    if (catchUp) {
      await local.append(key, remoteEntries!.slice(localEntries?.length ?? 0));
      session.replicator.compared(remoteEntries!, remoteEntries!.length, generation);
    }
    return remoteEntries;
  }

  async function readyToWrite(key: SessionKey, session: MirroredSession): Promise<void> {
    if (!session.compared || session.behindRemote) await compare(key, session, true);
  }

  function assertOpen(): void {
    if (closed) throw new RewindableError(RewindableErrorCode.CLOSED, 'This mirrored storage is closed; create a new one to go on.');
  }

  const storage: MirroredStorage = {
    specificationVersion: 'v2',
    local,
    remote,
    ...localDirectory(local),

    async append(key, entries, blobs = [], appendOptions) {
      assertOpen();
      const session = sessionFor(key);
      await session.queue.run(async () => {
        // What this machine writes now could never reach the remote copy: the caller is told, rather than left to find out.
        const heldElsewhere = session.replicator.heldElsewhere;
        if (heldElsewhere !== undefined && entries.length > 0) throw heldElsewhere;
        if (entries.length > 0) await readyToWrite(key, session);
        await local.append(key, entries, blobs, appendOptions);
        session.replicator.accept(entries, blobs);
      });
    },

    async load(key) {
      const session = sessionFor(key);
      return session.queue.run(() => compare(key, session, false));
    },

    async listSessions(projectKey) {
      const [localSessions, remoteSessions] = await Promise.all([local.listSessions(projectKey), remote.listSessions(projectKey)]);
      const merged = new Map<string, StoredSessionInfo>(remoteSessions.map((info) => [info.sessionId, info]));
      for (const info of localSessions) {
        const other = merged.get(info.sessionId);
        merged.set(info.sessionId, other === undefined ? info : { ...info, mtime: Math.max(info.mtime, other.mtime) });
      }
      return [...merged.values()];
    },

    async delete(key) {
      const session = sessionFor(key);
      await session.queue.run(async () => {
        // Never another process's session on the remote: under its lock there, or not at all.
        await session.remoteLock.ensure();
        // No push may land after the remote copy is gone.
        await session.replicator.stop();
        restartReplicator(key, session);
        try {
          await local.delete(key);
          await remote.delete(key);
        } finally {
          await session.remoteLock.idle();
        }
        session.replicator.compared([], 0, session.replicator.generation);
        session.compared = true;
      });
    },

    async putBlobs(key, blobs) {
      assertOpen();
      const session = sessionFor(key);
      await session.queue.run(async () => {
        await local.putBlobs(key, blobs);
        session.replicator.accept([], blobs);
      });
    },

    async getBlob(key, hash) {
      const cached = await local.getBlob(key, hash);
      if (cached !== null) return cached;
      const fetched = await remote.getBlob(key, hash);
      // Kept locally only when it checks out; the caller verifies the hash either way.
      if (fetched !== null && sha256(fetched) === hash) {
        await sessionFor(key)
          .queue.run(() => local.putBlobs(key, [{ hash, bytes: fetched }]))
          .catch((error: unknown) => emit({ type: 'blob-cache-fail', key, hash, error }));
      }
      return fetched;
    },

    async hasBlobs(key, hashes) {
      const present = await local.hasBlobs(key, hashes);
      // A caller told "held" stores nothing more (relocation), and another machine reads the session from
      // the remote: what the local store holds under the key is copied there too, if it is not yet.
      if (present.size > 0) sessionFor(key).replicator.hold([...present]);
      const missing = hashes.filter((hash) => !present.has(hash));
      if (missing.length > 0) for (const hash of await remote.hasBlobs(key, missing)) present.add(hash);
      return present;
    },

    async flush(flushOptions = {}) {
      const timeoutMs = flushOptions.timeoutMs ?? flushTimeoutMs;
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(flushTimeoutError(storage.status(), timeoutMs)), timeoutMs);
      });
      try {
        await Promise.race([Promise.all([...sessions.values()].map((session) => session.replicator.caughtUp())), timeout]);
      } finally {
        clearTimeout(timer);
      }
    },

    status() {
      const statuses = [...sessions.values()].map((session) => session.replicator.status());
      return {
        caughtUp: statuses.every((status) => status.state === 'idle'),
        pendingEntries: statuses.reduce((total, status) => total + status.pendingEntries, 0),
        pendingBlobs: statuses.reduce((total, status) => total + status.pendingBlobs, 0),
        sessions: statuses,
      };
    },

    async close() {
      if (closed) return;
      let failure: unknown;
      try {
        await storage.flush();
      } catch (error) {
        failure = error;
      }
      closed = true;
      await Promise.all([...sessions.values()].map((session) => session.replicator.stop()));
      await Promise.all([...sessions.values()].map((session) => session.remoteLock.releaseNow().catch(() => {})));
      await local.close?.();
      await remote.close?.();
      if (failure !== undefined) throw failure;
    },
  };

  if (local.lock !== undefined || lockedRemote?.lock !== undefined) {
    storage.lock = async (key) => {
      const session = sessionFor(key);
      const copying = () => ['pushing', 'retrying'].includes(session.replicator.status().state);
      const lock = await lockBoth(key, local, session.remoteLock, (error) => emit({ type: 'remote-skip', operation: 'lock', key, error }), copying);
      if (session.replicator.heldElsewhere !== undefined) {
        // Opened again: copying resumes under the lock, once the logs are compared afresh (a divergence shows then).
        await session.queue.run(async () => {
          await session.replicator.stop();
          restartReplicator(key, session);
        });
      }
      return lock;
    };
  }
  if (local.listProjects !== undefined || remote.listProjects !== undefined) {
    storage.listProjects = async () => {
      const lists = await Promise.all([local.listProjects?.() ?? [], remote.listProjects?.() ?? []]);
      return [...new Set(lists.flat())];
    };
  }
  // Retention through the mirror frees local space only; the remote keeps its own (run cleanup() on it directly).
  if (local.collectGarbage !== undefined) storage.collectGarbage = (referenced, collectOptions) => local.collectGarbage!(referenced, collectOptions);
  return storage;
}

function localDirectory(local: StorageAdapter): { directory?: string } {
  const directory = (local as { directory?: unknown }).directory;
  return typeof directory === 'string' ? { directory } : {};
}
