import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { filesystemStorage } from '../../src/index.js';
import { SessionLog } from '../../src/store/session-log.js';
import { bundlesCompressedOffMainThread } from '../../src/store/filesystem/blob-placement.js';

const directories: string[] = [];
afterEach(() => {
  for (const directory of directories.splice(0)) fs.rmSync(directory, { recursive: true, force: true });
});
function storeDirectory(): string {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'rewindable-store-'));
  directories.push(directory);
  return directory;
}
const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const key = { projectKey: '-tmp-project', sessionId: '6a4b9f0e-3c1d-4e2f-8a7b-1c2d3e4f5a6b' };
const blobsOf = (files: readonly Buffer[]) => files.map((bytes) => ({ hash: sha(bytes), bytes }));
/** The record of a first scan's backups, `files[i]` at `f<i>.txt`, as the manager writes it. */
const scanned = (files: readonly Buffer[]) => ({ type: 'scan-backups', files: files.map((bytes, index) => [`f${index}.txt`, sha(bytes), bytes.length, 0o644, '']) });
/** A checkpoint recording `f<index>.txt` at new content, or deleted: the adapter takes each file's previous version from such records. */
const changed = (changes: ReadonlyArray<[index: number, bytes: Buffer | undefined]>) => ({
  type: 'checkpoint',
  id: randomUUID(),
  files: changes.map(([index, bytes]) => ({ path: `f${index}.txt`, state: bytes === undefined ? { kind: 'absent' } : { kind: 'file', sha256: sha(bytes), size: bytes.length, mode: 0o644 } })),
});

/**
 * Damages the start of the compressed data of the pack's first entry, a
 * bundle of `members` blobs, so that every member read from that bundle
 * itself is lost; returns a new reader of the store and a check that a blob
 * still reads exactly.
 */
function damageFirstBundle(directory: string, members: number) {
  const packPath = path.join(directory, 'blobs', 'packs', key.projectKey, `${key.sessionId}.pack`);
  const pack = fs.readFileSync(packPath);
  expect(pack.readUInt32LE(72)).toBe(members);
  const compressedStart = 72 + 4 + members * 44;
  for (let at = compressedStart; at < compressedStart + 16; at += 1) pack[at] = pack[at]! ^ 0xff;
  fs.writeFileSync(packPath, pack);
  const reader = filesystemStorage({ directory });
  const readsExactly = (bytes: Buffer) =>
    reader.getBlob(key, sha(bytes)).then(
      (read) => read !== null && Buffer.from(read).equals(bytes),
      () => false,
    );
  return { reader, readsExactly };
}

describe('filesystem storage', () => {
  it('append(key, entries) and load(key) round-trip in order', async () => {
    const storage = filesystemStorage({ directory: storeDirectory(), durability: 'none' });
    expect(await storage.load(key)).toBeNull();
    await storage.append(key, [{ type: 'a', n: 1 }, { type: 'b', text: 'ünïcode\nline' }]);
    await storage.append(key, [{ type: 'c' }]);
    expect(await storage.load(key)).toEqual([{ type: 'a', n: 1 }, { type: 'b', text: 'ünïcode\nline' }, { type: 'c' }]);
    expect((await storage.listSessions(key.projectKey)).map((session) => session.sessionId)).toEqual([key.sessionId]);
    await storage.delete(key);
    expect(await storage.load(key)).toBeNull();
    await storage.close();
  });

  it('stores similar versions of a file as deltas and reads them back exactly', async () => {
    const directory = storeDirectory();
    const storage = filesystemStorage({ directory, durability: 'none' });
    const lines = Array.from({ length: 2000 }, (_, index) => `const value${index} = ${index * 7};\n`);
    const versions: Buffer[] = [];
    for (let version = 0; version < 50; version += 1) {
      lines[(version * 37) % lines.length] = `// edit ${version}\n`;
      const bytes = Buffer.from(lines.join(''));
      versions.push(bytes);
      await storage.append(key, [changed([[0, bytes]])], blobsOf([bytes]));
    }
    const packSize = fs.statSync(path.join(directory, 'blobs', 'packs', key.projectKey, `${key.sessionId}.pack`)).size;
    expect(packSize).toBeLessThan(versions[0]!.length * 4); // 50 versions of ~60 KB
    await storage.close();
    const reader = filesystemStorage({ directory });
    for (const bytes of versions) expect(Buffer.from((await reader.getBlob(key, sha(bytes)))!).equals(bytes)).toBe(true);
    expect(await reader.hasBlobs(key, [sha(versions[3]!), 'f'.repeat(64)])).toEqual(new Set([sha(versions[3]!)]));
  });

  it('stores the bytes a tool wrote, kept with its write record, as a delta of the version before', async () => {
    const directory = storeDirectory();
    const storage = filesystemStorage({ directory, durability: 'none' });
    const lines = Array.from({ length: 2000 }, (_, index) => `const value${index} = ${index * 7};\n`);
    const versions: Buffer[] = [Buffer.from(lines.join(''))];
    await storage.append(key, [changed([[0, versions[0]!]])], blobsOf(versions));
    for (let version = 1; version < 50; version += 1) {
      lines[(version * 37) % lines.length] = `// edit ${version}\n`;
      const bytes = Buffer.from(lines.join(''));
      versions.push(bytes);
      const write = { type: 'write', path: 'f0.txt', state: { kind: 'file', sha256: sha(bytes), size: bytes.length, mode: 0o644 }, stored: true, at: '' };
      await storage.append(key, [write], blobsOf([bytes]));
    }
    const packSize = fs.statSync(path.join(directory, 'blobs', 'packs', key.projectKey, `${key.sessionId}.pack`)).size;
    expect(packSize).toBeLessThan(versions[0]!.length * 4); // 50 versions of ~60 KB
    await storage.close();
    const reader = filesystemStorage({ directory });
    for (const bytes of versions) expect(Buffer.from((await reader.getBlob(key, sha(bytes)))!).equals(bytes)).toBe(true);
  });

  it('stores large blobs as loose files at blobs/<ab>/<sha256>, written once', async () => {
    const directory = storeDirectory();
    const storage = filesystemStorage({ directory, looseBlobMinBytes: 1024 });
    const bytes = Buffer.alloc(4096, 7);
    const hash = sha(bytes);
    await storage.putBlobs(key, [{ hash, bytes }]);
    const file = path.join(directory, 'blobs', hash.slice(0, 2), hash);
    const inode = fs.statSync(file).ino;
    await storage.putBlobs(key, [{ hash, bytes }]);
    expect(fs.statSync(file).ino).toBe(inode);
    expect(fs.readdirSync(path.dirname(file))).toEqual([hash]); // no temporary files left
  });

  /** A store holding one blob as a loose file, and that file's path. */
  async function storedLooseBlob() {
    const directory = storeDirectory();
    const storage = filesystemStorage({ directory, looseBlobMinBytes: 1 });
    const log = new SessionLog(storage, key);
    const bytes = Buffer.from('precious bytes');
    const hash = sha(bytes);
    await storage.putBlobs(key, [{ hash, bytes }]);
    return { directory, log, bytes, hash, file: path.join(directory, 'blobs', hash.slice(0, 2), hash) };
  }

  it('never appends to a log or pack through a link, nor into a FIFO: STORE_IO naming the file, and what a link leads to is unchanged', async () => {
    const directory = storeDirectory();
    const files = Array.from({ length: 40 }, (_, index) => Buffer.from(`// file ${index}\n${'const a = 1;\n'.repeat(50)}`));
    const writer = filesystemStorage({ directory, durability: 'none' });
    await writer.append(key, [scanned(files)], blobsOf(files));
    await writer.close();
    const packPath = path.join(directory, 'blobs', 'packs', key.projectKey, `${key.sessionId}.pack`);
    const logPath = (await fs.promises.readdir(path.join(directory, 'projects', key.projectKey))).map((name) => path.join(directory, 'projects', key.projectKey, name)).find((file) => file.endsWith('.jsonl'))!;
    const outside = path.join(storeDirectory(), 'outside.bin');
    const more = [Buffer.from('one more file\n')];
    for (const [target, link] of [
      [packPath, true],
      [logPath, true],
      [packPath, false],
    ] as const) {
      const original = fs.readFileSync(target);
      fs.writeFileSync(outside, 'bytes outside the store\n');
      fs.rmSync(target);
      if (link) fs.symlinkSync(outside, target);
      else execFileSync('mkfifo', [target]);
      const storage = filesystemStorage({ directory, durability: 'none' });
      const error = await storage.append(key, [changed([[0, more[0]!]])], blobsOf(more)).then(() => undefined, (caught: unknown) => caught);
      expect(error, target).toMatchObject({ code: 'STORE_IO', details: { path: target } });
      expect((error as Error).message).toContain(link ? 'is a symbolic link' : 'is not a regular file');
      if (target === packPath) expect(await storage.getBlob(key, sha(files[0]!)).then(() => 'read', (caught: { code?: string }) => caught.code)).toBe('STORE_IO');
      expect(fs.readFileSync(outside, 'utf8')).toBe('bytes outside the store\n');
      await storage.close();
      fs.rmSync(target);
      fs.writeFileSync(target, original);
    }
    const reader = filesystemStorage({ directory });
    for (const bytes of files) expect(Buffer.from((await reader.getBlob(key, sha(bytes)))!).equals(bytes)).toBe(true);
  });

  it('checks every blob against its hash on read, and never reads a blob through a link', async () => {
    const { directory, log, bytes, hash, file } = await storedLooseBlob();
    expect(await log.readBlob(hash)).toEqual({ ok: true, bytes });
    fs.writeFileSync(file, 'tampered bytes');
    expect(await log.readBlob(hash)).toEqual({ ok: false, reason: expect.stringContaining('no longer matches its hash') });
    fs.rmSync(file);
    fs.writeFileSync(path.join(directory, 'elsewhere'), bytes);
    fs.symlinkSync(path.join(directory, 'elsewhere'), file);
    expect(await log.readBlob(hash)).toEqual({ ok: false, reason: expect.stringContaining('symbolic link') });
    fs.rmSync(file);
    expect(await log.readBlob(hash)).toEqual({ ok: false, reason: expect.stringContaining('missing') });
  });

  it('reports a FIFO at a blob path as damage without waiting for a writer', async () => {
    const { log, hash, file } = await storedLooseBlob();
    fs.rmSync(file);
    execFileSync('mkfifo', [file]);

    expect(await log.readBlob(hash)).toEqual({ ok: false, reason: expect.stringContaining('not a regular file') });
  });

  it('a writer cuts off a torn pack entry left by a crash', async () => {
    const directory = storeDirectory();
    const storage = filesystemStorage({ directory, durability: 'none' });
    const first = Buffer.from('first blob');
    await storage.putBlobs(key, [{ hash: sha(first), bytes: first }]);
    await storage.close();
    const packPath = path.join(directory, 'blobs', 'packs', key.projectKey, `${key.sessionId}.pack`);
    const intact = fs.statSync(packPath).size;
    fs.appendFileSync(packPath, Buffer.from('RWPK\x01 half an entry'));
    const writer = filesystemStorage({ directory, durability: 'none' });
    const second = Buffer.from('second blob');
    await writer.putBlobs(key, [{ hash: sha(second), bytes: second }]);
    expect(fs.statSync(packPath).size).toBe(intact + 72 + second.length);
    await writer.close();
    const reader = filesystemStorage({ directory });
    expect(Buffer.from((await reader.getBlob(key, sha(second)))!).toString()).toBe('second blob');
  });

  it('compresses bulk backups in bundles, reads each back exactly, and deltas against them', async () => {
    const directory = storeDirectory();
    const storage = filesystemStorage({ directory, durability: 'none' });
    const files = Array.from({ length: 300 }, (_, index) => Buffer.from(`// file ${index}\n${'export const value = 1;\n'.repeat(100 + index)}`));
    const random = Buffer.from(Array.from({ length: 3000 }, (_, index) => (index * 7919 + 13) % 251)); // compresses poorly
    const compressedOnWorkers = bundlesCompressedOffMainThread();
    await storage.append(key, [scanned([...files, random])], blobsOf([...files, random]));
    // Compressed on the worker threads (from the sources, through the test loader), not by this one.
    expect(bundlesCompressedOffMainThread() - compressedOnWorkers).toBeGreaterThan(0);
    const packPath = path.join(directory, 'blobs', 'packs', key.projectKey, `${key.sessionId}.pack`);
    const raw = files.reduce((sum, bytes) => sum + bytes.length, 0);
    expect(fs.statSync(packPath).size).toBeLessThan(raw / 5);
    const edited = Buffer.concat([files[7]!, Buffer.from('one more line\n')]);
    await storage.append(key, [changed([[7, edited]])], blobsOf([edited]));
    await storage.close();

    const reader = filesystemStorage({ directory });
    for (const bytes of [...files, random, edited]) expect(Buffer.from((await reader.getBlob(key, sha(bytes)))!).equals(bytes)).toBe(true);
    // Cut inside the last entry: everything before it still reads.
    fs.truncateSync(packPath, fs.statSync(packPath).size - 5);
    const afterTear = filesystemStorage({ directory });
    expect(await afterTear.getBlob(key, sha(edited))).toBeNull();
    expect(Buffer.from((await afterTear.getBlob(key, sha(files[299]!)))!).equals(files[299]!)).toBe(true);
  });

  it('stores the previous version of a changed file apart from its bundle, so reading it needs nothing else of the bundle', async () => {
    const directory = storeDirectory();
    const storage = filesystemStorage({ directory, durability: 'none' });
    // The last member does not compress: taken out, it is stored as it is.
    const files = [...Array.from({ length: 40 }, (_, index) => Buffer.from(`// file ${index}\n${'export const value = 1;\n'.repeat(100 + index)}`)), randomBytes(3000)];
    await storage.append(key, [scanned(files)], blobsOf(files));
    const edited = Buffer.concat([files[7]!, Buffer.from('one more line\n')]);
    const editedNoise = Buffer.concat([files[40]!, Buffer.from('more')]);
    await storage.append(key, [changed([[7, edited], [40, editedNoise]])], blobsOf([edited, editedNoise]));
    await storage.close();

    // The first entry is the bundle of all 41.
    const { reader, readsExactly } = damageFirstBundle(directory, files.length);
    expect(await readsExactly(files[8]!)).toBe(false);
    for (const bytes of [files[7]!, edited, files[40]!, editedNoise]) expect(await readsExactly(bytes)).toBe(true);
    await reader.close();
  });

  it('stores the last version of a file recorded deleted apart from its bundle, so reading it needs nothing else of the bundle', async () => {
    const directory = storeDirectory();
    const storage = filesystemStorage({ directory, durability: 'none' });
    const files = Array.from({ length: 30 }, (_, index) => Buffer.from(`// file ${index}\n${'export const deleted = true;\n'.repeat(80 + index)}`));
    await storage.append(key, [scanned(files)], blobsOf(files));
    // A scan found two files deleted: a rewind would recreate them from their last content.
    await storage.append(key, [changed([[4, undefined], [21, undefined]])]);
    await storage.close();

    const { reader, readsExactly } = damageFirstBundle(directory, files.length);
    expect(await readsExactly(files[5]!)).toBe(false);
    expect(await readsExactly(files[4]!)).toBe(true);
    expect(await readsExactly(files[21]!)).toBe(true);
    await reader.close();
  });

  it('an append whose write fails stores none of its blobs, and every blob stored before still reads (one being taken out of its bundle too)', async () => {
    const directory = storeDirectory();
    const storage = filesystemStorage({ directory, durability: 'none' });
    const files = Array.from({ length: 40 }, (_, index) => Buffer.from(`// file ${index}\n${'export const value = 1;\n'.repeat(100 + index)}`));
    await storage.append(key, [scanned(files)], blobsOf(files));
    const packPath = path.join(directory, 'blobs', 'packs', key.projectKey, `${key.sessionId}.pack`);
    const sizeBefore = fs.statSync(packPath).size;
    const edited = Buffer.concat([files[7]!, Buffer.from('one more line\n')]);
    const fresh = Buffer.from('a new file\n'.repeat(200));
    const blobs = blobsOf([edited, fresh]);
    const record = changed([[7, edited], [99, fresh]]);
    const writev = fs.writevSync;
    fs.writevSync = () => {
      throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    };
    try {
      await expect(storage.append(key, [record], blobs)).rejects.toThrow();
    } finally {
      fs.writevSync = writev;
    }
    expect(fs.statSync(packPath).size).toBe(sizeBefore);
    expect(await storage.getBlob(key, sha(edited))).toBeNull();
    expect(await storage.getBlob(key, sha(fresh))).toBeNull();
    for (const bytes of files) expect(Buffer.from((await storage.getBlob(key, sha(bytes)))!).equals(bytes)).toBe(true);

    // The same append, tried again, stores them all.
    await storage.append(key, [record], blobs);
    await storage.close();
    const reader = filesystemStorage({ directory });
    for (const bytes of [...files, edited, fresh]) expect(Buffer.from((await reader.getBlob(key, sha(bytes)))!).equals(bytes)).toBe(true);
    await reader.close();
  });

  it('reads any member of a bundle exactly, in any order, however unevenly its members compress', async () => {
    // A member is read by inflating the bundle up to it; an incompressible start makes that guess fall short.
    const directory = storeDirectory();
    const storage = filesystemStorage({ directory, durability: 'none' });
    const noise = randomBytes(40_000);
    const members = [noise, ...Array.from({ length: 20 }, (_, index) => Buffer.from(`// module ${index}\n${'const x = 1;\n'.repeat(200 + index)}`)), noise.subarray(0, 9_000)];
    await storage.putBlobs(key, blobsOf(members));
    await storage.close();
    const orders = [members.map((_, index) => index), members.map((_, index) => members.length - 1 - index), [10, 0, 21, 3, 20, 1]];
    for (const order of orders) {
      const reader = filesystemStorage({ directory });
      for (const index of order) expect(Buffer.from((await reader.getBlob(key, sha(members[index]!)))!).equals(members[index]!), `member ${index}`).toBe(true);
      await reader.close();
    }
  });

  it('reads members of many bundles exactly when the reads go back and forth between them, past what it keeps inflated', async () => {
    const directory = storeDirectory();
    const storage = filesystemStorage({ directory, durability: 'none' });
    // 48 members of about 40 KB: 16 bundles of 128 KiB, about 2.5 MiB inflated, more than the 2 MiB kept in memory.
    const members = Array.from({ length: 48 }, (_, index) =>
      Buffer.from(Array.from({ length: 1000 }, (_, line) => `// member ${index}, line ${line}: ${(index * 7919 + line * 104729) % 1000003}\n`).join('')),
    );
    await storage.putBlobs(key, blobsOf(members));
    await storage.close();
    let reader = filesystemStorage({ directory });
    // Each bundle's members visited in rising order, interleaved with the other bundles' (as a rewind's path order
    // meets the walk's), then backwards, then through a new reader (nothing kept inflated) and the same again.
    const stride = Array.from({ length: 48 }, (_, step) => (step % 16) * 3 + Math.floor(step / 16));
    const passes: Array<number[] | 'reopen'> = [stride, [...stride].reverse(), 'reopen', stride];
    for (const order of passes) {
      if (order === 'reopen') {
        await reader.close();
        reader = filesystemStorage({ directory });
        continue;
      }
      for (const index of order) expect(Buffer.from((await reader.getBlob(key, sha(members[index]!)))!).equals(members[index]!), `member ${index}`).toBe(true);
    }
    await reader.close();
  });
});

describe('filesystem storage: options', () => {
  it('lockLeaseMs must be a number of milliseconds from 1 to a week: anything else is INVALID_OPTIONS, naming the value', () => {
    for (const lockLeaseMs of [0, -5, Number.NaN, 8 * 24 * 60 * 60 * 1000, 1e300]) {
      expect(() => filesystemStorage({ directory: storeDirectory(), lockLeaseMs }), String(lockLeaseMs)).toThrow(
        expect.objectContaining({ code: 'INVALID_OPTIONS', message: `lockLeaseMs must be a number of milliseconds from 1 to 604800000 (a week); got ${lockLeaseMs}.` }),
      );
    }
    expect(() => filesystemStorage({ directory: storeDirectory(), lockLeaseMs: 7 * 24 * 60 * 60 * 1000 })).not.toThrow();
  });
});

describe('filesystem storage: loose blobs and their collection', () => {
  const largeBlob = () => {
    const bytes = randomBytes(1024 * 1024 + 3);
    return { hash: sha(bytes), bytes };
  };
  // Whole seconds: an mtime read back is then exactly the one set.
  const longAgo = new Date(Math.floor((Date.now() - 40 * 24 * 60 * 60 * 1000) / 1000) * 1000);

  it('a blob a killed clean-up left aside is still read there, and the next collection puts it back', async () => {
    const directory = storeDirectory();
    const storage = filesystemStorage({ directory, durability: 'none' });
    const blob = largeBlob();
    await storage.putBlobs(key, [blob]);
    const file = path.join(directory, 'blobs', blob.hash.slice(0, 2), blob.hash);
    const aside = path.join(path.dirname(file), `.${blob.hash}.0123456789ab.gc`);
    fs.renameSync(file, aside);

    expect(Buffer.from((await storage.getBlob(key, blob.hash))!).equals(blob.bytes)).toBe(true);
    expect(await storage.hasBlobs(key, [blob.hash])).toEqual(new Set([blob.hash]));
    await storage.collectGarbage(new Set([blob.hash]), { graceMs: 0 });

    expect(fs.readFileSync(file).equals(blob.bytes)).toBe(true);
    expect(fs.existsSync(aside)).toBe(false);
    await storage.close();
  });

  it('reusing a loose blob marks it as just used, never through a link', async () => {
    const directory = storeDirectory();
    const storage = filesystemStorage({ directory, durability: 'none' });
    const blob = largeBlob();
    await storage.putBlobs(key, [blob]);
    const file = path.join(directory, 'blobs', blob.hash.slice(0, 2), blob.hash);
    fs.utimesSync(file, longAgo, longAgo);

    await storage.putBlobs({ ...key, sessionId: '0b5e3f4a-1c2d-4e5f-8a9b-0c1d2e3f4a5b' }, [blob]);

    expect(fs.statSync(file).mtimeMs).toBeGreaterThan(longAgo.getTime());
    expect((await storage.collectGarbage(new Set(), { graceMs: 60 * 60 * 1000 })).blobsRemoved).toBe(0);
    const outside = path.join(storeDirectory(), 'outside.bin');
    fs.writeFileSync(outside, blob.bytes);
    fs.utimesSync(outside, longAgo, longAgo);
    fs.rmSync(file);
    fs.symlinkSync(outside, file);
    await expect(storage.putBlobs(key, [blob])).rejects.toMatchObject({ code: 'STORE_IO' });
    expect(fs.statSync(outside).mtimeMs).toBe(longAgo.getTime());
    await storage.close();
  });

  it('collectGarbage never enters a linked folder of the blob store, nor removes what a link leads to', async () => {
    const directory = storeDirectory();
    const storage = filesystemStorage({ directory, durability: 'none' });
    const stored = largeBlob();
    await storage.putBlobs(key, [stored]);
    // A fan-out folder the stored blob did not create (its random hash has a 1 in 256 chance of starting with any).
    const linked = stored.hash.startsWith('cd') ? 'ef' : 'cd';
    const outside = storeDirectory();
    const victims = [path.join(outside, linked.padEnd(64, '0')), path.join(outside, `${key.sessionId}.pack`)];
    for (const victim of victims) {
      fs.writeFileSync(victim, 'not the store’s');
      fs.utimesSync(victim, longAgo, longAgo);
    }
    fs.symlinkSync(outside, path.join(directory, 'blobs', linked));
    fs.mkdirSync(path.join(directory, 'blobs', 'packs'), { recursive: true });
    fs.symlinkSync(outside, path.join(directory, 'blobs', 'packs', '-linked-project'));
    fs.symlinkSync(victims[0]!, path.join(directory, 'blobs', 'packs', `${randomUUID()}.pack`));

    await storage.collectGarbage(new Set(), { graceMs: 0 });

    for (const victim of victims) expect(fs.readFileSync(victim, 'utf8')).toBe('not the store’s');
    await storage.close();
  });
});
