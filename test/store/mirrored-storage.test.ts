import { createHash, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { RewindableError } from '../../src/index.js';
import { memoryStorage, type MemoryStorage } from '../../src/store/memory/memory-storage.js';
import { MirrorFlushError, mirroredStorage, type MirrorEvent, type MirroredStorageOptions } from '../../src/store/mirror/mirrored-storage.js';
import type { BlobWrite, SessionKey, StoreEntry } from '../../src/store/storage-adapter.js';
import { faultyStorage, runStorageConformance } from '../../src/testing/index.js';
import { tempProject } from '../helpers/temp-project.js';

const fastRetry = { initialDelayMs: 5, maxDelayMs: 40 };

runStorageConformance({
  name: 'mirror (memory local, memory remote)',
  create: () => mirroredStorage({ local: memoryStorage(), remote: memoryStorage(), retry: fastRetry }),
  reopen: (storage) => {
    const { local, remote } = storage as ReturnType<typeof mirroredStorage>;
    return mirroredStorage({ local, remote, retry: fastRetry });
  },
  describe,
  it,
});

function blobOf(text: string): BlobWrite {
  const bytes = Buffer.from(text);
  return { hash: createHash('sha256').update(bytes).digest('hex'), bytes };
}

const newKey = (): SessionKey => ({ projectKey: '-work-project', sessionId: randomUUID() });

/** A mirror over memory stores whose remote can be taken down; events are recorded. */
function setup(options: Partial<MirroredStorageOptions> = {}) {
  const local = memoryStorage();
  const remoteStore = memoryStorage();
  const remote = faultyStorage(remoteStore);
  const events: MirrorEvent[] = [];
  const storage = mirroredStorage({ local, remote, retry: fastRetry, onEvent: (event) => events.push(event), ...options });
  return { local, remote, remoteStore, storage, events };
}

/** What a store holds for one session: its entries and the bytes of every blob they name. */
function contents(store: MemoryStorage, key: SessionKey) {
  const snapshot = store.snapshot();
  const session = snapshot.sessions.find((candidate) => candidate.sessionId === key.sessionId);
  return { entries: session?.entries ?? null, blobs: snapshot.blobs };
}

describe('mirroredStorage', () => {
  it('copies every entry and blob to the remote, in order; flush() resolves once the remote has them', async () => {
    const { local, remoteStore, storage } = setup({ maxBatchEntries: 3 });
    const key = newKey();
    const expected: StoreEntry[] = [];
    for (let turn = 0; turn < 20; turn += 1) {
      const entries = [{ type: 'turn', turn }, { type: 'note', turn }];
      expected.push(...entries);
      await storage.append(key, entries, [blobOf(`backup ${turn}`)]);
    }
    await storage.flush();
    expect(contents(remoteStore, key).entries).toEqual(expected);
    expect(contents(remoteStore, key).entries).toEqual(contents(local, key).entries);
    for (let turn = 0; turn < 20; turn += 1) expect(Buffer.from(remoteStore.snapshot().blobs.get(blobOf(`backup ${turn}`).hash)!).toString()).toBe(`backup ${turn}`);
    expect(storage.status()).toMatchObject({ caughtUp: true, pendingEntries: 0, pendingBlobs: 0 });
  });

  it('writes return from the local store while the remote is down; nothing is lost or duplicated when it returns', async () => {
    const { local, remote, remoteStore, storage, events } = setup();
    const key = newKey();
    await storage.append(key, [{ type: 'before the outage' }], [blobOf('first')]);
    await storage.flush();
    remote.down = true;
    for (let index = 0; index < 10; index += 1) await storage.append(key, [{ type: 'during the outage', index }], [blobOf(`during ${index}`)]);
    await storage.putBlobs(key, [blobOf('put on its own')]);
    expect(contents(local, key).entries).toHaveLength(11);
    expect(contents(remoteStore, key).entries).toHaveLength(1);
    await expect.poll(() => events.filter((event) => event.type === 'mirror-retry').length).toBeGreaterThan(2);
    expect(storage.status()).toMatchObject({ caughtUp: false, pendingEntries: 10 });

    remote.down = false;
    await storage.flush();
    expect(contents(remoteStore, key).entries).toEqual(contents(local, key).entries);
    for (const text of ['first', 'during 0', 'during 9', 'put on its own']) expect(remoteStore.snapshot().blobs.has(blobOf(text).hash)).toBe(true);
  });

  it('an append the remote applied but never acknowledged is not sent twice', async () => {
    const { local, remote, remoteStore, storage } = setup();
    const key = newKey();
    remote.loseAcknowledgements(2);
    await storage.append(key, [{ type: 'one' }, { type: 'two' }]);
    await storage.append(key, [{ type: 'three' }]);
    await storage.flush();
    expect(contents(remoteStore, key).entries).toEqual([{ type: 'one' }, { type: 'two' }, { type: 'three' }]);
    expect(contents(remoteStore, key).entries).toEqual(contents(local, key).entries);
  });

  it('flush() rejects with a MirrorFlushError after its bound, and resolves once the remote is back', async () => {
    const { remote, storage } = setup();
    const key = newKey();
    remote.down = true;
    await storage.append(key, [{ type: 'pending' }], [blobOf('pending blob')]);
    const failure = await storage.flush({ timeoutMs: 100 }).catch((error: unknown) => error);
    expect(MirrorFlushError.isInstance(failure)).toBe(true);
    expect(RewindableError.isInstance(failure) && failure.code).toBe('MIRROR_FLUSH_TIMEOUT');
    expect((failure as MirrorFlushError).details).toMatchObject({ pendingEntries: 1, pendingBlobs: 1, sessions: [key.sessionId] });
    expect((failure as Error).message).toMatch(/did not catch up within 100 ms.*safe in the local store/);
    remote.down = false;
    await storage.flush();
  });

  it('waits between attempts grow exponentially up to the cap', async () => {
    const { remote, storage, events } = setup({ retry: { initialDelayMs: 4, factor: 2, maxDelayMs: 50 } });
    remote.down = true;
    await storage.append(newKey(), [{ type: 'pending' }]);
    await expect.poll(() => events.filter((event) => event.type === 'mirror-retry').length, { timeout: 5000 }).toBeGreaterThanOrEqual(7);
    const delays = events.flatMap((event) => (event.type === 'mirror-retry' ? [event.delayMs] : []));
    for (const delay of delays) expect(delay).toBeLessThanOrEqual(50);
    // Below the cap each wait is at least 1.6 times the one before (doubling, ±20% spread).
    for (let index = 1; index < 4; index += 1) expect(delays[index]!).toBeGreaterThan(delays[index - 1]!);
    expect(delays.slice(5).every((delay) => delay >= 40)).toBe(true);
    remote.down = false;
    await storage.flush();
  });

  it('load(key) on a machine without a local copy reads the remote; the next write continues the same log locally', async () => {
    const first = setup();
    const key = newKey();
    await first.storage.append(key, [{ type: 'written elsewhere', n: 1 }, { type: 'written elsewhere', n: 2 }]);
    await first.storage.flush();

    const local = memoryStorage();
    const storage = mirroredStorage({ local, remote: first.remoteStore, retry: fastRetry });
    expect(await storage.load(key)).toEqual([{ type: 'written elsewhere', n: 1 }, { type: 'written elsewhere', n: 2 }]);
    expect(await local.load(key)).toBeNull(); // reading copies nothing down
    await storage.putBlobs(key, [blobOf('stored before the first entry, as a large checkpoint does')]);
    await storage.append(key, [{ type: 'written here' }]);
    expect(await local.load(key)).toEqual([{ type: 'written elsewhere', n: 1 }, { type: 'written elsewhere', n: 2 }, { type: 'written here' }]);
    await storage.flush();
    expect(await first.remoteStore.load(key)).toEqual(await local.load(key));
    expect(await first.remoteStore.hasBlobs(key, [blobOf('stored before the first entry, as a large checkpoint does').hash])).toHaveProperty('size', 1);
  });

  it('a write that could not bring a stale local copy up to date is caught as a divergence, never copied', async () => {
    const remoteStore = memoryStorage();
    const key = newKey();
    await remoteStore.append(key, [{ type: 'one' }, { type: 'two, written elsewhere' }]);
    const local = memoryStorage();
    await local.append(key, [{ type: 'one' }]);
    const remote = faultyStorage(remoteStore);
    const events: MirrorEvent[] = [];
    const storage = mirroredStorage({ local, remote, retry: fastRetry, onEvent: (event) => events.push(event) });
    remote.down = true;
    expect(await storage.load(key)).toEqual([{ type: 'one' }]); // local first while the remote is down
    await storage.append(key, [{ type: 'two, written here' }]);
    remote.down = false;
    await expect(storage.flush()).rejects.toMatchObject({ code: 'SESSION_DIVERGED', details: { reason: 'diverged', divergedAt: 2 } });
    expect(events.some((event) => event.type === 'mirror-diverge')).toBe(true);
    expect(await remoteStore.load(key)).toEqual([{ type: 'one' }, { type: 'two, written elsewhere' }]);
  });

  it('getBlob(key, hash) fetches a blob from the remote and keeps it locally only when its hash checks out', async () => {
    const remoteStore = memoryStorage();
    const local = memoryStorage();
    const storage = mirroredStorage({ local, remote: remoteStore });
    const key = newKey();
    const good = blobOf('good bytes');
    await remoteStore.putBlobs(key, [good, { hash: blobOf('claimed').hash, bytes: Buffer.from('tampered') }]);
    expect(Buffer.from((await storage.getBlob(key, good.hash))!).toString()).toBe('good bytes');
    expect(await local.hasBlobs(key, [good.hash])).toEqual(new Set([good.hash]));
    expect(Buffer.from((await storage.getBlob(key, blobOf('claimed').hash))!).toString()).toBe('tampered');
    expect(await local.hasBlobs(key, [blobOf('claimed').hash])).toEqual(new Set());
    expect(await storage.hasBlobs(key, [good.hash, blobOf('claimed').hash, blobOf('nowhere').hash])).toEqual(new Set([good.hash, blobOf('claimed').hash]));
  });

  it('load(key) of a session whose remote copy fell behind (a process died before it caught up) sends the rest', async () => {
    const local = memoryStorage();
    const remoteStore = memoryStorage();
    const key = newKey();
    const entries = Array.from({ length: 6 }, (_, index) => ({ type: 'step', index }));
    await local.append(key, entries, [blobOf('only local so far')]);
    await remoteStore.append(key, entries.slice(0, 2));
    const storage = mirroredStorage({ local, remote: remoteStore, retry: fastRetry });
    // A record naming the blob, as the manager writes it, so the mirror knows to send the blob along.
    const hash = blobOf('only local so far').hash;
    await local.append(key, [{ type: 'track', checkpointId: randomUUID(), path: 'a.txt', state: { kind: 'file', sha256: hash, size: 17, mode: 0o644 }, at: new Date().toISOString() }]);
    expect(await storage.load(key)).toHaveLength(7);
    await storage.flush();
    expect(await remoteStore.load(key)).toEqual(await local.load(key));
    expect(await remoteStore.hasBlobs(key, [hash])).toEqual(new Set([hash]));
  });

  it('copies that diverged are reported, never merged', async () => {
    const local = memoryStorage();
    const remoteStore = memoryStorage();
    const key = newKey();
    await local.append(key, [{ type: 'common' }, { type: 'written here' }]);
    await remoteStore.append(key, [{ type: 'common' }, { type: 'written elsewhere' }]);
    const storage = mirroredStorage({ local, remote: remoteStore });
    await expect(storage.load(key)).rejects.toMatchObject({ code: 'SESSION_DIVERGED', message: expect.stringMatching(/differs between the local store and the remote from entry 2/) });
    expect(await remoteStore.load(key)).toEqual([{ type: 'common' }, { type: 'written elsewhere' }]);
    expect(await local.load(key)).toEqual([{ type: 'common' }, { type: 'written here' }]);
  });

  it('while the remote is down, a local session opens; a session with no local copy is refused with a typed error', async () => {
    const { local, remote, storage } = setup();
    const key = newKey();
    await local.append(key, [{ type: 'local' }]);
    remote.down = true;
    expect(await storage.load(key)).toEqual([{ type: 'local' }]);
    await expect(storage.load(newKey())).rejects.toMatchObject({ code: 'STORE_IO', message: expect.stringMatching(/no copy on this machine/) });
    remote.down = false;
  });

  it('lock(key) takes the remote lock too: a session held through the remote is refused, an unreachable remote does not block', async () => {
    const remoteStore = memoryStorage();
    const remote = faultyStorage(remoteStore);
    const storage = mirroredStorage({ local: memoryStorage(), remote });
    const key = newKey();
    const elsewhere = await remoteStore.lock(key); // another machine holds it
    await expect(storage.lock!(key)).rejects.toMatchObject({ code: 'SESSION_LOCKED' });
    await elsewhere.release();
    const held = await storage.lock!(key);
    await expect(remoteStore.lock(key)).rejects.toMatchObject({ code: 'SESSION_LOCKED' });
    await held.release();
    remote.down = true;
    const offline = await storage.lock!(newKey());
    await offline.release();
  });

  it('delete(key) removes the session from both stores', async () => {
    const { local, remoteStore, storage } = setup();
    const key = newKey();
    await storage.append(key, [{ type: 'doomed' }], [blobOf('doomed blob')]);
    await storage.flush();
    await storage.delete(key);
    expect(await local.load(key)).toBeNull();
    expect(await remoteStore.load(key)).toBeNull();
    expect(await remoteStore.hasBlobs(key, [blobOf('doomed blob').hash])).toEqual(new Set());
  });

  it('a CheckpointManager keeps checkpointing, tracking and rewinding while the remote is down, and the remote catches up after', async () => {
    const project = tempProject();
    const { local, remote, remoteStore, storage } = setup();
    project.write('app.ts', 'one\n');
    const manager = await project.open({ storage });
    const first = await manager.checkpoint(randomUUID());
    await manager.trackEdit('app.ts');
    project.write('app.ts', 'two\n');
    remote.down = true;
    const second = await manager.checkpoint(randomUUID());
    await manager.trackEdit('app.ts');
    project.write('app.ts', 'three\n');
    await manager.trackEdit('new.ts');
    project.write('new.ts', 'new\n');
    await manager.rewindFiles(second);
    expect(project.read('app.ts').toString()).toBe('two\n');
    await manager.rewindFiles(first);
    expect(project.read('app.ts').toString()).toBe('one\n');
    expect(project.exists('new.ts')).toBe(false);
    remote.down = false;
    await storage.flush();
    const key = { projectKey: project.root.replace(/[^A-Za-z0-9]/g, '-'), sessionId: manager.sessionId };
    expect(await remoteStore.load(key)).toEqual(await local.load(key));
    await manager.close();
  });
});
