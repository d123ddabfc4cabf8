import { RewindableError, RewindableErrorCode } from '../errors.js';
import { isUuid } from '../paths.js';
import { clearPendingRewind, isProjectKey, sessionsWithPendingRewinds } from '../rewind/pending-rewind-note.js';
import { openStorage, type StoreLocation } from '../session/list-sessions.js';
import { blobsNamedBy, SessionLog, type LoadedSession } from './session-log.js';
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
  /**
   * Report what would be removed, and remove nothing: the idle sessions are
   * checked as for a real clean-up (locks taken and released, logs read), but
   * none is deleted and no blob is collected, so `blobsRemoved` is 0.
   * @default false
   */
  dryRun?: boolean;
  /** Reports progress (for long clean-ups). */
  onProgress?: (event: { phase: 'sessions' | 'blobs'; done: number; total: number }) => void;
}

export interface CleanupResult {
  /** The sessions removed; in a dry run, those a real clean-up would remove now. */
  sessionsRemoved: Array<{ projectKey: string; sessionId: string }>;
  /** Idle sessions left alone because a live process holds them. */
  sessionsLocked: number;
  sessionsKept: number;
  /**
   * Idle files named like sessions whose logs are not rewindable session
   * logs (another tool's file, a damaged log): never removed, and why.
   */
  leftAlone: Array<{ projectKey: string; sessionId: string; reason: string }>;
  blobsRemoved: number;
  /** Bytes of removed session logs, packs and blobs (in a dry run, of the sessions only). */
  bytesFreed: number;
  /** Set when no blob was removed, and why. */
  blobsKeptBecause?: string;
}

/**
 * Retention: removes sessions idle longer than `olderThanDays`, then every
 * shared blob no remaining session names. A session another live process has
 * open is never removed, nor one written since it was listed as idle, nor a
 * file that is not a rewindable session log; new blobs get a grace period.
 * Only project keys are projects: the notes of rewinds in progress are the
 * store's own, and go with the session they note.
 */
export async function cleanup(options: CleanupOptions = {}): Promise<CleanupResult> {
  const olderThanDays = options.olderThanDays ?? 30;
  if (!(olderThanDays >= 0)) throw new RewindableError(RewindableErrorCode.INVALID_OPTIONS, `olderThanDays must be a number of days, 0 or more; got ${olderThanDays}.`);
  const { storage, owned } = openStorage(options);
  const result: CleanupResult = { sessionsRemoved: [], sessionsLocked: 0, sessionsKept: 0, leftAlone: [], blobsRemoved: 0, bytesFreed: 0 };
  try {
    if (storage.listProjects === undefined) {
      throw new RewindableError(RewindableErrorCode.INVALID_OPTIONS, 'This storage adapter cannot list its projects, so it cannot be cleaned up.');
    }
    const cutoff = Date.now() - olderThanDays * 24 * 60 * 60 * 1000;
    const referenced = new ReferencedBlobs(storage);
    const projects = (await storage.listProjects()).filter(isProjectKey);
    let done = 0;
    for (const projectKey of projects) {
      for (const session of await removeIdleSessions(storage, projectKey, cutoff, result, options.dryRun === true)) await referenced.read(projectKey, session);
      done += 1;
      options.onProgress?.({ phase: 'sessions', done, total: projects.length });
    }
    if (options.dryRun === true) return result;
    await referenced.readSessionsListedSince();
    // A session whose log cannot be read may name any blob: then no blob is removed.
    if (referenced.unreadable.length > 0) {
      result.blobsKeptBecause = `the logs of ${referenced.unreadable.length} session(s) could not be read (${referenced.unreadable.join(', ')})`;
    } else if (storage.collectGarbage !== undefined) {
      const collected = await storage.collectGarbage(referenced.hashes, { graceMs: options.graceMs ?? 60 * 60 * 1000 });
      result.blobsRemoved = collected.blobsRemoved;
      result.bytesFreed += collected.bytesFreed;
      if (collected.keptBecause !== undefined) result.blobsKeptBecause = collected.keptBecause;
      options.onProgress?.({ phase: 'blobs', done: 1, total: 1 });
    }
    return result;
  } finally {
    if (owned) await storage.close?.();
  }
}

/**
 * The blobs named by the sessions a clean-up keeps.
 *
 * Sessions are read project by project, and a session may move while that
 * goes on: resumed from a new directory, its log is written under the new
 * project's key, then deleted under the old one. If the new key was read
 * before the copy and the old one after the deletion, the first pass never
 * saw the session; and the blobs it names may be older than the grace
 * period, since a move reuses the loose blobs it finds rather than writing
 * them again. So once the first pass has ended, every project is listed
 * again, and each session found that was not seen, or has changed since
 * (mtime or size), is read too, before any blob is collected. At every
 * moment a moving session has a log under one key or the other (the copy is
 * written before the original goes), and that second listing starts after
 * any move that fooled the first pass was complete: it finds the session
 * where it moved. Only a second move of the same session within the few
 * moments of that listing could escape it.
 */
class ReferencedBlobs {
  readonly hashes = new Set<string>();
  /** Ids of sessions whose logs could not be read. */
  readonly unreadable: string[] = [];
  private readonly seen = new Map<string, StoredSessionInfo>();

  constructor(private readonly storage: StorageAdapter) {}

  async read(projectKey: string, session: StoredSessionInfo): Promise<void> {
    this.seen.set(`${projectKey}/${session.sessionId}`, session);
    const loaded = await new SessionLog(this.storage, { projectKey, sessionId: session.sessionId }).load().catch(() => undefined);
    if (loaded === undefined) this.unreadable.push(session.sessionId);
    for (const record of loaded?.records ?? []) for (const hash of blobsNamedBy(record)) this.hashes.add(hash);
  }

  async readSessionsListedSince(): Promise<void> {
    for (const projectKey of (await this.storage.listProjects!()).filter(isProjectKey)) {
      for (const session of await this.storage.listSessions(projectKey)) {
        const before = this.seen.get(`${projectKey}/${session.sessionId}`);
        if (before === undefined || before.mtime !== session.mtime || before.bytes !== session.bytes) await this.read(projectKey, session);
      }
    }
  }
}

/**
 * Removes the project's sessions idle since before `cutoff` and returns the
 * logs it keeps (sessions and the rest). Only `<uuid>` logs are sessions:
 * anything else in a project's folder (a user's copy of a log) is never
 * removed, and the backups it names are kept. Nor is a log that is not a
 * rewindable session log (see `whyNotRemovable`).
 *
 * A session listed as idle may be resumed (and written: a rewind and its undo
 * point) before its lock is taken here, so each one is checked again once
 * locked, and removed only if it is still exactly as listed. The idle
 * sessions are locked all together, then listed once more, so that this
 * costs one listing per project rather than one per session.
 */
async function removeIdleSessions(storage: StorageAdapter, projectKey: string, cutoff: number, result: CleanupResult, dryRun: boolean): Promise<StoredSessionInfo[]> {
  const listed = await storage.listSessions(projectKey);
  const idle = listed.filter((session) => session.mtime < cutoff && isUuid(session.sessionId));
  const kept = listed.filter((session) => !idle.includes(session));
  const leftAlone: StoredSessionInfo[] = [];
  const locks = new Map<StoredSessionInfo, StorageLock | undefined>();
  try {
    for (const session of idle) {
      const lock = await lockUnlessHeld(storage, { projectKey, sessionId: session.sessionId });
      if (lock === null) {
        result.sessionsLocked += 1;
        kept.push(session);
      } else locks.set(session, lock);
    }
    const relisted = locks.size === 0 ? new Map<string, StoredSessionInfo>() : new Map((await storage.listSessions(projectKey)).map((session) => [session.sessionId, session]));
    const noted = locks.size === 0 ? new Set<string>() : new Set(await sessionsWithPendingRewinds(storage, projectKey));
    for (const session of locks.keys()) {
      const current = relisted.get(session.sessionId);
      if (current === undefined) continue; // removed by someone else meanwhile
      if (current.mtime !== session.mtime || current.bytes !== session.bytes) {
        kept.push(current);
        continue;
      }
      const key = { projectKey, sessionId: session.sessionId };
      const reason = whyNotRemovable(await new SessionLog(storage, key).load().then((log) => ({ log }), (error: unknown) => ({ error })));
      if (reason !== undefined) {
        result.leftAlone.push({ ...key, reason });
        leftAlone.push(current);
        continue;
      }
      if (!dryRun) {
        await storage.delete(key);
        // The note of a rewind this session had in progress points at nothing now.
        if (noted.has(key.sessionId)) await clearPendingRewind(storage, key);
      }
      result.sessionsRemoved.push(key);
      result.bytesFreed += session.bytes ?? 0;
    }
  } finally {
    for (const lock of locks.values()) await lock?.release();
  }
  result.sessionsKept += kept.length;
  return [...kept, ...leftAlone];
}

/**
 * Why a log is not removed as a session: only a rewindable session log is
 * (it loads, and starts with a `session-start` record). A store pointed at
 * another tool's folder, or a damaged log, is left alone for a person to look at.
 */
function whyNotRemovable(loaded: { log: LoadedSession | null } | { error: unknown }): string | undefined {
  if ('error' in loaded) return `its log cannot be read: ${loaded.error instanceof Error ? loaded.error.message : String(loaded.error)}`;
  if (loaded.log?.records[0]?.type === 'session-start') return undefined;
  return 'it is not a rewindable session log (it does not start with a session-start record)';
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
