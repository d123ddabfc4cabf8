import { RewindableError, RewindableErrorCode } from '../../errors.js';
import type { SerialQueue } from '../../util/serial-queue.js';
import { sha256 } from '../../hash.js';
import type { BlobWrite, SessionKey, StorageAdapter, StoreEntry } from '../storage-adapter.js';
import { blobsNamedByEntries, compareLogs } from './log-comparison.js';
import { divergedError, remoteHeldError } from './mirror-errors.js';
import type { RemoteLock } from './mirror-lock.js';
import type { ReplicatorStatus } from './replicator-status.js';
import { retryDelay, type RetrySettings } from './retry-delay.js';

export interface ReplicatorSettings {
  retry: RetrySettings;
  maxBatchEntries: number;
  maxBatchBytes: number;
}

export type ReplicatorEvent =
  | { type: 'mirror-push'; key: SessionKey; entries: number; blobs: number; bytes: number }
  | { type: 'mirror-retry'; key: SessionKey; attempt: number; delayMs: number; error: unknown }
  | { type: 'mirror-diverge'; key: SessionKey; error: Error }
  /** Another process holds the session on the remote: nothing more of this machine's copy goes there. */
  | { type: 'mirror-locked'; key: SessionKey; error: Error }
  | { type: 'blob-skip'; key: SessionKey; hash: string; reason: string };

interface Versioned {
  entry: StoreEntry;
  /** The write that brought it; a flush waits for every write up to its target. */
  version: number;
}

/**
 * Copies one session to the remote, in the background, in order: the
 * entries after the remote's last one, each batch preceded by the blobs it
 * may name (read back from the local store, so an outage holds no blob bytes
 * in memory).
 *
 * After any failure the replicator forgets where the remote stands; before it
 * sends entries again it reads the remote log and compares it with the local
 * one. An append that was applied but never acknowledged is then seen as
 * applied, so nothing is sent twice, and nothing is skipped.
 *
 * Entries are sent only under the remote's lock on the session (`RemoteLock`),
 * taken first if the mirror does not hold it. When another process holds it
 * there, the replicator stops for good: that copy is someone else's now.
 */
export class SessionReplicator {
  /** Entries the remote holds, or undefined when unknown (after a failure, or while the local copy is behind). */
  private remoteLength: number | undefined;
  /** The remote may lack entries this replicator does not know of (it could not be read): compare before idling. */
  private needsComparison = false;
  private buffer: Versioned[] = [];
  private readonly pendingBlobs = new Map<string, number>();
  private version = 0;
  private confirmed = 0;
  private failure: Error | undefined;
  /** Set (and `failure` with it) when another process holds the session on the remote. */
  private lockedOut: RewindableError | undefined;
  private attempts = 0;
  private lastError: unknown;
  private running: Promise<void> | undefined;
  /** Bumped whenever the remote or the queue changes, so a comparison made elsewhere can tell it is stale. */
  private changes = 0;
  private stopped = false;
  private wake: (() => void) | undefined;
  private readonly waiters: Array<{ target: number; resolve: () => void; reject: (error: unknown) => void }> = [];

  constructor(
    private readonly key: SessionKey,
    private readonly local: StorageAdapter,
    private readonly remote: StorageAdapter,
    /** Serializes the session's local writes with the replicator's reads of the local log. */
    private readonly localQueue: SerialQueue,
    private readonly remoteLock: RemoteLock,
    private readonly settings: ReplicatorSettings,
    private readonly emit: (event: ReplicatorEvent) => void,
  ) {}

  /** Records a write the local store has just taken. Call it inside the local queue. */
  accept(entries: readonly StoreEntry[], blobs: readonly BlobWrite[]): void {
    if (this.stopped) return;
    this.version += 1;
    // Copies: the caller may change its objects once the append returned, and the remote must not see that.
    for (const entry of entries) this.buffer.push({ entry: structuredClone(entry), version: this.version });
    for (const blob of blobs) if (!this.pendingBlobs.has(blob.hash)) this.pendingBlobs.set(blob.hash, this.version);
    this.start();
  }

  /** Blobs the local store holds under the key, which the remote must hold too; those it has are not sent again. */
  hold(hashes: readonly string[]): void {
    if (this.stopped || hashes.length === 0) return;
    this.version += 1;
    for (const hash of hashes) if (!this.pendingBlobs.has(hash)) this.pendingBlobs.set(hash, this.version);
    this.start();
  }

  /** Why the session's entries can no longer go to the remote: another process holds the session there. */
  get heldElsewhere(): RewindableError | undefined {
    return this.lockedOut;
  }

  /** Tells a comparison made elsewhere whether the remote may have changed since it began. */
  get generation(): number {
    return this.changes;
  }

  /**
   * The logs were compared elsewhere (on load, inside the local queue): the
   * remote held the first `remoteLength` of `localEntries` when `generation`
   * was current. Ignored if a push ran since or is running: the replicator's
   * own view is then the newer one.
   */
  compared(localEntries: readonly StoreEntry[], remoteLength: number, generation: number): void {
    if (this.running === undefined && generation === this.changes) this.rebuild(localEntries, remoteLength);
    this.start();
  }

  /** The remote could not be read to compare the logs: compare as soon as it can be. */
  forget(): void {
    this.needsComparison = true;
    this.start();
  }

  /** Resolves once every write accepted so far is on the remote; rejects if the session diverged. */
  caughtUp(): Promise<void> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    const target = this.version;
    if (this.stopped || this.isConfirmed(target)) return Promise.resolve();
    this.wake?.(); // a flush asks for an attempt now rather than after the backoff
    return new Promise((resolve, reject) => this.waiters.push({ target, resolve, reject }));
  }

  /** Stops copying (the session was deleted, or the mirror closed) and waits for an attempt in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.running;
    for (const waiter of this.waiters.splice(0)) waiter.resolve();
  }

  status(): ReplicatorStatus {
    const pending = this.buffer.length > 0 || this.pendingBlobs.size > 0 || this.needsComparison;
    return {
      key: this.key,
      state: this.lockedOut !== undefined ? 'locked' : this.failure !== undefined ? 'diverged' : this.attempts > 0 ? 'retrying' : pending ? 'pushing' : 'idle',
      pendingEntries: this.buffer.length,
      pendingBlobs: this.pendingBlobs.size,
      attempts: this.attempts,
      ...(this.lastError !== undefined ? { lastError: this.lastError } : {}),
    };
  }

  private isConfirmed(target: number): boolean {
    return this.confirmed >= target && !this.needsComparison;
  }

  private hasWork(): boolean {
    if (this.stopped || this.failure !== undefined) return false;
    return this.needsComparison || this.buffer.length > 0 || this.pendingBlobs.size > 0;
  }

  private start(): void {
    if (this.running !== undefined || !this.hasWork()) return;
    this.running = this.loop().finally(() => {
      this.running = undefined;
      this.start(); // work accepted while the loop was finishing
    });
  }

  private async loop(): Promise<void> {
    while (this.hasWork()) {
      try {
        await this.pushOnce();
        this.attempts = 0;
        this.lastError = undefined;
      } catch (error) {
        if (isLocked(error)) this.failure = this.lockedOut = remoteHeldError(this.key, error);
        if (this.failure !== undefined) {
          this.emit({ type: this.lockedOut !== undefined ? 'mirror-locked' : 'mirror-diverge', key: this.key, error: this.failure });
          for (const waiter of this.waiters.splice(0)) waiter.reject(this.failure);
          await this.remoteLock.idle();
          return;
        }
        this.remoteLength = undefined;
        this.attempts += 1;
        this.lastError = error;
        const delayMs = retryDelay(this.settings.retry, this.attempts);
        this.emit({ type: 'mirror-retry', key: this.key, attempt: this.attempts, delayMs, error });
        await this.sleep(delayMs);
      }
    }
    await this.remoteLock.idle();
  }

  private sleep(milliseconds: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, milliseconds);
      // A retry pending during an outage must not keep the process alive; flush() is how callers wait.
      timer.unref();
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    }).then(() => {
      this.wake = undefined;
    });
  }

  /** One round: the blobs the remote lacks, then up to `maxBatchEntries` entries. */
  private async pushOnce(): Promise<void> {
    if (this.needsComparison || (this.remoteLength === undefined && this.buffer.length > 0)) await this.compareWithRemote();
    // Entries need the remote's position; with the local copy behind the remote there is none (and nothing of ours to send).
    const remoteLength = this.remoteLength;
    const entries = remoteLength === undefined ? [] : this.buffer.slice(0, this.settings.maxBatchEntries);
    const blobVersions = [...this.pendingBlobs];
    let group: BlobWrite[] = [];
    let groupBytes = 0;
    let blobsSent = 0;
    let bytesSent = 0;
    const present = blobVersions.length === 0 ? new Set<string>() : await this.remote.hasBlobs(this.key, blobVersions.map(([hash]) => hash));
    for (const [hash] of blobVersions) {
      if (present.has(hash)) continue;
      const blob = await this.readLocalBlob(hash);
      if (blob === undefined) continue;
      if (group.length > 0 && groupBytes + blob.bytes.length > this.settings.maxBatchBytes) {
        await this.remote.putBlobs(this.key, group);
        [group, groupBytes] = [[], 0];
      }
      group.push(blob);
      groupBytes += blob.bytes.length;
      blobsSent += 1;
      bytesSent += blob.bytes.length;
    }
    // The last group of blobs travels with the entries: one round trip, and never an entry without its blobs.
    if (entries.length > 0) await this.remoteLock.ensure();
    if (entries.length > 0) await this.remote.append(this.key, entries.map((item) => item.entry), group);
    else if (group.length > 0) await this.remote.putBlobs(this.key, group);

    for (const [hash, version] of blobVersions) if (this.pendingBlobs.get(hash) === version) this.pendingBlobs.delete(hash);
    this.buffer.splice(0, entries.length);
    if (remoteLength !== undefined) this.remoteLength = remoteLength + entries.length;
    this.changes += 1;
    if (entries.length > 0 || blobsSent > 0) this.emit({ type: 'mirror-push', key: this.key, entries: entries.length, blobs: blobsSent, bytes: bytesSent });
    this.advanceConfirmed();
  }

  /** Reads the remote log, checks the two logs agree, and queues what the remote lacks. */
  private async compareWithRemote(): Promise<void> {
    const remoteEntries = (await this.remote.load(this.key)) ?? [];
    await this.localQueue.run(async () => {
      const localEntries = (await this.local.load(this.key)) ?? [];
      const comparison = compareLogs(localEntries, remoteEntries);
      if (comparison.kind === 'diverged') {
        this.failure = divergedError(this.key, comparison.at);
        throw this.failure;
      }
      this.needsComparison = false;
      if (comparison.kind === 'remote-ahead') {
        // The session went on elsewhere: everything this machine has is on the remote already. Local
        // writes bring the local copy up to date first; one that could not is caught as a divergence.
        this.buffer = [];
        this.remoteLength = undefined;
        this.changes += 1;
        this.advanceConfirmed();
        return;
      }
      this.rebuild(localEntries, remoteEntries.length);
    });
  }

  private rebuild(localEntries: readonly StoreEntry[], remoteLength: number): void {
    const missing = localEntries.slice(remoteLength);
    // Tagged with the newest version: every write accepted so far is in the local log just read.
    this.buffer = missing.map((entry) => ({ entry, version: this.version }));
    for (const hash of blobsNamedByEntries(missing)) if (!this.pendingBlobs.has(hash)) this.pendingBlobs.set(hash, this.version);
    this.remoteLength = remoteLength;
    this.changes += 1;
    this.advanceConfirmed();
  }

  private async readLocalBlob(hash: string): Promise<BlobWrite | undefined> {
    const bytes = await this.local.getBlob(this.key, hash);
    // Copy only what the local store can vouch for; the session reports the same blob as unreadable there.
    const reason = bytes === null ? 'missing from the local store' : sha256(bytes) !== hash ? 'does not match its hash in the local store' : undefined;
    if (reason === undefined) return { hash, bytes: bytes! };
    this.emit({ type: 'blob-skip', key: this.key, hash, reason });
    return undefined;
  }

  /** Every write older than the oldest still pending is on the remote. */
  private advanceConfirmed(): void {
    let oldestPending = Infinity;
    if (this.buffer.length > 0) oldestPending = this.buffer[0]!.version;
    for (const version of this.pendingBlobs.values()) oldestPending = Math.min(oldestPending, version);
    this.confirmed = oldestPending === Infinity ? this.version : oldestPending - 1;
    for (let index = this.waiters.length - 1; index >= 0; index -= 1) {
      const waiter = this.waiters[index]!;
      if (this.isConfirmed(waiter.target)) {
        this.waiters.splice(index, 1);
        waiter.resolve();
      }
    }
  }
}

function isLocked(error: unknown): boolean {
  return RewindableError.isInstance(error) && error.code === RewindableErrorCode.SESSION_LOCKED;
}
