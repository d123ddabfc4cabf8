import { RewindableError, RewindableErrorCode } from '../errors.js';
import { isUuid } from '../paths.js';
import { openStorage, type StoreLocation } from '../session/list-sessions.js';
import { blobsNamedBy, SessionLog } from './session-log.js';

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
 * open is never removed, and new blobs get a grace period.
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
      for (const session of await storage.listSessions(projectKey)) {
        const key = { projectKey, sessionId: session.sessionId };
        // Only `<uuid>` logs are sessions: anything else in a project's folder (a user's copy of a log) is never
        // removed, and the backups it names are kept.
        if (session.mtime < cutoff && isUuid(session.sessionId)) {
          const lock = await storage.lock?.(key).catch((error: unknown) => {
            if (RewindableError.isInstance(error) && error.code === RewindableErrorCode.SESSION_LOCKED) return null;
            throw error;
          });
          if (lock !== null) {
            try {
              await storage.delete(key);
            } finally {
              await lock?.release();
            }
            result.sessionsRemoved.push(key);
            result.bytesFreed += session.bytes ?? 0;
            continue;
          }
          result.sessionsLocked += 1;
        }
        result.sessionsKept += 1;
        const loaded = await new SessionLog(storage, key).load().catch(() => undefined);
        if (loaded === undefined) unreadable.push(key.sessionId);
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
