import type { SessionKey, StorageAdapter } from './storage-adapter.js';

/**
 * An adapter of the first version of the contract: the second plus hints the
 * manager no longer gives. Everything version 2 asks for, it has, so one is
 * taken where a storage is taken and used as it is: its hints are never
 * called, and the blobs it is handed carry no `similarTo` or `compress`.
 * @deprecated Implement `StorageAdapter` (`specificationVersion: 'v2'`).
 */
export interface StorageAdapterV1 extends Omit<StorageAdapter, 'specificationVersion'> {
  readonly specificationVersion: 'v1';
  /** Never called: the manager reads what `hasBlobs` holds. */
  flushedWithLogLine?(size: number): boolean;
  /** Never called: an adapter bounds its own caches. */
  releaseReadCaches?(key: SessionKey): void;
  /** Never called. */
  expectReads?(key: SessionKey, hashes: readonly string[]): void;
}

/** A storage adapter of either version of the contract. */
export function isStorageAdapter(value: unknown): value is StorageAdapter | StorageAdapterV1 {
  if (typeof value !== 'object' || value === null) return false;
  const version = (value as { specificationVersion?: unknown }).specificationVersion;
  return version === 'v2' || version === 'v1';
}

/** The adapter as the manager uses it: one of version 1 has every method version 2 asks for, with the same meaning. */
export function currentStorage(storage: StorageAdapter | StorageAdapterV1): StorageAdapter {
  return storage as unknown as StorageAdapter;
}
