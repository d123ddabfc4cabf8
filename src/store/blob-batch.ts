import type { BlobWrite } from './storage-adapter.js';

/**
 * Collects backups to store with the record that names them, so one flush
 * covers them all. Past `limitBytes` it stores what it holds early (each
 * batch durable before the record is written), keeping memory flat when a
 * checkpoint or rewind backs up many large files.
 */
export class BlobBatch {
  private items: BlobWrite[] = [];
  private bytes = 0;
  private readonly hashes = new Set<string>();

  constructor(
    private readonly storeEarly: (blobs: BlobWrite[]) => Promise<void>,
    private readonly limitBytes = 16 * 1024 * 1024,
  ) {}

  has(hash: string): boolean {
    return this.hashes.has(hash);
  }

  async add(blob: BlobWrite): Promise<void> {
    if (this.hashes.has(blob.hash)) return;
    this.hashes.add(blob.hash);
    this.items.push(blob);
    this.bytes += blob.bytes.length;
    if (this.bytes >= this.limitBytes) await this.storeEarly(this.take());
  }

  /** What has not been stored yet; goes out with the record. */
  take(): BlobWrite[] {
    const taken = this.items;
    this.items = [];
    this.bytes = 0;
    return taken;
  }
}
