import assert from 'node:assert/strict';
import { RewindableError, RewindableErrorCode } from '../../errors.js';
import type { StorageAdapter } from '../../store/storage-adapter.js';
import { asBuffer, blobOf, newKey, type ConformanceContext } from './context.js';

/** Tests of an optional method pass trivially for an adapter without it (it does not claim the capability). */
function ifImplemented(storage: StorageAdapter, method: 'listProjects' | 'collectGarbage' | 'lock'): boolean {
  return typeof storage[method] === 'function';
}

async function assertLocked(attempt: Promise<unknown>): Promise<void> {
  await assert.rejects(attempt, (error: unknown) => {
    assert.ok(RewindableError.isInstance(error), `expected a RewindableError, got ${String(error)}`);
    assert.equal(error.code, RewindableErrorCode.SESSION_LOCKED);
    return true;
  });
}

export function capabilityCases({ it, withStorage, reopen }: ConformanceContext): void {
  it('listProjects() includes every project with a session, once', () =>
    withStorage(async (storage) => {
      if (!ifImplemented(storage, 'listProjects')) return;
      const first = newKey();
      const second = newKey();
      await storage.append(first, [{ type: 'a' }]);
      await storage.append(newKey(first.projectKey), [{ type: 'b' }]);
      await storage.append(second, [{ type: 'c' }]);
      const projects = await storage.listProjects!();
      for (const projectKey of [first.projectKey, second.projectKey]) {
        assert.equal(projects.filter((listed) => listed === projectKey).length, 1, `${projectKey} in ${JSON.stringify(projects)}`);
      }
    }));

  it('collectGarbage(referenced, { graceMs }) keeps every referenced blob', () =>
    withStorage(async (storage) => {
      if (!ifImplemented(storage, 'collectGarbage')) return;
      const key = newKey();
      const small = blobOf('a referenced small blob');
      const large = blobOf(Buffer.alloc(1024 * 1024 + 1, 'r'));
      await storage.append(key, [{ type: 'names', hashes: [small.hash, large.hash] }], [small, large]);
      const result = await storage.collectGarbage!(new Set([small.hash, large.hash]), { graceMs: 0 });
      assert.ok(result.blobsRemoved >= 0 && result.bytesFreed >= 0);
      assert.deepEqual(asBuffer(await storage.getBlob(key, small.hash)), small.bytes);
      assert.deepEqual(asBuffer(await storage.getBlob(key, large.hash)), large.bytes);
    }));

  it('collectGarbage(referenced, { graceMs }) keeps unreferenced blobs younger than graceMs', () =>
    withStorage(async (storage) => {
      if (!ifImplemented(storage, 'collectGarbage')) return;
      const key = newKey();
      const young = blobOf(Buffer.alloc(1024 * 1024 + 2, 'y'));
      await storage.putBlobs(key, [young]);
      await storage.collectGarbage!(new Set(), { graceMs: 60 * 60 * 1000 });
      assert.deepEqual(asBuffer(await storage.getBlob(key, young.hash)), young.bytes);
    }));

  it('collectGarbage(referenced, { graceMs: 0 }) after delete(key) frees the blobs of the deleted session', () =>
    withStorage(async (storage) => {
      if (!ifImplemented(storage, 'collectGarbage')) return;
      const doomed = newKey();
      const blobs = [blobOf(`only the doomed session ${doomed.sessionId}`), blobOf(Buffer.alloc(1024 * 1024 + 3, doomed.sessionId))];
      await storage.append(doomed, [{ type: 'doomed' }], blobs);
      await storage.delete(doomed);
      await storage.collectGarbage!(new Set(), { graceMs: 0 });
      assert.deepEqual(await storage.hasBlobs(doomed, blobs.map((blob) => blob.hash)), new Set());
    }));

  it('lock(key) is exclusive: a second lock(key) rejects with SESSION_LOCKED until release()', () =>
    withStorage(async (storage) => {
      if (!ifImplemented(storage, 'lock')) return;
      const key = newKey();
      const held = await storage.lock!(key);
      await assertLocked(storage.lock!(key));
      await held.release();
      const again = await storage.lock!(key);
      await again.release();
    }));

  it('lock(key) of different sessions do not block each other', () =>
    withStorage(async (storage) => {
      if (!ifImplemented(storage, 'lock')) return;
      const first = newKey();
      const locks = await Promise.all([storage.lock!(first), storage.lock!(newKey(first.projectKey)), storage.lock!(newKey())]);
      for (const lock of locks) await lock.release();
    }));

  if (reopen !== undefined) {
    // Another instance is how another process sees the store: a lock kept in one instance's memory locks nothing.
    it('lock(key) taken through one instance is refused through another over the same store, until released', () =>
      withStorage(async (storage) => {
        if (!ifImplemented(storage, 'lock')) return;
        const other = await reopen(storage);
        try {
          const key = newKey();
          const held = await storage.lock!(key);
          await assertLocked(other.lock!(key));
          await held.release();
          const taken = await other.lock!(key);
          await assertLocked(storage.lock!(key));
          await taken.release();
        } finally {
          await other.close?.();
        }
      }));
  }

  it('release() twice is harmless and does not release a later holder', () =>
    withStorage(async (storage) => {
      if (!ifImplemented(storage, 'lock')) return;
      const key = newKey();
      const first = await storage.lock!(key);
      await first.release();
      const second = await storage.lock!(key);
      await first.release();
      await assertLocked(storage.lock!(key));
      await second.release();
    }));
}
