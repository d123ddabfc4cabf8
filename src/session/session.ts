import type fs from 'node:fs';
import { RewindableError, RewindableErrorCode, storeIoError } from '../errors.js';
import { sweepTemporaryFiles } from '../fs/atomic-write.js';
import { DirectoryCache } from '../fs/directory-cache.js';
import { isUnchangedSince } from '../fs/stat-signature.js';
import { encodeProjectKey, toStoredPath } from '../paths.js';
import type { CheckpointRecord, LogRecord } from '../schemas.js';
import { BlobBatch } from '../store/blob-batch.js';
import { blobsNamedBy, SessionLog, type BlobRead } from '../store/session-log.js';
import type { BlobWrite, StorageAdapter, StorageLock } from '../store/storage-adapter.js';
import { now } from './clock.js';
import { thisHost } from './host.js';
import type { ObservedPath } from '../fs/inspect-path.js';
import { observePath } from './observe-path.js';
import { relocateSession } from './relocate-session.js';
import { sameState, SessionState, type SessionConfinement, type TrackedPath } from './session-state.js';

export interface SessionOpenOptions {
  storage: StorageAdapter;
  root: string;
  sessionId: string;
  /** `read`: an existing session, without its lock; nothing may be written. */
  mode: 'create' | 'resume' | 'read';
  /** `resume` only: look for the session under other project keys when this one has none (a moved project). @default true */
  followMoves?: boolean;
  durable: boolean;
  maxFileBytes: number;
  /** Where the paths its records name may lead besides the root (see `SessionState.refusedPaths`); by default nowhere. */
  confinement?: SessionConfinement;
  /** For a new session forked from another: written into its header. */
  forkedFrom?: { sessionId: string; messageId: string };
}

/**
 * One open session: its log, its in-memory state, and the writer's lock.
 * Every record goes through `append`, which stores it (with the backups it
 * names) before the in-memory state changes, so memory never runs ahead of
 * the disk.
 */
export class Session {
  readonly state: SessionState;
  readonly log: SessionLog;
  readonly durable: boolean;
  readonly maxFileBytes: number;
  /** Backups this session's records name (so the same content is never stored twice). */
  private readonly storedBlobs = new Set<string>();
  private headerWritten = false;
  private readonly forkedFrom: SessionOpenOptions['forkedFrom'];
  /** Let go by `unlock()` until `relock()`: no write may happen meanwhile. */
  private unlocked = false;

  private constructor(
    options: SessionOpenOptions,
    private lock: StorageLock | undefined,
  ) {
    this.state = new SessionState(options.root, options.confinement);
    this.log = new SessionLog(options.storage, { projectKey: encodeProjectKey(options.root), sessionId: options.sessionId });
    this.durable = options.durable;
    this.maxFileBytes = options.maxFileBytes;
    this.forkedFrom = options.forkedFrom;
  }

  get root(): string {
    return this.state.root;
  }

  get sessionId(): string {
    return this.log.key.sessionId;
  }

  static async open(options: SessionOpenOptions): Promise<Session> {
    const key = { projectKey: encodeProjectKey(options.root), sessionId: options.sessionId };
    const lock = options.mode === 'read' ? undefined : await options.storage.lock?.(key);
    const session = new Session(options, lock);
    try {
      let loaded = await session.log.load();
      if (options.mode === 'resume' && options.followMoves !== false && loaded === null && (await relocateSession(options.storage, options.sessionId, options.root, () => session.assertLockHeld()))) {
        loaded = await session.log.load();
      }
      if (options.mode !== 'create' && loaded === null) {
        throw new RewindableError(
          RewindableErrorCode.SESSION_NOT_FOUND,
          `Session ${options.sessionId} does not exist for the project ${options.root}. Check the id, or start a new session with sessionId.`,
        );
      }
      if (options.mode === 'create' && loaded !== null) throw sessionExists(options, loaded.records, key.projectKey);
      if (loaded !== null) {
        for (const record of loaded.records) session.replay(record);
        session.headerWritten = true;
        const recordedRoot = session.state.projectPath;
        if (recordedRoot !== undefined && recordedRoot !== options.root) {
          throw new RewindableError(
            RewindableErrorCode.PROJECT_MISMATCH,
            `Session ${options.sessionId} belongs to the project ${recordedRoot}, not ${options.root}. Open it with cwd: ${JSON.stringify(recordedRoot)}.`,
          );
        }
        if (options.mode === 'read') return session;
        if (loaded.droppedUnacknowledged) {
          await session.append([{ type: 'discard', count: 1, reason: 'its backup did not survive a crash; it was never acknowledged', at: now() }]);
        }
        for (const directory of session.state.directoriesOfPaths) sweepTemporaryFiles(directory);
      }
      return session;
    } catch (error) {
      await lock?.release();
      throw error;
    }
  }

  /**
   * Stores records, and the backups they name, then applies them to the
   * in-memory state. The first record of a new session comes after its header.
   */
  async append(records: LogRecord[], blobs: BlobWrite[] = [], options: { flush?: boolean } = {}): Promise<void> {
    const toWrite = this.headerWritten
      ? records
      : [
          {
            type: 'session-start' as const,
            formatVersion: 1 as const,
            sessionId: this.sessionId,
            cwd: this.root,
            createdAt: now(),
            host: thisHost(), // whose the session is, when a store is shared by machines (relocate-session.ts)
            ...(this.forkedFrom !== undefined ? { forkedFrom: this.forkedFrom } : {}),
          },
          ...records,
        ];
    await this.assertLockHeld();
    await this.log.append(toWrite, blobs, options);
    this.headerWritten = true;
    for (const record of toWrite) this.replay(record);
  }

  readBlob(hash: string): Promise<BlobRead> {
    return this.log.readBlob(hash);
  }

  isStored(hash: string): boolean {
    return this.storedBlobs.has(hash);
  }

  /** A batch whose early parts are stored straight away (large checkpoints and rewinds). */
  newBlobBatch(limitBytes?: number): BlobBatch {
    return new BlobBatch(async (blobs) => {
      await this.assertLockHeld();
      try {
        await this.log.storage.putBlobs(this.log.key, blobs);
      } catch (error) {
        throw RewindableError.isInstance(error) ? error : storeIoError(`store backups of session ${this.sessionId}`, error);
      }
      for (const blob of blobs) this.storedBlobs.add(blob.hash);
    }, limitBytes);
  }

  /**
   * True when noting `observation` would change nothing: it is the path's
   * last-seen observation itself (a rewind's plan settled the path), and that
   * is its latest version. A rewind over a large scope skips its 20,000 such
   * paths without an await, or a new object, each.
   */
  holdsNothingNew(tracked: TrackedPath, observation: ObservedPath): boolean {
    const seen = tracked.lastSeen;
    return seen !== undefined && observation.observed === seen.observed && observation.state === seen.state && sameState(seen.state, this.state.latestVersion(tracked).state);
  }

  /**
   * Adds `observation` to a checkpoint being built: returns the record entry
   * when the path's state differs from its latest version (queuing its bytes
   * for storage if new), or undefined when it is unchanged.
   */
  async noteObservation(tracked: TrackedPath, observation: ObservedPath, batch: BlobBatch): Promise<CheckpointRecord['files'][number] | undefined> {
    if (this.holdsNothingNew(tracked, observation)) return undefined;
    const latest = this.state.latestVersion(tracked).state;
    // A link or a special file is recorded as what it is and nothing more (never read): found again, it has nothing new to record.
    if (observation.state.kind === 'symlink' && latest.kind === 'symlink') return undefined;
    if (observation.state.kind === 'not-regular' && latest.kind === 'not-regular' && observation.state.fileType === latest.fileType) return undefined;
    if (sameState(observation.state, latest)) {
      // Read again and found unchanged: remember the newer signature so the next check can skip the read.
      if (observation.state.kind === 'file' && observation.observed !== undefined) {
        tracked.lastSeen = { state: observation.state, observed: observation.observed };
      }
      return undefined;
    }
    await this.queueBackup(observation, batch);
    return { path: tracked.storedPath, state: observation.state, ...(observation.observed ? { observed: observation.observed } : {}) };
  }

  /**
   * The records of a checkpoint taken now: every tracked file whose state
   * changed since its latest version (unchanged files reuse their backup).
   * Empty when `id` is the latest checkpoint and nothing changed (a refresh
   * with nothing to refresh).
   */
  async prepareCheckpoint(
    id: string,
    scan?: {
      startedAtNs: bigint;
      stats: ReadonlyMap<string, fs.BigIntStats>;
      /** When given, the only tracked paths that may have changed since the previous checkpoint (a file watcher's journal, or a scan that vouched for the rest, says so). */
      examine?: Iterable<string>;
      rules: string;
      leftOut: readonly string[];
    },
  ): Promise<{ records: LogRecord[]; blobs: BlobWrite[] }> {
    const existing = this.state.checkpointsById.get(id);
    if (existing !== undefined && existing !== this.state.latestCheckpoint) {
      throw new RewindableError(
        RewindableErrorCode.CHECKPOINT_ID_REUSED,
        `Message ${id} already has a checkpoint, and it is not the latest one. Each user message gets its own checkpoint; pass a new message id.`,
      );
    }
    const batch = this.newBlobBatch();
    const files: CheckpointRecord['files'] = [];
    const directories = new DirectoryCache();
    try {
      for (const tracked of scan?.examine === undefined ? this.state.paths.values() : trackedAmong(this.state, scan.examine)) {
        // A scan just lstat'ed the scope: a file whose signature still matches need not be looked at again.
        const scanned = scan?.stats.get(tracked.path);
        if (scanned !== undefined && tracked.lastSeen !== undefined && isUnchangedSince(tracked.lastSeen.observed, scanned) && sameState(tracked.lastSeen.state, this.state.latestVersion(tracked).state)) continue;
        const observation = observePath(tracked.path, tracked.lastSeen, { maxBytes: this.maxFileBytes, read: 'if-changed', directories });
        const entry = await this.noteObservation(tracked, observation, batch);
        if (entry !== undefined) files.push(entry);
      }
    } finally {
      directories.close();
    }
    if (existing !== undefined && files.length === 0 && scan === undefined) return { records: [], blobs: [] };
    const record: CheckpointRecord = {
      type: 'checkpoint',
      id,
      createdAt: now(),
      reason: 'message',
      ...(existing !== undefined ? { refresh: true } : {}),
      ...(scan !== undefined ? { scanStartedAtNs: scan.startedAtNs.toString(), scanRules: scan.rules, ...(scan.leftOut.length > 0 ? { scanLeftOut: [...scan.leftOut] } : {}) } : {}),
      files,
    };
    return { records: [record], blobs: batch.take() };
  }

  /** Queues the observed bytes for storage unless the store has them. */
  async queueBackup(observation: ObservedPath, batch: BlobBatch): Promise<void> {
    if (observation.state.kind === 'file' && batch.has(observation.state.sha256)) return;
    const blob = this.backupOf(observation);
    if (blob !== undefined) await batch.add(blob);
  }

  /** The blob that backs `observation` up, or undefined when there are no bytes to keep or the store has them. */
  backupOf(observation: ObservedPath): BlobWrite | undefined {
    const state = observation.state;
    if (state.kind !== 'file' || this.storedBlobs.has(state.sha256)) return undefined;
    if (observation.content === undefined) throw new Error(`internal: no bytes read for ${state.sha256}`);
    return { hash: state.sha256, bytes: observation.content };
  }

  storedPath(absolute: string): string {
    return toStoredPath(absolute, this.root);
  }

  /**
   * Rejects with `SESSION_LOCKED`, before anything is written, once the lock
   * this session was opened with is no longer its own. Its own lock, not the
   * key's: the same process may have opened the session again since, and that
   * newer lock must not let this stale session write.
   */
  async assertLockHeld(): Promise<void> {
    if (this.unlocked) {
      throw new RewindableError(RewindableErrorCode.SESSION_LOCKED, `Session ${this.sessionId} was unlocked by this process and not locked again: nothing was written.`);
    }
    await this.lock?.assertHeld?.();
  }

  /**
   * Lets go of the writer's lock while keeping the session in memory, so
   * other processes can open it (a resident hook server between events).
   * Nothing can be written until `relock()`.
   */
  async unlock(): Promise<void> {
    if (this.lock === undefined || this.unlocked) return;
    const lock = this.lock;
    this.unlocked = true;
    this.lock = undefined;
    await lock.release();
  }

  /**
   * Takes the writer's lock again after `unlock()` (`SESSION_LOCKED` while
   * another process holds it). The in-memory state is what it was at
   * `unlock()`: a caller that cannot tell nobody else wrote the session
   * meanwhile must open it again instead.
   */
  async relock(): Promise<void> {
    if (!this.unlocked) return;
    this.lock = await this.log.storage.lock?.(this.log.key);
    this.unlocked = false;
  }

  /** Releases the writer's lock. */
  async close(): Promise<void> {
    await this.lock?.release();
  }

  private replay(record: LogRecord): void {
    this.state.apply(record);
    for (const hash of blobsNamedBy(record)) this.storedBlobs.add(hash);
  }
}

export { now };

function* trackedAmong(state: SessionState, paths: Iterable<string>): Iterable<TrackedPath> {
  for (const path of paths) {
    const tracked = state.paths.get(path);
    if (tracked !== undefined) yield tracked;
  }
}

/**
 * SESSION_EXISTS for a new session whose id the store already has under the
 * project's key: of this project, or of another whose path encodes to the
 * same key (`/x/my-app` and `/x/my.app`), which the message names.
 */
function sessionExists(options: SessionOpenOptions, records: readonly LogRecord[], projectKey: string): RewindableError {
  const recorded = new SessionState(options.root);
  for (const record of records) recorded.apply(record);
  const owner = recorded.projectPath;
  if (owner === undefined || owner === options.root) {
    return new RewindableError(
      RewindableErrorCode.SESSION_EXISTS,
      `Session ${options.sessionId} already exists for the project ${options.root}. Reopen it with resume, or pick a new sessionId.`,
      { details: { sessionId: options.sessionId, projectKey } },
    );
  }
  return new RewindableError(
    RewindableErrorCode.SESSION_EXISTS,
    `Session ${options.sessionId} already exists in the store for another project, ${owner}, whose path encodes to the same store key (${projectKey}) as ${options.root}. ` +
      'A session id must be unique among projects whose paths differ only in characters other than letters and digits: pick a new sessionId for this project.',
    { details: { sessionId: options.sessionId, projectKey, cwd: owner } },
  );
}
