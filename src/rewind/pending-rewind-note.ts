import { RewindableError, RewindableErrorCode } from '../errors.js';
import { now } from '../session/clock.js';
import type { Session } from '../session/session.js';
import type { SessionKey, StorageAdapter } from '../store/storage-adapter.js';

/**
 * Rewinds in progress, noted where every session of the project looks.
 *
 * A rewind a crash interrupts is rolled back when its session is opened
 * again, but the user may never reopen that session: the next agent run in
 * the project starts a new one, and the files would stay half rewound with no
 * sign. So before a rewind changes anything, its session notes it under the
 * project's key for pending rewinds (one entry `{ type: 'rewind-pending' }`
 * per session under `<project key>.rewinding`: encoded project keys never
 * hold a dot, so it is never taken for a project), and takes the note away
 * once the rewind has ended. Opening any session of the project for writing
 * lists the notes (see recover-rewinds.ts). Only the storage contract is
 * used, so every adapter keeps the notes where it keeps sessions.
 */

const noteType = 'rewind-pending';

/** Where the rewinds in progress of a project are noted: never a project key (those hold no dot). */
export function pendingRewindsKey(projectKey: string): string {
  return `${projectKey}.rewinding`;
}

/**
 * Whether a key the store lists is a project's (an encoded project path:
 * letters, digits and dashes only), not one of the store's own, such as the
 * notes of a project's rewinds in progress.
 */
export function isProjectKey(key: string): boolean {
  return /^[A-Za-z0-9-]+$/.test(key);
}

function noteKey(key: SessionKey): SessionKey {
  return { projectKey: pendingRewindsKey(key.projectKey), sessionId: key.sessionId };
}

/**
 * Notes, durably and before any file changes, that `session` is starting a
 * rewind. A session that lost its lock writes nothing: the note's key is the
 * same for whoever holds the session, so it would add to the new holder's.
 */
export async function notePendingRewind(session: Session, rewindId: string, target: string): Promise<void> {
  await session.assertLockHeld();
  try {
    await session.log.storage.append(noteKey(session.log.key), [{ type: noteType, rewindId, target, at: now() }]);
  } catch (error) {
    if (RewindableError.isInstance(error)) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    throw new RewindableError(RewindableErrorCode.STORE_IO, `Could not note the rewind of session ${session.sessionId} before starting it: ${reason}. Nothing was changed.`, { cause: error });
  }
}

/** Takes the note away once the rewind has ended. A note left behind only costs the next opener a look. */
export async function clearPendingRewind(storage: StorageAdapter, key: SessionKey): Promise<void> {
  await storage.delete(noteKey(key)).catch(() => {});
}

/**
 * Takes the note of `session`'s own rewind away, once it has ended, while the
 * session still holds its lock. One that lost it leaves the note: it may be
 * the note of the new holder's rewind, which a crash would leave unrecovered.
 */
export async function clearOwnPendingRewind(session: Session): Promise<void> {
  try {
    await session.assertLockHeld();
  } catch {
    return;
  }
  await clearPendingRewind(session.log.storage, session.log.key);
}

/** Sessions of the project with a rewind noted as in progress. */
export async function sessionsWithPendingRewinds(storage: StorageAdapter, projectKey: string): Promise<string[]> {
  return (await storage.listSessions(pendingRewindsKey(projectKey))).map((note) => note.sessionId);
}

/** The rewind a note names; unknown when it cannot be read (the note is only a pointer to its session). */
export async function readPendingRewind(storage: StorageAdapter, key: SessionKey): Promise<{ rewindId: string; target: string }> {
  const entries = await storage.load(noteKey(key)).catch(() => null);
  const entry = entries?.findLast((candidate) => candidate.type === noteType);
  return { rewindId: typeof entry?.rewindId === 'string' ? entry.rewindId : 'unknown', target: typeof entry?.target === 'string' ? entry.target : 'unknown' };
}
