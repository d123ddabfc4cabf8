import fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { RewindableError, RewindableErrorCode, storeIoError } from '../../errors.js';
import type { StorageLock } from '../storage-adapter.js';
import { readLock, type FoundLock } from './lock-file.js';

type LockCheck = { state: 'ours' } | { state: 'not-ours' } | { state: 'unreadable'; failure: unknown };

/** How often a lock that looks replaced is read again before it counts as lost, and how long apart. */
const confirmAttempts = 5;
const confirmDelayMs = 20;

/**
 * A session lock this process holds. It renews its lease by touching the lock
 * file every quarter lease, on a timer that never keeps the process alive, so
 * a process on another host can tell a live holder from one that is gone.
 *
 * A holder is never silently replaced: the lock can be broken by hand
 * (`rewindable unlock --force`) or reclaimed by another host once the lease
 * ran out (a holder stalled that long). The session that holds it calls
 * `assertHeld()` before each of its writes, which compares the lock file's
 * identity with the one this holder last saw (one `lstat`); when it differs,
 * the file is read, and a lock that no longer carries this holder's token
 * fails the write with `SESSION_LOCKED`, as does every write after it. The
 * check belongs to this lock, not to the session's key: a session opened
 * again in the same process holds a lock of its own.
 */
export class HeldSessionLock implements StorageLock {
  private signature: string | undefined;
  private lost = false;
  private released = false;
  private readonly renewal: NodeJS.Timeout;

  constructor(
    private readonly lockPath: string,
    private readonly token: string,
    private readonly sessionLabel: string,
    leaseMs: number,
  ) {
    this.signature = signatureOf(lockPath);
    this.renewal = setInterval(() => void this.renew(), Math.max(1, Math.floor(leaseMs / 4)));
    this.renewal.unref();
  }

  /**
   * Rejects with `SESSION_LOCKED` (and keeps rejecting) once the lock is no
   * longer this holder's, and with `STORE_IO` while the lock cannot be read.
   */
  async assertHeld(): Promise<void> {
    if (!this.lost && signatureOf(this.lockPath) === this.signature) return;
    const check = this.lost ? ({ state: 'not-ours' } as const) : await this.confirm();
    if (check.state === 'ours') return;
    if (check.state === 'unreadable') throw storeIoError(`check the lock of session ${this.sessionLabel} (${this.lockPath})`, check.failure);
    this.markLost();
    throw new RewindableError(
      RewindableErrorCode.SESSION_LOCKED,
      `Session ${this.sessionLabel} is no longer locked by this process: its lock (${this.lockPath}) was broken by hand ` +
        '(rewindable unlock --force) or taken over after this process failed to renew its lease. Nothing was written. ' +
        'Close the session here, and reopen it once no other process writes to it.',
      { details: { lockPath: this.lockPath, reason: 'lock-lost' } },
    );
  }

  async release(): Promise<void> {
    clearInterval(this.renewal);
    this.released = true;
    let found: FoundLock | undefined;
    try {
      found = readLock(this.lockPath);
    } catch {
      return; // Unreadable now: not provably ours, so it is left for the next opener to judge.
    }
    if (found?.owner?.token === this.token) fs.rmSync(this.lockPath, { force: true });
  }

  /** Touches the lock file, through the descriptor its token was read from, so only our own lock is renewed. */
  private async renew(): Promise<void> {
    if (this.lost || this.released) return;
    let renewed: string | undefined;
    try {
      readLock(this.lockPath, (fd, found) => {
        if (found.owner?.token !== this.token) return;
        const now = new Date();
        fs.futimesSync(fd, now, now);
        renewed = identity(fs.fstatSync(fd, { bigint: true }));
      });
    } catch {
      return; // An I/O error is not a verdict: the next renewal tries again.
    }
    if (renewed !== undefined) this.signature = renewed;
    else if ((await this.confirm()).state === 'not-ours') this.markLost();
  }

  /**
   * Whether the lock still carries our token. A concurrent opener that judged
   * an older lock abandoned moves ours aside for a moment before it puts it
   * back, so a lock found missing or foreign is read a few times first. Only
   * a lock read and found not ours is a verdict; one that cannot be read is not.
   */
  private async confirm(): Promise<LockCheck> {
    let check: LockCheck = { state: 'not-ours' };
    for (let attempt = 0; attempt < confirmAttempts; attempt += 1) {
      if (attempt > 0) await sleep(confirmDelayMs);
      if (this.released) return check;
      try {
        if (readLock(this.lockPath)?.owner?.token === this.token) {
          this.signature = signatureOf(this.lockPath);
          return { state: 'ours' };
        }
        check = { state: 'not-ours' };
      } catch (error) {
        check = { state: 'unreadable', failure: error };
      }
    }
    return check;
  }

  private markLost(): void {
    this.lost = true;
    clearInterval(this.renewal);
  }
}

/** Identity of the file at `lockPath` now: any replacement, rename, link or write changes it. */
function signatureOf(lockPath: string): string | undefined {
  try {
    return identity(fs.lstatSync(lockPath, { bigint: true }));
  } catch {
    return undefined;
  }
}

function identity(stat: fs.BigIntStats): string {
  return `${stat.dev}:${stat.ino}:${stat.ctimeNs}:${stat.size}`;
}
