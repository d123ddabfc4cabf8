import { describe, expect, it } from 'vitest';
import { listSessions, type StorageAdapterV1 } from '../../src/index.js';
import { memoryStorage } from '../../src/store/memory/memory-storage.js';
import { newId, tempProject } from '../helpers/temp-project.js';

/** A version 1 adapter: the memory store, its version changed, and hints that fail if the manager ever gives them. */
function versionOneStorage(): StorageAdapterV1 {
  const inner = memoryStorage();
  const neverCalled = (name: string) => () => {
    throw new Error(`${name} was called`);
  };
  return {
    specificationVersion: 'v1',
    append: (key, entries, blobs, options) => {
      for (const blob of blobs ?? []) expect(Object.keys(blob).sort()).toEqual(['bytes', 'hash']);
      return inner.append(key, entries, blobs, options);
    },
    load: (key) => inner.load(key),
    listSessions: (projectKey) => inner.listSessions(projectKey),
    delete: (key) => inner.delete(key),
    putBlobs: (key, blobs) => {
      for (const blob of blobs) expect(Object.keys(blob).sort()).toEqual(['bytes', 'hash']);
      return inner.putBlobs(key, blobs);
    },
    getBlob: (key, hash) => inner.getBlob(key, hash),
    hasBlobs: (key, hashes) => inner.hasBlobs(key, hashes),
    lock: (key) => inner.lock(key),
    flushedWithLogLine: neverCalled('flushedWithLogLine'),
    releaseReadCaches: neverCalled('releaseReadCaches'),
    expectReads: neverCalled('expectReads'),
  };
}

describe('a storage adapter of contract version 1', () => {
  it('is accepted as the storage option: tracking, rewinding, resuming and listing work, and no hint is called', async () => {
    const project = tempProject();
    const storage = versionOneStorage();
    project.write('a.txt', 'first\n');
    const manager = await project.open({ storage, capture: true });
    const turn = await manager.checkpoint(newId());
    await manager.trackEdit('a.txt');
    project.write('a.txt', 'second\n');
    await manager.checkpoint(newId());
    project.write('b.txt', 'made by a shell command\n');
    await manager.checkpoint(newId());
    await manager.close();

    const resumed = await project.open({ storage, capture: true, resume: manager.sessionId });
    const result = await resumed.rewindFiles(turn);
    expect(result.canRewind).toBe(true);
    expect(project.read('a.txt').toString()).toBe('first\n');
    expect(project.exists('b.txt')).toBe(false);
    await resumed.close();
    expect((await listSessions({ cwd: project.root, storage })).map((session) => session.sessionId)).toEqual([manager.sessionId]);
  });
});
