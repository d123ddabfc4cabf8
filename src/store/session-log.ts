import { sha256 } from '../hash.js';
import { RewindableError, RewindableErrorCode, storeIoError } from '../errors.js';
import { knownRecordTypes, logRecordSchema, type LogRecord } from '../schemas.js';
import type { AppendOptions, BlobWrite, SessionKey, StorageAdapter, StoreEntry } from './storage-adapter.js';

export type BlobRead = { ok: true; bytes: Buffer } | { ok: false; reason: string };

export interface LoadedSession {
  records: LogRecord[];
  /** The entries as stored, records of unknown types included: what a copy of the log carries. */
  entries: StoreEntry[];
  /** The last record named a backup that did not survive a crash; it was dropped. */
  droppedUnacknowledged: boolean;
}

/**
 * One session's log and blobs, typed: records are validated with zod on the
 * way in, blobs are hashed on the way in and checked on the way out.
 */
export class SessionLog {
  constructor(
    readonly storage: StorageAdapter,
    readonly key: SessionKey,
  ) {}

  async load(): Promise<LoadedSession | null> {
    let entries: StoreEntry[] | null;
    try {
      entries = await this.storage.load(this.key);
    } catch (error) {
      if (RewindableError.isInstance(error)) throw error;
      throw storeIoError(`read the log of session ${this.key.sessionId}`, error);
    }
    if (entries === null) return null;
    const records: LogRecord[] = [];
    entries.forEach((entry, index) => {
      if (!knownRecordTypes.has(entry.type)) return; // written by a newer version: not ours to judge
      const parsed = logRecordSchema.safeParse(entry);
      if (!parsed.success) {
        throw new RewindableError(
          RewindableErrorCode.LOG_CORRUPT,
          `The log of session ${this.key.sessionId} has an invalid "${entry.type}" record at entry ${index + 1}: ` +
            `${parsed.error.issues[0]?.path.join('.') ?? ''} ${parsed.error.issues[0]?.message ?? ''}. The session was not opened.`,
          { details: { entry: index + 1 } },
        );
      }
      if (parsed.data.type === 'discard') records.pop();
      else records.push(parsed.data);
    });
    const last = records.at(-1);
    const droppedUnacknowledged = last !== undefined && (await this.lostWithItsLine(last));
    if (droppedUnacknowledged) records.pop();
    return { records, entries, droppedUnacknowledged };
  }

  /**
   * Whether the last record's append never completed: a crash kept its line
   * but not a backup it names. A storage holds a backup no later than the
   * line that names it (`StorageAdapter.hasBlobs`), so one it does not hold
   * was lost with an append that never returned. A backup it holds but cannot
   * read is damage instead: the record stays, and a rewind reports its path
   * as `backup-unreadable`.
   */
  private async lostWithItsLine(last: LogRecord): Promise<boolean> {
    // The bytes a write record keeps serve merges, not rewinds: without them nothing is lost, so they decide nothing.
    const named = last.type === 'write' ? [] : blobsNamedBy(last);
    if (named.length === 0) return false;
    const held = await this.storage.hasBlobs(this.key, named);
    return named.some((hash) => !held.has(hash));
  }

  /** Appends records, and the blobs they name, as durably as the storage promises. */
  async append(records: readonly LogRecord[], blobs: readonly BlobWrite[] = [], options: AppendOptions = {}): Promise<void> {
    try {
      await this.storage.append(this.key, records as unknown as StoreEntry[], blobs, options);
    } catch (error) {
      if (RewindableError.isInstance(error)) throw error;
      throw storeIoError(`write to the log of session ${this.key.sessionId}`, error);
    }
  }

  /**
   * The blob's bytes, checked against its hash, or why they cannot be used
   * (missing, damaged, not a regular file). A failed read of the store (an
   * I/O error, permissions) is thrown as STORE_IO instead: the backup may be
   * intact, so a rewind fails and can be retried rather than leave the file out.
   */
  async readBlob(hash: string): Promise<BlobRead> {
    let bytes: Uint8Array | null;
    try {
      bytes = await this.storage.getBlob(this.key, hash);
    } catch (error) {
      if (RewindableError.isInstance(error)) throw error;
      if (isSystemError(error)) throw storeIoError(`read the backup ${hash.slice(0, 12)} of session ${this.key.sessionId}`, error);
      return { ok: false, reason: `its backup ${hash.slice(0, 12)} cannot be read (${error instanceof Error ? error.message : String(error)})` };
    }
    if (bytes === null) return { ok: false, reason: `its backup ${hash.slice(0, 12)} is missing from the store` };
    const buffer = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (sha256(buffer) !== hash) return { ok: false, reason: `its backup ${hash.slice(0, 12)} no longer matches its hash` };
    return { ok: true, bytes: buffer };
  }
}

/** An error from the operating system (it has an errno code and a syscall), as opposed to damaged content. */
function isSystemError(error: unknown): boolean {
  return error instanceof Error && typeof (error as NodeJS.ErrnoException).code === 'string' && typeof (error as NodeJS.ErrnoException).syscall === 'string';
}

/** Hashes of the backups a record names. */
export function blobsNamedBy(record: LogRecord): string[] {
  switch (record.type) {
    case 'scan-backups':
      return record.files.map((file) => file[1]);
    case 'track':
      return record.state.kind === 'file' ? [record.state.sha256] : [];
    case 'checkpoint':
      return record.files.flatMap((file) => (file.state.kind === 'file' ? [file.state.sha256] : []));
    case 'write':
      return record.stored === true && record.state.kind === 'file' ? [record.state.sha256] : [];
    case 'rewind-begin':
      return record.plan.flatMap((entry) => (entry.to?.kind === 'file' ? [entry.to.sha256] : []));
    default:
      return [];
  }
}
