import { RewindableError, RewindableErrorCode } from '../errors.js';
import { isUuid } from '../paths.js';
import { openStorage, type StoreLocation } from '../session/list-sessions.js';
import { blobsNamedBy, SessionLog } from './session-log.js';
import type { SessionKey, StorageAdapter, StorageLock, StoredSessionInfo } from './storage-adapter.js';

export interface CleanupOptions extends StoreLocation {
  /**
   * Sessions idle (no write) for longer than this are removed.
   * @default 30
   */
  olderThanDays?: number;
  /**
   * Blobs younger than this are kept even when no session names them yet:
   * a live session may be writing the record that will.
   * @default 3600000 (one hour)
   */
  graceMs?: number;
  /** Reports progress (for long clean-ups). */
  onProgress?: (event: { phase: 'sessions' | 'blobs'; done: number; total: number }) => void;
}

export interface CleanupResult {
  sessionsRemoved: Array<{ projectKey: string; sessionId: string }>;
  /** Idle sessions left alone because a live process holds them. */
  sessionsLocked: number;
  sessionsKept: number;
  blobsRemoved: number;
  /** Bytes of removed session logs, packs and blobs. */
  bytesFreed: number;
  /** Set when no blob was removed, and why. */
  blobsKeptBecause?: string;
}

/**
 * Retention: removes sessions idle longer than `olderThanDays`, then every
 * shared blob no remaining session names. A session another live process has
 * open is never removed, nor one written since it was listed as idle, and
 * new blobs get a grace period.
 */
export async function cleanup(options: CleanupOptions = {}): Promise<CleanupResult> {
  const olderThanDays = options.olderThanDays ?? 30;
  if (!(olderThanDays >= 0)) throw new RewindableError(RewindableErrorCode.INVALID_OPTIONS, `olderThanDays must be a number of days, 0 or more; got ${olderThanDays}.`);
  const { storage, owned } = openStorage(options);
  const result: CleanupResult = { sessionsRemoved: [], sessionsLocked: 0, sessionsKept: 0, blobsRemoved: 0, bytesFreed: 0 };
  try {
    if (storage.listProjects === undefined) {
      throw new RewindableError(RewindableErrorCode.INVALID_OPTIONS, 'This storage adapter cannot list its projects, so it cannot be cleaned up.');
    }
    const cutoff = Date.now() - olderThanDays * 24 * 60 * 60 * 1000;
    const referenced = new Set<string>();
    const unreadable: string[] = [];
    const projects = await storage.listProjects();
    let done = 0;
    for (const projectKey of projects) {
      for (const sessionId of await removeIdleSessions(storage, projectKey, cutoff, result)) {
        result.sessionsKept += 1;
        const loaded = await new SessionLog(storage, { projectKey, sessionId }).load().catch(() => undefined);
        if (loaded === undefined) unreadable.push(sessionId);
        for (const record of loaded?.records ?? []) for (const hash of blobsNamedBy(record)) referenced.add(hash);
      }
      done += 1;
      options.onProgress?.({ phase: 'sessions', done, total: projects.length });
    }
    // A session whose log cannot be read may name any blob: then no blob is removed.
    if (unreadable.length > 0) result.blobsKeptBecause = `the logs of ${unreadable.length} session(s) could not be read (${unreadable.join(', ')})`;
    else if (storage.collectGarbage !== undefined) {
      const collected = await storage.collectGarbage(referenced, { graceMs: options.graceMs ?? 60 * 60 * 1000 });
      result.blobsRemoved = collected.blobsRemoved;
      result.bytesFreed += collected.bytesFreed;
      options.onProgress?.({ phase: 'blobs', done: 1, total: 1 });
    }
    return result;
  } finally {
    if (owned) await storage.close?.();
  }
}

/**
 * Removes the project's sessions idle since before `cutoff` and returns the
 * ids of those it keeps. Only `<uuid>` logs are sessions: anything else in a
 * project's folder (a user's copy of a log) is never removed, and the backups
 * it names are kept.
 *
 * A session listed as idle may be resumed (and written: a rewind and its undo
 * point) before its lock is taken here, so each one is checked again once
 * locked, and removed only if it is still exactly as listed. The idle
 * sessions are locked all together, then listed once more, so that this
 * costs one listing per project rather than one per session.
 */
async function removeIdleSessions(storage: StorageAdapter, projectKey: string, cutoff: number, result: CleanupResult): Promise<string[]> {
  const listed = await storage.listSessions(projectKey);
  const idle = listed.filter((session) => session.mtime < cutoff && isUuid(session.sessionId));
  const kept = listed.filter((session) => !idle.includes(session)).map((session) => session.sessionId);
  const locks = new Map<StoredSessionInfo, StorageLock | undefined>();
  try {
    for (const session of idle) {
      const lock = await lockUnlessHeld(storage, { projectKey, sessionId: session.sessionId });
      if (lock === null) {
        result.sessionsLocked += 1;
        kept.push(session.sessionId);
      } else locks.set(session, lock);
    }
    const relisted = locks.size === 0 ? new Map<string, StoredSessionInfo>() : new Map((await storage.listSessions(projectKey)).map((session) => [session.sessionId, session]));
    for (const session of locks.keys()) {
      const current = relisted.get(session.sessionId);
      if (current === undefined) continue; // removed by someone else meanwhile
      if (current.mtime !== session.mtime || current.bytes !== session.bytes) {
        kept.push(session.sessionId);
        continue;
      }
      const key = { projectKey, sessionId: session.sessionId };
      await storage.delete(key);
      result.sessionsRemoved.push(key);
      result.bytesFreed += session.bytes ?? 0;
    }
  } finally {
    for (const lock of locks.values()) await lock?.release();
  }
  return kept;
}

/** The session's lock, `undefined` for an adapter without locks, or `null` while another process holds it. */
async function lockUnlessHeld(storage: StorageAdapter, key: SessionKey): Promise<StorageLock | undefined | null> {
  try {
    return await storage.lock?.(key);
  } catch (error) {
    if (RewindableError.isInstance(error) && error.code === RewindableErrorCode.SESSION_LOCKED) return null;
    throw error;
  }
}
