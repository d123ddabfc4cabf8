import { describe, expect, it } from 'vitest';
import type { StorageAdapter } from '../../src/index.js';
import { memoryStorage } from '../../src/store/memory/memory-storage.js';
import { runStorageConformance } from '../../src/testing/index.js';

/**
 * The published suite is only worth running if it fails an adapter that
 * breaks the contract. Here the suite itself is under test: its cases are
 * collected and run against such an adapter.
 */

/** Runs every case the suite registers for `options`; returns the names of those that failed. */
async function failingCases(options: { create: () => StorageAdapter; reopen?: () => StorageAdapter }): Promise<string[]> {
  const cases: Array<{ name: string; body: () => Promise<void> }> = [];
  runStorageConformance({ name: 'under test', ...options, describe: (_name, body) => body(), it: (name, body) => cases.push({ name, body }) });
  const failed: string[] = [];
  for (const { name, body } of cases) await body().catch(() => failed.push(name));
  return failed;
}

describe('the storage conformance suite', () => {
  it('fails a store whose lock holds only within one instance: a session locked through one instance is refused through another', async () => {
    const shared = memoryStorage();
    // One store, as every process sees it; the locks live in each instance, as if kept in one process's memory.
    const instance = (): StorageAdapter => ({ ...shared, lock: memoryStorage().lock });
    expect(await failingCases({ create: instance, reopen: instance })).toEqual([
      'lock(key) taken through one instance is refused through another over the same store, until released',
    ]);
  });

  it('passes the memory store, whose instances are the store', async () => {
    const shared = memoryStorage();
    expect(await failingCases({ create: () => shared, reopen: () => shared })).toEqual([]);
  });
});
