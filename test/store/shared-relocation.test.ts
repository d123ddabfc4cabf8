import { createHash, randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CheckpointManager, encodeProjectKey, filesystemStorage, type SessionKey, type StorageAdapter } from '../../src/index.js';
import { memoryStorage } from '../../src/store/memory/memory-storage.js';
import { mirroredStorage } from '../../src/store/mirror/mirrored-storage.js';
import { blobsNamedByEntries } from '../../src/store/mirror/log-comparison.js';
import { postgresStorage } from '../../src/store/postgres/postgres-storage.js';
import { fastTestSettings, startPostgres, type PostgresServer } from '../helpers/postgres-server.js';
import { startSessionProcess } from './helpers/session-process.js';

/**
 * A project moved on a store shared by machines: resuming from the new
 * directory must carry every backup over, and must never take a session away
 * from a machine that still has the old directory.
 */

let server: PostgresServer;
let admin: pg.Pool;
const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'rewindable-relocation-')));
beforeAll(async () => {
  server = await startPostgres({ settings: fastTestSettings });
  admin = new pg.Pool({ connectionString: server.connectionString });
});
afterAll(async () => {
  await admin?.end();
  await server?.destroy();
  fs.rmSync(base, { recursive: true, force: true });
});
const previousHost = process.env.REWINDABLE_HOST;
afterEach(() => {
  if (previousHost === undefined) delete process.env.REWINDABLE_HOST;
  else process.env.REWINDABLE_HOST = previousHost;
});

const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** The hashes the database holds for `key`, with bytes that match them. */
async function heldInDatabase(key: SessionKey): Promise<Set<string>> {
  const rows = await admin.query<{ hash: string; bytes: Buffer }>(
    `SELECT b.hash, b.bytes FROM rewindable_session_blobs held JOIN rewindable_blobs b ON b.hash = held.hash
     WHERE held.project_key = $1 AND held.session_id = $2`,
    [key.projectKey, key.sessionId],
  );
  return new Set(rows.rows.filter((row) => sha(row.bytes) === row.hash).map((row) => row.hash));
}

interface SharedStore {
  name: string;
  /** The store as the machine of that name opens it (a fresh adapter over the shared data). */
  machine(name: string): StorageAdapter;
  /** The backups the shared data holds for `key`, read behind the adapter's back; undefined when there is no database. */
  database?(key: SessionKey): Promise<Set<string>>;
}

const sharedMemory = memoryStorage();
const stores: SharedStore[] = [
  { name: 'memory', machine: () => sharedMemory },
  { name: 'postgres', machine: () => postgresStorage({ connection: server.connectionString }), database: heldInDatabase },
  {
    name: 'mirror (filesystem local, postgres remote)',
    machine: (name) =>
      mirroredStorage({
        local: filesystemStorage({ directory: path.join(base, `store-of-${name}`), durability: 'none' }),
        remote: postgresStorage({ connection: server.connectionString }),
        retry: { initialDelayMs: 20, maxDelayMs: 200 },
      }),
    database: heldInDatabase,
  },
];

/** Six files of every kind a backup must keep exactly: text, nested, binary with NULs, empty, executable, over 1 MiB. */
function originalFiles(): Record<string, { bytes: Buffer; mode: number }> {
  const binary = randomBytes(5000);
  binary.fill(0, 100, 200);
  return {
    'README.md': { bytes: Buffer.from('# project\n'), mode: 0o644 },
    'src/deep/nested/index.ts': { bytes: Buffer.from('export const answer = 41;\n'), mode: 0o644 },
    'assets/logo.bin': { bytes: binary, mode: 0o644 },
    'empty.txt': { bytes: Buffer.alloc(0), mode: 0o600 },
    'bin/run.sh': { bytes: Buffer.from('#!/bin/sh\necho run\n'), mode: 0o755 },
    'data/large.bin': { bytes: randomBytes(1024 * 1024 + 4096), mode: 0o644 },
  };
}

type Files = ReturnType<typeof originalFiles>;

function writeFiles(root: string, files: Files): void {
  for (const [relative, file] of Object.entries(files)) {
    const target = path.join(root, relative);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, file.bytes);
    fs.chmodSync(target, file.mode);
  }
}

function expectFiles(root: string, files: Files): void {
  for (const [relative, file] of Object.entries(files)) {
    const target = path.join(root, relative);
    expect(fs.readFileSync(target).equals(file.bytes), `${relative} has its original bytes`).toBe(true);
    expect(fs.statSync(target).mode & 0o7777, `${relative} has its original mode`).toBe(file.mode);
  }
}

/** A session whose agent changed all six files (one deleted) over two turns; returns the first turn's checkpoint. */
async function agentSession(storage: StorageAdapter, root: string, files: Files): Promise<{ sessionId: string; first: string }> {
  writeFiles(root, files);
  const manager = await CheckpointManager.open({ cwd: root, storage, durability: 'none' });
  const first = await manager.checkpoint(randomUUID());
  for (const relative of Object.keys(files)) {
    await manager.trackEdit(relative);
    if (relative === 'README.md') fs.rmSync(path.join(root, relative));
    else fs.writeFileSync(path.join(root, relative), `changed by the agent: ${relative}\n`);
  }
  await manager.checkpoint(randomUUID());
  await manager.trackEdit('src/deep/nested/index.ts');
  fs.writeFileSync(path.join(root, 'src/deep/nested/index.ts'), 'changed again\n');
  await manager.close();
  return { sessionId: manager.sessionId, first };
}

/** Resumes the session at `root` through `storage`, rewinds it to `first`, and closes both. */
async function resumeAndRewind(storage: StorageAdapter, root: string, sessionId: string, first: string): Promise<void> {
  const manager = await CheckpointManager.open({ cwd: root, storage, resume: sessionId, durability: 'none' });
  try {
    const rewound = await manager.rewindFiles(first);
    expect(rewound).toMatchObject({ canRewind: true, skippedLinks: 0 });
  } finally {
    await manager.close();
    await storage.close?.();
  }
}

const keyOf = (root: string, sessionId: string): SessionKey => ({ projectKey: encodeProjectKey(root), sessionId });
const backupHashes = (files: Files) => Object.values(files).map((file) => sha(file.bytes));

describe.each(stores)('a moved project on a shared store: $name', (store) => {
  it('a session of six files resumed from the moved directory rewinds all six to their exact bytes, and the store keeps every backup', async () => {
    const directory = fs.mkdtempSync(path.join(base, 'moved-'));
    const oldRoot = path.join(directory, 'project');
    const newRoot = path.join(directory, 'project-moved');
    const files = originalFiles();
    const writer = store.machine('this');
    const { sessionId, first } = await agentSession(writer, oldRoot, files);
    await writer.close?.();

    fs.renameSync(oldRoot, newRoot);
    await resumeAndRewind(store.machine('this'), newRoot, sessionId, first);
    expectFiles(newRoot, files);

    const reader = store.machine('this');
    try {
      expect(await reader.load(keyOf(oldRoot, sessionId))).toBeNull(); // moved, not copied: this machine's session
      expect(await reader.hasBlobs(keyOf(newRoot, sessionId), backupHashes(files))).toEqual(new Set(backupHashes(files)));
      for (const file of Object.values(files)) expect(Buffer.from((await reader.getBlob(keyOf(newRoot, sessionId), sha(file.bytes)))!).equals(file.bytes)).toBe(true);
    } finally {
      await reader.close?.();
    }
    if (store.database !== undefined) {
      const held = await store.database(keyOf(newRoot, sessionId));
      for (const hash of backupHashes(files)) expect(held.has(hash), `the database holds ${hash}`).toBe(true);
    }
  });

  it('a session another machine recorded is copied, not moved: that machine keeps its session, and a later move here follows the copy', async () => {
    const directory = fs.mkdtempSync(path.join(base, 'hosts-'));
    const rootOnA = path.join(directory, 'project');
    const rootOnB = path.join(directory, 'checkout-b');
    const laterOnB = path.join(directory, 'checkout-b-moved');
    const diskOfA = path.join(directory, 'disk-of-a');
    const files = originalFiles();

    process.env.REWINDABLE_HOST = 'machine-a';
    const machineA = store.machine('a');
    const { sessionId, first } = await agentSession(machineA, rootOnA, files);
    await machineA.close?.();
    const entriesOfA = await readLog(store.machine('a'), keyOf(rootOnA, sessionId));
    // Both machines see one filesystem here: put A's directory aside, so that it is missing for B.
    fs.cpSync(rootOnA, diskOfA, { recursive: true });
    fs.renameSync(rootOnA, rootOnB);

    process.env.REWINDABLE_HOST = 'machine-b';
    await resumeAndRewind(store.machine('b'), rootOnB, sessionId, first);
    expectFiles(rootOnB, files);
    expect(await readLog(store.machine('b'), keyOf(rootOnA, sessionId))).toEqual(entriesOfA);
    const copied = await readLog(store.machine('b'), keyOf(rootOnB, sessionId));
    expect(copied.slice(0, entriesOfA.length)).toEqual(entriesOfA);
    expect(copied[entriesOfA.length]).toMatchObject({ type: 'project-moved', from: rootOnA, to: rootOnB, host: 'machine-b', copy: true });

    // B moves its checkout again: its own copy is followed (and moved), A's original is left alone.
    fs.renameSync(rootOnB, laterOnB);
    await resumeAndRewind(store.machine('b'), laterOnB, sessionId, first);
    expectFiles(laterOnB, files);
    const followed = await readLog(store.machine('b'), keyOf(laterOnB, sessionId));
    expect(followed.slice(0, copied.length)).toEqual(copied); // with the rewind B made before this move
    expect(followed.filter((entry) => entry.type === 'project-moved')).toEqual([
      expect.objectContaining({ from: rootOnA, to: rootOnB, copy: true }),
      expect.not.objectContaining({ copy: true }),
    ]);
    expect(await readLog(store.machine('b'), keyOf(rootOnB, sessionId), { missing: true })).toEqual([]);
    if (store.database !== undefined) {
      const held = await store.database(keyOf(laterOnB, sessionId));
      for (const hash of backupHashes(files)) expect(held.has(hash), `B's copy holds ${hash}`).toBe(true);
    }

    // Machine A, where the directory never went away, still has its session and rewinds it.
    fs.renameSync(diskOfA, rootOnA);
    process.env.REWINDABLE_HOST = 'machine-a';
    expect(await readLog(store.machine('a'), keyOf(rootOnA, sessionId))).toEqual(entriesOfA);
    await resumeAndRewind(store.machine('a'), rootOnA, sessionId, first);
    expectFiles(rootOnA, files);
  });
});

/**
 * The adapter, paused once at the copy's first look-up under `key` while
 * `meanwhile` runs: the moment when, in the race, the other machine writes.
 */
function pausedAtFirstLookup(storage: StorageAdapter, key: SessionKey, meanwhile: () => Promise<void>): StorageAdapter {
  let paused = false;
  return {
    ...storage,
    async hasBlobs(asked, hashes) {
      if (!paused && asked.projectKey === key.projectKey && asked.sessionId === key.sessionId) {
        paused = true;
        await meanwhile();
      }
      return storage.hasBlobs(asked, hashes);
    },
  };
}

describe('a session of another machine copied while that machine writes it: postgres', () => {
  it('the copy carries exactly the entries whose backups it copied, and rewinds every file once the original is deleted', async () => {
    const directory = fs.mkdtempSync(path.join(base, 'race-'));
    const rootOnB = path.join(directory, 'project');
    const rootHere = path.join(directory, 'project-here');
    const asideOnB = path.join(directory, 'disk-of-b');
    fs.mkdirSync(rootOnB);
    fs.mkdirSync(rootHere);
    for (const name of ['one.txt', 'two.txt', 'late.txt']) fs.writeFileSync(path.join(rootOnB, name), `${name}: original\n`);
    process.env.REWINDABLE_HOST = 'machine-b';
    const machineB = startSessionProcess({ cwd: rootOnB, storage: { kind: 'postgres', connection: server.connectionString } });
    process.env.REWINDABLE_HOST = 'machine-a';
    const storage = postgresStorage({ connection: server.connectionString });
    try {
      const { opened: sessionId } = (await machineB.send({ do: 'open' })) as { opened: string };
      const first = randomUUID();
      await machineB.send({ do: 'checkpoint', id: first });
      for (const name of ['one.txt', 'two.txt']) expect(await machineB.send({ do: 'edit', path: name, content: `${name}: agent\n` })).toEqual({ edited: name });
      // Both machines see one filesystem here: B's directory is put aside while this machine looks for it.
      fs.renameSync(rootOnB, asideOnB);
      const copyKey = keyOf(rootHere, sessionId);
      const copying = pausedAtFirstLookup(storage, copyKey, async () => {
        fs.renameSync(asideOnB, rootOnB);
        expect(await machineB.send({ do: 'edit', path: 'late.txt', content: 'late.txt: agent\n' })).toEqual({ edited: 'late.txt' });
        expect(await machineB.send({ do: 'checkpoint', id: randomUUID() })).toMatchObject({ checkpoint: expect.any(String) });
      });
      const copy = await CheckpointManager.open({ cwd: rootHere, storage: copying, resume: sessionId, durability: 'none' });
      await copy.close();

      const named = blobsNamedByEntries((await storage.load(copyKey))!);
      expect(await storage.hasBlobs(copyKey, named)).toEqual(new Set(named));
      // Machine B's retention removes its own session; the copy must not need anything of it.
      expect(await machineB.send({ do: 'close' })).toEqual({ closed: true });
      await storage.delete(keyOf(rootOnB, sessionId));
      const resumed = await CheckpointManager.open({ cwd: rootHere, storage, resume: sessionId, durability: 'none' });
      try {
        expect(await resumed.rewindFiles(first)).toMatchObject({ canRewind: true, skippedLinks: 0, skipped: [] });
      } finally {
        await resumed.close();
      }
      for (const name of ['one.txt', 'two.txt']) expect(fs.readFileSync(path.join(rootHere, name), 'utf8')).toBe(`${name}: original\n`);
    } finally {
      await machineB.end();
      await storage.close();
    }
  });
});

/** The session's log as `storage` loads it (`[]` with `missing` when it must not exist), closing the adapter. */
async function readLog(storage: StorageAdapter, key: SessionKey, options: { missing?: boolean } = {}) {
  try {
    const entries = await storage.load(key);
    if (options.missing === true) expect(entries).toBeNull();
    else expect(entries).not.toBeNull();
    return entries ?? [];
  } finally {
    await storage.close?.();
  }
}
