import assert from 'node:assert/strict';
import type { StoreEntry } from '../../store/storage-adapter.js';
import { blobOf, newKey, newProjectKey, type ConformanceContext } from './context.js';

/** Values a log entry may carry; all must come back exactly. */
const awkwardEntry: StoreEntry = {
  type: 'awkward',
  text: 'quotes " \' backslash \\ newline \n tab \t ünïcødé 😀 \u2028 line separator',
  empty: '',
  numbers: [0, -1, 1.5, 2 ** 53 - 1, -1e-9],
  flags: [true, false, null],
  nested: { list: [[], {}, [{ deep: 'yes' }]], emptyObject: {} },
};

export function logCases({ it, withStorage, reopen }: ConformanceContext): void {
  it('load(key) of a session never written returns null', () =>
    withStorage(async (storage) => {
      assert.equal(await storage.load(newKey()), null);
    }));

  it('append(key, entries) and load(key) round-trip in order', () =>
    withStorage(async (storage) => {
      const key = newKey();
      await storage.append(key, [{ type: 'first', n: 1 }, { type: 'second', n: 2 }]);
      await storage.append(key, [{ type: 'third', n: 3 }]);
      assert.deepEqual(await storage.load(key), [{ type: 'first', n: 1 }, { type: 'second', n: 2 }, { type: 'third', n: 3 }]);
    }));

  it('append(key, entries) keeps every JSON value exactly (strings, numbers, nesting)', () =>
    withStorage(async (storage) => {
      const key = newKey();
      await storage.append(key, [awkwardEntry]);
      assert.deepEqual(await storage.load(key), [awkwardEntry]);
    }));

  it('append(key, entries) keeps order across many appends', () =>
    withStorage(async (storage) => {
      const key = newKey();
      const expected: StoreEntry[] = [];
      for (let batch = 0; batch < 40; batch += 1) {
        const entries = Array.from({ length: (batch % 4) + 1 }, (_, index) => ({ type: 'step', batch, index }));
        expected.push(...entries);
        await storage.append(key, entries);
      }
      assert.deepEqual(await storage.load(key), expected);
    }));

  it('append(key, entries) keeps sessions apart, within a project and across projects', () =>
    withStorage(async (storage) => {
      const first = newKey();
      const sibling = newKey(first.projectKey);
      const sameIdElsewhere = { projectKey: newProjectKey(), sessionId: first.sessionId };
      await Promise.all([
        storage.append(first, [{ type: 'first' }]),
        storage.append(sibling, [{ type: 'sibling' }]),
        storage.append(sameIdElsewhere, [{ type: 'elsewhere' }]),
      ]);
      assert.deepEqual(await storage.load(first), [{ type: 'first' }]);
      assert.deepEqual(await storage.load(sibling), [{ type: 'sibling' }]);
      assert.deepEqual(await storage.load(sameIdElsewhere), [{ type: 'elsewhere' }]);
    }));

  it('load(key) returns copies: changing them, or the appended objects, does not change the log', () =>
    withStorage(async (storage) => {
      const key = newKey();
      const appended = { type: 'original', list: [1] };
      await storage.append(key, [appended]);
      appended.list.push(2);
      const loaded = (await storage.load(key))!;
      (loaded[0]!.list as number[]).push(3);
      assert.deepEqual(await storage.load(key), [{ type: 'original', list: [1] }]);
    }));

  it('putBlobs(key, blobs) alone does not create the session', () =>
    withStorage(async (storage) => {
      const key = newKey();
      await storage.putBlobs(key, [blobOf('a backup stored before any entry')]);
      await storage.append(key, [], [blobOf('another one')]);
      assert.equal(await storage.load(key), null);
      assert.deepEqual(await storage.listSessions(key.projectKey), []);
    }));

  it('listSessions(projectKey) lists each session of the project once, with its mtime', () =>
    withStorage(async (storage) => {
      const first = newKey();
      const second = newKey(first.projectKey);
      await storage.append(first, [{ type: 'a' }]);
      await storage.append(first, [{ type: 'b' }]);
      await storage.append(second, [{ type: 'c' }]);
      await storage.append(newKey(), [{ type: 'other project' }]);
      const listed = await storage.listSessions(first.projectKey);
      assert.deepEqual(listed.map((session) => session.sessionId).sort(), [first.sessionId, second.sessionId].sort());
      for (const session of listed) {
        assert.ok(Number.isFinite(session.mtime) && session.mtime > 0, `mtime of ${session.sessionId} is ${session.mtime}`);
        if (session.bytes !== undefined) assert.ok(session.bytes > 0, `bytes of ${session.sessionId} is ${session.bytes}`);
      }
    }));

  it('listSessions(projectKey) of a project without sessions returns []', () =>
    withStorage(async (storage) => {
      assert.deepEqual(await storage.listSessions(newProjectKey()), []);
    }));

  it('delete(key) removes the session: load(key) returns null and listSessions omits it', () =>
    withStorage(async (storage) => {
      const doomed = newKey();
      const kept = newKey(doomed.projectKey);
      await storage.append(doomed, [{ type: 'doomed' }]);
      await storage.append(kept, [{ type: 'kept' }]);
      await storage.delete(doomed);
      assert.equal(await storage.load(doomed), null);
      assert.deepEqual(await storage.load(kept), [{ type: 'kept' }]);
      assert.deepEqual((await storage.listSessions(doomed.projectKey)).map((session) => session.sessionId), [kept.sessionId]);
    }));

  it('delete(key) of a session never written does nothing', () =>
    withStorage(async (storage) => {
      await storage.delete(newKey());
    }));

  it('append(key, entries) after delete(key) starts a new log', () =>
    withStorage(async (storage) => {
      const key = newKey();
      await storage.append(key, [{ type: 'old' }]);
      await storage.delete(key);
      await storage.append(key, [{ type: 'new' }]);
      assert.deepEqual(await storage.load(key), [{ type: 'new' }]);
    }));

  it('append(key, entries, blobs, { flush: false }) is loaded like any other append', () =>
    withStorage(async (storage) => {
      const key = newKey();
      await storage.append(key, [{ type: 'bookkeeping' }], [], { flush: false });
      await storage.append(key, [{ type: 'backup' }]);
      assert.deepEqual(await storage.load(key), [{ type: 'bookkeeping' }, { type: 'backup' }]);
    }));

  if (reopen !== undefined) {
    it('a second adapter over the same store loads what the first appended', () =>
      withStorage(async (storage) => {
        const key = newKey();
        await storage.append(key, [{ type: 'written', by: 'first' }]);
        const other = await reopen(storage);
        try {
          assert.deepEqual(await other.load(key), [{ type: 'written', by: 'first' }]);
          assert.deepEqual((await other.listSessions(key.projectKey)).map((session) => session.sessionId), [key.sessionId]);
        } finally {
          await other.close?.();
        }
      }));
  }
}
