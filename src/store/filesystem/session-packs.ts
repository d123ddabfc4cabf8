import fs from 'node:fs';
import path from 'node:path';
import { storeIoError } from '../../errors.js';
import type { SessionKey } from '../storage-adapter.js';
import { BlobPack } from './blob-pack.js';
import { flushCreatedDirectories } from './created-directories.js';

export const nothingToFlush = async (): Promise<void> => {};

/**
 * The packs of the sessions this adapter reads or writes, by file (its name
 * carries the project and the session): a writer for each session it stores
 * blobs of, readers for the rest.
 */
export class SessionPacks {
  private readonly writers = new Map<string, BlobPack>();
  private readonly readers = new Map<string, BlobPack>();
  /** Packs that failed to flush: their data may be lost, so nothing more is added until the session is reopened. */
  private readonly failures = new Map<string, unknown>();

  constructor(
    private readonly directory: string,
    private readonly durable: boolean,
  ) {}

  path(key: SessionKey): string {
    return path.join(this.directory, key.projectKey, `${key.sessionId}.pack`);
  }

  /** Where packs of an older layout were named by session alone: read, never written. */
  legacyPath(key: SessionKey): string {
    return path.join(this.directory, `${key.sessionId}.pack`);
  }

  /** The pack holding `hash` for this session: its own, else one of the older layout under its id. */
  find(key: SessionKey, hash: string): BlobPack | undefined {
    for (const file of [this.path(key), this.legacyPath(key)]) {
      const pack = this.reader(file, false);
      if (pack?.has(hash)) return pack;
      // Another process may have appended since this reader opened the pack.
      const refreshed = this.reader(file, true);
      if (refreshed?.has(hash)) return refreshed;
    }
    return undefined;
  }

  /** The session's pack when it is open for appending already. */
  openWriter(key: SessionKey): BlobPack | undefined {
    return this.failures.has(this.path(key)) ? undefined : this.writers.get(this.path(key));
  }

  /**
   * The session's pack, opened for appending, and what makes its appended
   * entries durable. A pack that did not exist yet (nor perhaps its project's
   * folder) is durable once the directory entries naming it are flushed too.
   */
  writer(key: SessionKey): { pack: BlobPack; flush: () => Promise<void> } {
    const file = this.path(key);
    const failure = this.failures.get(file);
    if (failure !== undefined) throw storeIoError('store a backup (an earlier flush of the pack failed; reopen the session)', failure);
    let pack = this.writers.get(file);
    let flushNewEntries = nothingToFlush;
    if (pack === undefined) {
      const firstCreated = fs.mkdirSync(path.dirname(file), { recursive: true });
      if (!fs.existsSync(file)) flushNewEntries = () => flushCreatedDirectories(file, firstCreated ?? file);
      this.close(file);
      pack = BlobPack.open(file, 'write')!;
      this.writers.set(file, pack);
    }
    if (!this.durable) return { pack, flush: nothingToFlush };
    const flush = async () => {
      try {
        await pack.flush();
        await flushNewEntries();
      } catch (error) {
        this.failures.set(file, error);
        throw error;
      }
    };
    return { pack, flush };
  }

  close(file: string): void {
    for (const packs of [this.writers, this.readers]) {
      packs.get(file)?.close();
      packs.delete(file);
    }
  }

  closeAll(): void {
    for (const pack of [...this.writers.values(), ...this.readers.values()]) pack.close();
    this.writers.clear();
    this.readers.clear();
  }

  private reader(file: string, refresh: boolean): BlobPack | undefined {
    const writer = this.writers.get(file);
    if (writer !== undefined) return writer;
    let pack = this.readers.get(file);
    if (pack === undefined || (refresh && !pack.unchangedOnDisk())) {
      pack?.close();
      pack = BlobPack.open(file, 'read');
      if (pack === undefined) this.readers.delete(file);
      else this.readers.set(file, pack);
    }
    return pack;
  }
}
