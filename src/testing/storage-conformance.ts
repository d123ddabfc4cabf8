import type { StorageAdapter } from '../store/storage-adapter.js';
import { blobCases } from './conformance/blob-cases.js';
import type { ConformanceContext } from './conformance/context.js';
import { capabilityCases } from './conformance/capability-cases.js';
import { logCases } from './conformance/log-cases.js';
import { managerCases } from './conformance/manager-cases.js';

/**
 * The test primitives of any runner (Vitest, Jest, Mocha, `node:test`). The
 * suite asserts with `node:assert`, so it needs nothing else from the runner.
 */
export interface ConformanceTestApi {
  describe: (name: string, body: () => void) => unknown;
  it: (name: string, body: () => Promise<void>) => unknown;
}

export interface StorageConformanceOptions extends ConformanceTestApi {
  /** Names the suite: `storage conformance: <name>`. */
  name: string;
  /**
   * A fresh adapter for one test. Adapters made by one run may share their
   * backing store (one database, one directory): every test uses keys of its own.
   */
  create: () => StorageAdapter | Promise<StorageAdapter>;
  /**
   * Disposes of an adapter after its test.
   * @default (adapter) => adapter.close?.()
   */
  destroy?: (adapter: StorageAdapter) => void | Promise<void>;
  /**
   * A second adapter over the same data as `adapter`, as another process would
   * open it. When given, the suite also checks that what one instance wrote,
   * another reads, and that a lock taken through one is refused through the
   * other. Give it for any store more than one process may open.
   */
  reopen?: (adapter: StorageAdapter) => StorageAdapter | Promise<StorageAdapter>;
}

/**
 * Registers the storage contract's conformance tests with your test runner.
 * Run it against every adapter, ours or your own: the log half (append, load,
 * listSessions, delete), the blob half (putBlobs, getBlob, hasBlobs), each
 * optional capability the adapter has (listProjects, collectGarbage, lock),
 * and a CheckpointManager tracking, rewinding and resuming through it.
 *
 * It cannot check that a lock lost while held (a dropped connection, a lock
 * broken by hand) fences its holder off: losing a lock is the backend's own
 * business. Test that against your backend (see docs/storage.md).
 *
 * @example
 * import { describe, it } from 'vitest';
 * import { runStorageConformance } from 'rewindable/testing';
 * import { myStorage } from '../src/my-storage.js';
 *
 * runStorageConformance({ name: 'my storage', create: () => myStorage({ url: process.env.TEST_URL }), describe, it });
 */
export function runStorageConformance(options: StorageConformanceOptions): void {
  const destroy = options.destroy ?? ((adapter: StorageAdapter) => adapter.close?.());
  const context: ConformanceContext = {
    it: options.it,
    async withStorage(body) {
      const storage = await options.create();
      try {
        await body(storage);
      } finally {
        await destroy(storage);
      }
    },
    ...(options.reopen !== undefined ? { reopen: options.reopen } : {}),
  };
  options.describe(`storage conformance: ${options.name}`, () => {
    options.describe('session log', () => logCases(context));
    options.describe('blobs', () => blobCases(context));
    options.describe('optional capabilities', () => capabilityCases(context));
    options.describe('with a CheckpointManager', () => managerCases(context));
  });
}
