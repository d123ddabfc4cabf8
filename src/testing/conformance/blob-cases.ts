import assert from 'node:assert/strict';
import { asBuffer, blobOf, newKey, newProjectKey, type ConformanceContext } from './context.js';

/** Every byte value, a zero run and a tail: catches text encodings and truncation at NUL. */
function binaryBytes(length: number): Buffer {
  const bytes = Buffer.alloc(length);
  for (let index = 0; index < length; index += 1) bytes[index] = (index * 31 + (index >> 8)) & 0xff;
  bytes.fill(0, 10, 40);
  return bytes;
}

export function blobCases({ it, withStorage, reopen }: ConformanceContext): void {
  it('append(key, entries, blobs) stores the blobs: getBlob(key, hash) returns their exact bytes', () =>
    withStorage(async (storage) => {
      const key = newKey();
      const blobs = [blobOf('first backup\n'), blobOf(binaryBytes(70_000)), blobOf(new Uint8Array(0))];
      await storage.append(key, [{ type: 'names-blobs', hashes: blobs.map((blob) => blob.hash) }], blobs);
      for (const blob of blobs) assert.deepEqual(asBuffer(await storage.getBlob(key, blob.hash)), asBuffer(blob.bytes), `blob ${blob.hash}`);
    }));

  it('putBlobs(key, blobs) and getBlob(key, hash) round-trip a 2 MiB blob', () =>
    withStorage(async (storage) => {
      const key = newKey();
      const blob = blobOf(binaryBytes(2 * 1024 * 1024 + 17));
      await storage.putBlobs(key, [blob]);
      assert.deepEqual(asBuffer(await storage.getBlob(key, blob.hash)), blob.bytes);
    }));

  it('getBlob(key, hash) of a blob never stored returns null', () =>
    withStorage(async (storage) => {
      assert.equal(await storage.getBlob(newKey(), blobOf('never stored').hash), null);
    }));

  it('hasBlobs(key, hashes) returns exactly the stored subset', () =>
    withStorage(async (storage) => {
      const key = newKey();
      const stored = [blobOf('stored one'), blobOf('stored two')];
      const missing = blobOf('not stored');
      await storage.putBlobs(key, stored);
      assert.deepEqual(await storage.hasBlobs(key, [stored[0]!.hash, missing.hash, stored[1]!.hash]), new Set(stored.map((blob) => blob.hash)));
      assert.deepEqual(await storage.hasBlobs(key, []), new Set());
    }));

  it('putBlobs(key, blobs) twice with the same hash keeps one readable copy', () =>
    withStorage(async (storage) => {
      const key = newKey();
      const blob = blobOf('stored twice');
      await storage.putBlobs(key, [blob]);
      await storage.putBlobs(key, [blob, blob]);
      await storage.append(key, [{ type: 'again' }], [blob]);
      assert.deepEqual(asBuffer(await storage.getBlob(key, blob.hash)), blob.bytes);
    }));

  it('putBlobs(key, blobs) of versions of one file, one small edit apart, returns every version exactly', () =>
    withStorage(async (storage) => {
      const key = newKey();
      const versions = fileVersions();
      for (const blob of versions) await storage.putBlobs(key, [blob]);
      for (const blob of versions) assert.deepEqual(asBuffer(await storage.getBlob(key, blob.hash)), blob.bytes);
    }));

  it("append(key, entries, blobs) of a file's versions as rewindable records them returns every version exactly, and after reopening", () =>
    withStorage(async (storage) => {
      // An adapter may store a version as a delta of the one before, read from the entries: each must still read whole.
      const key = newKey();
      const versions = fileVersions();
      for (const [version, blob] of versions.entries()) {
        const state = { kind: 'file', sha256: blob.hash, size: blob.bytes.length, mode: 0o644 };
        const entry = version === 0 ? { type: 'track', path: 'a.txt', state } : { type: 'checkpoint', id: `turn ${version}`, files: [{ path: 'a.txt', state }] };
        await storage.append(key, [entry], [blob]);
      }
      await storage.append(key, [{ type: 'checkpoint', id: 'deleted', files: [{ path: 'a.txt', state: { kind: 'absent' } }] }]);
      for (const blob of versions) assert.deepEqual(asBuffer(await storage.getBlob(key, blob.hash)), blob.bytes, `version ${blob.hash}`);
      if (reopen !== undefined) {
        const other = await reopen(storage);
        try {
          for (const blob of versions) assert.deepEqual(asBuffer(await other.getBlob(key, blob.hash)), asBuffer(blob.bytes), `reopened: version ${blob.hash}`);
        } finally {
          await other.close?.();
        }
      }
    }));

  it('delete(key) keeps the blobs other sessions hold', () =>
    withStorage(async (storage) => {
      const doomed = newKey();
      const kept = newKey(doomed.projectKey);
      const shared = blobOf('held by both sessions');
      await storage.append(doomed, [{ type: 'doomed' }], [shared, blobOf('held by the doomed session only')]);
      await storage.append(kept, [{ type: 'kept' }], [shared]);
      await storage.delete(doomed);
      assert.deepEqual(asBuffer(await storage.getBlob(kept, shared.hash)), shared.bytes);
      assert.deepEqual(await storage.hasBlobs(kept, [shared.hash]), new Set([shared.hash]));
    }));

  it('a session copied to another key the way relocation does it keeps every blob readable there once the old key is deleted', () =>
    withStorage(async (storage) => {
      // Relocation keeps the session id and changes the project key; it stores again only what
      // hasBlobs(newKey) does not report, so a blob reported there must outlive the old key.
      const oldKey = newKey();
      const movedKey = { projectKey: newProjectKey(), sessionId: oldKey.sessionId };
      const blobs = [blobOf(`small ${oldKey.sessionId}`), blobOf(binaryBytes(70_000)), blobOf(Buffer.alloc(1024 * 1024 + 5, oldKey.sessionId))];
      const hashes = blobs.map((blob) => blob.hash);
      await storage.append(oldKey, [{ type: 'names-blobs', hashes }], blobs);

      const held = await storage.hasBlobs(movedKey, hashes);
      for (const hash of hashes) {
        if (held.has(hash)) continue;
        const bytes = await storage.getBlob(oldKey, hash);
        assert.ok(bytes !== null, `blob ${hash} reads under the old key`);
        await storage.putBlobs(movedKey, [{ hash, bytes }]);
      }
      await storage.append(movedKey, (await storage.load(oldKey))!);
      await storage.delete(oldKey);

      for (const blob of blobs) assert.deepEqual(asBuffer(await storage.getBlob(movedKey, blob.hash)), asBuffer(blob.bytes), `blob ${blob.hash} under the new key`);
      assert.deepEqual(await storage.hasBlobs(movedKey, hashes), new Set(hashes));
      assert.deepEqual(await storage.load(movedKey), [{ type: 'names-blobs', hashes }]);
      if (reopen !== undefined) {
        const other = await reopen(storage);
        try {
          for (const blob of blobs) assert.deepEqual(asBuffer(await other.getBlob(movedKey, blob.hash)), asBuffer(blob.bytes), `reopened: blob ${blob.hash} under the new key`);
        } finally {
          await other.close?.();
        }
      }
    }));

  it('putBlobs(key, blobs) of many small blobs at once (a first scan) returns each exactly, also once later versions are stored', () =>
    withStorage(async (storage) => {
      // An adapter may compress a bulk write together: every member must still read on its own.
      const key = newKey();
      const bulk = Array.from({ length: 40 }, (_, index) => blobOf(`bulk file ${index}\n`.repeat(50 + index)));
      await storage.putBlobs(key, bulk);
      await storage.append(key, [{ type: 'scan-backups', files: bulk.map((blob, index) => [`f${index}.txt`, blob.hash, blob.bytes.length, 0o644, '']) }]);
      const edited = blobOf(`bulk file 3\n`.repeat(53) + 'edited\n');
      const state = { kind: 'file', sha256: edited.hash, size: edited.bytes.length, mode: 0o644 };
      await storage.append(key, [{ type: 'checkpoint', id: 'edit', files: [{ path: 'f3.txt', state }, { path: 'f17.txt', state: { kind: 'absent' } }] }], [edited]);
      for (const blob of [...bulk, edited]) assert.deepEqual(asBuffer(await storage.getBlob(key, blob.hash)), asBuffer(blob.bytes), `blob ${blob.hash}`);
      assert.equal(await storage.getBlob(key, blobOf('never stored').hash), null);
      if (reopen !== undefined) {
        const other = await reopen(storage);
        try {
          for (const blob of [...bulk, edited]) assert.deepEqual(asBuffer(await other.getBlob(key, blob.hash)), asBuffer(blob.bytes), `reopened: blob ${blob.hash}`);
        } finally {
          await other.close?.();
        }
      }
    }));

  if (reopen !== undefined) {
    it('a second adapter over the same store reads the blobs the first stored', () =>
      withStorage(async (storage) => {
        const key = newKey();
        const blob = blobOf(binaryBytes(5000));
        await storage.append(key, [{ type: 'with-blob' }], [blob]);
        const other = await reopen(storage);
        try {
          assert.deepEqual(asBuffer(await other.getBlob(key, blob.hash)), blob.bytes);
        } finally {
          await other.close?.();
        }
      }));
  }
}

/** Six versions of one 400-line file, each one small edit from the one before: what an adapter may store as deltas. */
function fileVersions(): Array<ReturnType<typeof blobOf>> {
  const lines = Array.from({ length: 400 }, (_, index) => `line ${index} of a file that changes a little\n`);
  return Array.from({ length: 6 }, (_, version) => {
    lines[version * 50] = `edited in version ${version}\n`;
    return blobOf(lines.join(''));
  });
}
