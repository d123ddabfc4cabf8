import { RewindableError, RewindableErrorCode } from '../errors.js';
import type { Session } from '../session/session.js';
import type { SkippedPath } from './safety.js';
import { clearPendingRewind, readPendingRewind, sessionsWithPendingRewinds } from './pending-rewind-note.js';
import { recoverInterruptedRewind } from './transaction.js';

/** What opening a session found of a rewind a crash had interrupted in the project, and what became of it. */
export interface InterruptedRewind {
  /** The session the rewind belongs to (the one opened, or another of the project). */
  sessionId: string;
  rewindId: string;
  /** The message the rewind was going back to. */
  target: string;
  /**
   * `rolled-back`: every file it had changed, and that still held what it wrote, was put back as before the
   * rewind. `in-progress`: another live process holds that session (it is rewinding now, or rolls back itself
   * when it reopens the session). `failed`: the rollback could not be done (`error`); the next open tries again.
   */
  outcome: 'rolled-back' | 'in-progress' | 'failed';
  /** Files the rollback put back. */
  filesRestored: string[];
  /** Files the rollback left alone, and why (changed since the crash, now a link ...). */
  filesLeftAlone: SkippedPath[];
  error?: { code: string; message: string };
}

/**
 * Rolls back the session's interrupted rewind, if it has one, and takes its
 * note away (see pending-rewind-note.ts). A failed rollback throws and keeps
 * the note: the next open tries again.
 */
export async function recoverSession(session: Session): Promise<InterruptedRewind | undefined> {
  const begin = session.state.interruptedRewind;
  if (begin === undefined) return undefined;
  const result = await recoverInterruptedRewind(session);
  await clearPendingRewind(session.log.storage, session.log.key);
  return { sessionId: session.sessionId, rewindId: begin.rewindId, target: begin.target, outcome: 'rolled-back', filesRestored: result?.filesChanged ?? [], filesLeftAlone: result?.skipped ?? [] };
}

/**
 * Every other session of `own`'s project with a rewind noted as in progress:
 * opened with `open` (which takes its lock, so a live holder is left to
 * itself), rolled back, closed. Never throws for another session's trouble:
 * it is reported.
 */
export async function recoverOtherSessions(own: Session, open: (sessionId: string) => Promise<Session>): Promise<InterruptedRewind[]> {
  const { storage, key } = own.log;
  const reports: InterruptedRewind[] = [];
  let noted: string[];
  try {
    noted = await sessionsWithPendingRewinds(storage, key.projectKey);
  } catch {
    // A store that cannot list right now (a mirror whose remote is down) must not keep this session from
    // opening; this session's own rewind is recovered already, and the others are found by a later open.
    return reports;
  }
  for (const sessionId of noted) {
    const otherKey = { projectKey: key.projectKey, sessionId };
    if (sessionId === key.sessionId) {
      await clearPendingRewind(storage, otherKey); // a rewind of this session ended, or was just rolled back
      continue;
    }
    const noted = await readPendingRewind(storage, otherKey);
    const failed = (outcome: 'in-progress' | 'failed', error: unknown): InterruptedRewind => ({
      sessionId,
      ...noted,
      outcome,
      filesRestored: [],
      filesLeftAlone: [],
      ...(outcome === 'failed' ? { error: errorOf(error) } : {}),
    });
    let other: Session;
    try {
      other = await open(sessionId);
    } catch (error) {
      const code = RewindableError.isInstance(error) ? error.code : undefined;
      if (code === RewindableErrorCode.SESSION_NOT_FOUND) await clearPendingRewind(storage, otherKey);
      else reports.push(failed(code === RewindableErrorCode.SESSION_LOCKED ? 'in-progress' : 'failed', error));
      continue;
    }
    try {
      const recovered = await recoverSession(other);
      if (recovered !== undefined) reports.push(recovered);
      else await clearPendingRewind(storage, otherKey); // it ended before the note could be taken away
    } catch (error) {
      reports.push(failed('failed', error));
    } finally {
      await other.close();
    }
  }
  return reports;
}

function errorOf(error: unknown): { code: string; message: string } {
  if (RewindableError.isInstance(error)) return { code: error.code, message: error.message };
  return { code: RewindableErrorCode.REWIND_FAILED, message: error instanceof Error ? error.message : String(error) };
}
