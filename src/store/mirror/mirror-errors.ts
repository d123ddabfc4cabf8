import { RewindableError, RewindableErrorCode } from '../../errors.js';
import type { SessionKey } from '../storage-adapter.js';
import type { ReplicatorStatus } from './replicator-status.js';

const flushMarker = Symbol.for('rewindable.mirror-flush-error');

/**
 * `flush()` gave up: the remote did not catch up within its bound. Nothing is
 * lost: every entry and blob is in the local store, and the mirror keeps
 * retrying in the background. `details` tells what is still pending.
 */
export class MirrorFlushError extends RewindableError {
  readonly [flushMarker] = true;

  constructor(message: string, details: Record<string, unknown>, cause?: unknown) {
    super(RewindableErrorCode.MIRROR_FLUSH_TIMEOUT, message, { details, ...(cause !== undefined ? { cause } : {}) });
    this.name = 'MirrorFlushError';
  }

  /** True for a `MirrorFlushError` from any copy of rewindable. */
  static override isInstance(error: unknown): error is MirrorFlushError {
    return RewindableError.isInstance(error) && flushMarker in error;
  }
}

/**
 * The local and remote copies of a session differ: it was written in two
 * places at once (two machines, or one machine while it could not reach the
 * remote and another could). The mirror stops copying that session; the local
 * copy is untouched.
 */
export function divergedError(key: SessionKey, at: number): RewindableError {
  return new RewindableError(
    RewindableErrorCode.SESSION_DIVERGED,
    `Session ${key.sessionId} differs between the local store and the remote from entry ${at + 1} on: it was written in two places. ` +
      'The mirror stopped copying it and changed neither copy; keep the one you want and delete the other (for example with the remote adapter\'s delete()).',
    { details: { sessionId: key.sessionId, projectKey: key.projectKey, divergedAt: at + 1, reason: 'diverged' } },
  );
}

/**
 * Another process holds the session on the remote (it resumed it there while
 * this machine could not reach the remote, or after this machine's remote lock
 * was lost). Its copy is that process's now: this machine's entries since stay
 * in the local store only, and the session takes no more writes here.
 */
export function remoteHeldError(key: SessionKey, cause: unknown): RewindableError {
  return new RewindableError(
    RewindableErrorCode.SESSION_LOCKED,
    `Session ${key.sessionId} is held on the remote store by another process (on this or another machine), so nothing more of it is copied there ` +
      'and it takes no more writes here; what was written here since is kept in the local store. Close the session, and reopen it once the other process is done.',
    { cause, details: { sessionId: key.sessionId, projectKey: key.projectKey, reason: 'remote-held' } },
  );
}

export function remoteUnreadable(key: SessionKey, cause: unknown): RewindableError {
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new RewindableError(
    RewindableErrorCode.STORE_IO,
    `Session ${key.sessionId} has no copy on this machine, and the remote store could not be read: ${reason}. ` +
      'Retry once the remote is reachable (a session that exists locally keeps working without it).',
    { cause },
  );
}

export function flushTimeoutError(status: { pendingEntries: number; pendingBlobs: number; sessions: ReplicatorStatus[] }, timeoutMs: number): MirrorFlushError {
  const behind = status.sessions.filter((session) => session.state !== 'idle');
  const lastError = behind.find((session) => session.lastError !== undefined)?.lastError;
  const reason = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
  return new MirrorFlushError(
    `The remote store did not catch up within ${timeoutMs} ms: ${status.pendingEntries} entries and ${status.pendingBlobs} blobs of ` +
      `${behind.length} session(s) are not there yet${reason}. They are safe in the local store and the mirror keeps retrying; call flush() again later.`,
    { pendingEntries: status.pendingEntries, pendingBlobs: status.pendingBlobs, sessions: behind.map((session) => session.key.sessionId), reason: 'flush-timeout' },
    lastError,
  );
}
