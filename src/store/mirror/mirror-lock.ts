import { RewindableError, RewindableErrorCode } from '../../errors.js';
import type { SessionKey, StorageAdapter, StorageLock } from '../storage-adapter.js';

/**
 * The remote half of a mirrored session's lock. Nothing is copied into the
 * remote copy of a session (entries, or its deletion) unless this mirror
 * holds the remote's lock on it: a session another machine holds there is
 * never written into.
 *
 * A manager opening the session takes it, but an unreachable remote does not
 * stop the session from opening (local first): the lock is then taken before
 * the first entries are copied. It is kept while the manager has the session
 * open, and after that until nothing is left to copy. A lock the remote lost
 * while held (a dropped connection) is the remote adapter's to take again
 * before its next write, or to refuse that write with `SESSION_LOCKED`.
 */
export class RemoteLock {
  private held: StorageLock | undefined;
  private taking: Promise<void> | undefined;
  private openHere = false;

  constructor(
    private readonly key: SessionKey,
    /** Undefined when the remote has no lock, or the mirror was told not to take it. */
    private readonly remote: StorageAdapter | undefined,
  ) {}

  /** Holds the remote's lock, taking it if needed. Rejects with `SESSION_LOCKED` while another process holds it there. */
  async ensure(): Promise<void> {
    const remote = this.remote;
    if (remote?.lock === undefined || this.held !== undefined) return;
    this.taking ??= remote
      .lock(this.key)
      .then((lock) => {
        this.held = lock;
      })
      .finally(() => {
        this.taking = undefined;
      });
    await this.taking;
  }

  /** A manager opens the session: `SESSION_LOCKED` from the remote refuses it; any other failure is only reported. */
  async open(onSkipped: (error: unknown) => void): Promise<void> {
    if (this.openHere) {
      throw new RewindableError(RewindableErrorCode.SESSION_LOCKED, `Session ${this.key.sessionId} is locked: another manager on this mirrored storage has it open. Close that manager first.`);
    }
    this.openHere = true;
    try {
      await this.ensure();
    } catch (error) {
      if (!(RewindableError.isInstance(error) && error.code === RewindableErrorCode.SESSION_LOCKED)) return onSkipped(error);
      this.openHere = false;
      throw error;
    }
  }

  /** The manager closed the session: the lock goes now, or once nothing is left to copy (`busy`). */
  async close(busy: boolean): Promise<void> {
    this.openHere = false;
    if (!busy) await this.releaseNow();
  }

  /** Nothing is left to copy: the lock goes unless a manager has the session open. */
  async idle(): Promise<void> {
    if (!this.openHere) await this.releaseNow();
  }

  async releaseNow(): Promise<void> {
    await this.taking?.catch(() => {});
    const held = this.held;
    this.held = undefined;
    await held?.release();
  }
}

/** The local lock, then the remote's: a session live on another machine is refused; an unreachable remote is not. */
export async function lockBoth(
  key: SessionKey,
  local: StorageAdapter,
  remoteLock: RemoteLock,
  onRemoteSkipped: (error: unknown) => void,
  copying: () => boolean,
): Promise<StorageLock> {
  const localLock = await local.lock?.(key);
  try {
    await remoteLock.open(onRemoteSkipped);
  } catch (error) {
    await localLock?.release();
    throw error;
  }
  let released = false;
  return {
    // The local lock only: the remote is never waited for before a local write (a session another machine
    // took there is refused by the mirror's append, once the copying learns of it).
    async assertHeld() {
      await localLock?.assertHeld?.();
    },
    async release() {
      if (released) return;
      released = true;
      try {
        await remoteLock.close(copying());
      } finally {
        await localLock?.release();
      }
    },
  };
}
