import { RewindableError, RewindableErrorCode } from '../../errors.js';
import type { SessionKey } from '../storage-adapter.js';

const flushMarker = Symbol.for('rewindable.mirror-flush-error');

/**
 * `flush()` gave up: the remote did not catch up within its bound. Nothing is
 * lost: every entry and blob is in the local store, and the mirror keeps
 * retrying in the background. `details` tells what is still pending.
 */
export class MirrorFlushError extends RewindableError {
  readonly [flushMarker] = true;

  constructor(message: string, details: Record<string, unknown>, cause?: unknown) {
    super(RewindableErrorCode.STORE_IO, message, { details, ...(cause !== undefined ? { cause } : {}) });
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
    RewindableErrorCode.STORE_IO,
    `Session ${key.sessionId} differs between the local store and the remote from entry ${at + 1} on: it was written in two places. ` +
      'The mirror stopped copying it and changed neither copy; keep the one you want and delete the other (for example with the remote adapter\'s delete()).',
    { details: { sessionId: key.sessionId, projectKey: key.projectKey, divergedAt: at + 1, reason: 'diverged' } },
  );
}

/** The remote holds entries the local copy lacks, but the local copy was written to meanwhile. */
export function remoteAheadError(key: SessionKey): RewindableError {
  return new RewindableError(
    RewindableErrorCode.STORE_IO,
    `Session ${key.sessionId} went on elsewhere: the remote holds entries this machine never saw, and this machine wrote its own since. ` +
      'The mirror stopped copying it and changed neither copy; keep the one you want and delete the other.',
    { details: { sessionId: key.sessionId, projectKey: key.projectKey, reason: 'diverged' } },
  );
}
