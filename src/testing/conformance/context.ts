import { createHash, randomUUID } from 'node:crypto';
import type { BlobWrite, SessionKey, StorageAdapter } from '../../store/storage-adapter.js';

export interface ConformanceContext {
  it: (name: string, body: () => Promise<void>) => unknown;
  /** Runs `body` with a fresh adapter and disposes of it afterwards, pass or fail. */
  withStorage(body: (storage: StorageAdapter) => Promise<void>): Promise<void>;
  reopen?: (storage: StorageAdapter) => StorageAdapter | Promise<StorageAdapter>;
}

/** A project key no other test uses (keys look like encoded paths: no characters outside [A-Za-z0-9-]). */
export function newProjectKey(): string {
  return `-conformance-${randomUUID().replaceAll('-', '')}`;
}

export function newKey(projectKey = newProjectKey()): SessionKey {
  return { projectKey, sessionId: randomUUID() };
}

export function blobOf(content: string | Uint8Array): BlobWrite {
  const bytes = typeof content === 'string' ? Buffer.from(content) : content;
  return { hash: createHash('sha256').update(bytes).digest('hex'), bytes };
}

/** Bytes as a Buffer, whatever view the adapter returned (for exact comparisons). */
export function asBuffer(bytes: Uint8Array | null): Buffer | null {
  return bytes === null ? null : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
