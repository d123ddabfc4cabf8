import { createHash, randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CheckpointManager, encodeProjectKey, filesystemStorage, type StorageAdapter } from '../../src/index.js';
import { blobsNamedByEntries } from '../../src/store/mirror/log-comparison.js';
import { MirrorFlushError, mirroredStorage, type MirroredStorage } from '../../src/store/mirror/mirrored-storage.js';
import { postgresStorage } from '../../src/store/postgres/postgres-storage.js';
import { runStorageConformance } from '../../src/testing/index.js';
import { fastTestSettings, startPostgres, type PostgresServer } from '../helpers/postgres-server.js';
import { snapshotTree, tempProject } from '../helpers/temp-project.js';
import { runMirrorWorker } from './helpers/run-mirror-worker.js';
import { startSessionProcess, type SessionProcess } from './helpers/session-process.js';
import { startLossyProxy } from './helpers/tcp-proxy.js';

let server: PostgresServer;
let admin: pg.Pool;
const conformanceDirectory = fs.mkdtempSync(path.join(os.tmpdir(), 'rewindable-mirror-conformance-'));
beforeAll(async () => {
  server = await startPostgres({ settings: fastTestSettings });
  admin = new pg.Pool({ connectionString: server.connectionString });
  admin.on('error', () => {}); // idle connections are cut when the outage test stops the server
});
afterAll(async () => {
  await admin?.end();
  await server?.destroy();
  fs.rmSync(conformanceDirectory, { recursive: true, force: true });
});

const mirrorOverPostgres = () =>
  mirroredStorage({
    local: filesystemStorage({ directory: conformanceDirectory, durability: 'none' }),
    remote: postgresStorage({ connection: server.connectionString }),
    retry: { initialDelayMs: 20, maxDelayMs: 200 },
  });

/** Another machine: its own empty local store, over the same database, once the first has copied everything there. */
const mirrorOnAnotherMachine = async (storage: StorageAdapter) => {
  await (storage as MirroredStorage).flush();
  return mirroredStorage({
    local: filesystemStorage({ directory: fs.mkdtempSync(path.join(conformanceDirectory, 'another-machine-')), durability: 'none' }),
    remote: postgresStorage({ connection: server.connectionString }),
    retry: { initialDelayMs: 20, maxDelayMs: 200 },
  });
};

runStorageConformance({ name: 'mirror (filesystem local, postgres remote)', create: mirrorOverPostgres, reopen: mirrorOnAnotherMachine, describe, it });

const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** The remote's log must be the local one exactly: same entries, one row per sequence number, none twice. */
async function expectRemoteEqualsLocal(storage: MirroredStorage, key: { projectKey: string; sessionId: string }) {
  const localEntries = (await storage.local.load(key))!;
  const remoteEntries = (await storage.remote.load(key))!;
  expect(remoteEntries).toEqual(localEntries);
  const rows = await admin.query<{ count: string; first: string; last: string }>(
    'SELECT count(*) AS count, min(sequence) AS first, max(sequence) AS last FROM rewindable_entries WHERE project_key = $1 AND session_id = $2',
    [key.projectKey, key.sessionId],
  );
  expect(rows.rows[0]).toEqual({ count: String(localEntries.length), first: '0', last: String(localEntries.length - 1) });
  expect(blobsNamedByEntries(localEntries).length).toBeGreaterThan(0);
  for (const hash of blobsNamedByEntries(localEntries)) expect(sha((await storage.remote.getBlob(key, hash))!)).toBe(hash);
  return localEntries;
}


/**
 * Two machines on one session through their own mirrors (each its own local
 * store, one database): the first lost its hold on the remote copy, the second
 * resumed it there. What must hold: nothing more of the first machine's copy is
 * written into the remote session, the first is told with SESSION_LOCKED
 * (its flush, then its next write, which writes nothing), the second goes on,
 * and a third machine rewinds the remote copy to the original bytes.
 */
async function secondMachineTakesOver(scenario: {
  /** How machine A reaches the database. @default the server itself */
  connectionOfA?: string;
  loseTheRemote(machineA: SessionProcess, sessionId: string): Promise<void>;
  /** Once machine B holds the session there. */
  afterTakeover?(): void;
}) {
  const project = tempProject();
  project.write('shared.txt', 'ORIGINAL\n');
  const machine = (name: string, connection = server.connectionString) =>
    startSessionProcess({ cwd: project.root, storage: { kind: 'mirror', connection, localDirectory: path.join(project.outside, `store-of-${name}`) } });
  const machineA = machine('a', scenario.connectionOfA);
  const machineB = machine('b');
  const first = randomUUID();
  const second = randomUUID();
  let sessionId: string;
  try {
    sessionId = ((await machineA.send({ do: 'open' })) as { opened: string }).opened;
    expect(await machineA.send({ do: 'checkpoint', id: first })).toEqual({ checkpoint: first });
    expect(await machineA.send({ do: 'flush' })).toEqual({ flushed: true });
    await scenario.loseTheRemote(machineA, sessionId);
    expect(await machineB.send({ do: 'open', resume: sessionId })).toEqual({ opened: sessionId });
    scenario.afterTakeover?.();

    // Local first: A's next write lands in its own store, and goes no further.
    expect(await machineA.send({ do: 'edit', path: 'only-on-a.txt', content: 'A EDIT\n' })).toEqual({ edited: 'only-on-a.txt' });
    expect(await machineA.send({ do: 'flush' })).toMatchObject({ error: { code: 'SESSION_LOCKED' } });
    expect(await machineA.send({ do: 'edit', path: 'shared.txt', content: 'A EDIT\n' })).toMatchObject({ error: { code: 'SESSION_LOCKED' } });
    expect(project.read('shared.txt').toString()).toBe('ORIGINAL\n');

    expect(await machineB.send({ do: 'edit', path: 'shared.txt', content: 'B EDIT\n' })).toEqual({ edited: 'shared.txt' });
    expect(await machineB.send({ do: 'checkpoint', id: second })).toEqual({ checkpoint: second });
    expect(await machineB.send({ do: 'flush' })).toEqual({ flushed: true });
    expect(await machineB.send({ do: 'close' })).toEqual({ closed: true });
  } finally {
    await machineA.end();
    await machineB.end();
  }

  const key = { projectKey: encodeProjectKey(project.root), sessionId };
  const tracked = (entries: Array<{ type: string; path?: unknown }> | null) => (entries ?? []).filter((entry) => entry.type === 'track').map((entry) => entry.path);
  const remote = postgresStorage({ connection: server.connectionString });
  const localOfA = filesystemStorage({ directory: path.join(project.outside, 'store-of-a') });
  try {
    expect(tracked(await remote.load(key))).toEqual(['shared.txt']); // B's backup only
    expect(tracked(await localOfA.load(key))).toEqual(['only-on-a.txt']); // kept where it was written
  } finally {
    await remote.close();
    await localOfA.close();
  }
  const thirdMachine = mirroredStorage({ local: filesystemStorage({ directory: path.join(project.outside, 'store-of-c'), durability: 'none' }), remote: postgresStorage({ connection: server.connectionString }) });
  const resumed = await CheckpointManager.open({ cwd: project.root, storage: thirdMachine, resume: sessionId, durability: 'none' });
  try {
    expect((await resumed.listCheckpoints()).map((checkpoint) => checkpoint.id)).toEqual([first, second]);
    expect(await resumed.rewindFiles(first)).toMatchObject({ canRewind: true, skippedLinks: 0 });
    expect(project.read('shared.txt').toString()).toBe('ORIGINAL\n');
  } finally {
    await resumed.close();
    await thirdMachine.close();
  }
}

describe('mirroredStorage over PostgreSQL', () => {
  it('the database goes away mid-session: the session keeps working locally, and the mirror catches up exactly once it returns', async () => {
    const project = tempProject();
    const storage = mirroredStorage({
      local: filesystemStorage({ directory: project.store, durability: 'none' }),
      remote: postgresStorage({ connection: server.connectionString, retryDelayMs: 20 }),
      retry: { initialDelayMs: 50, maxDelayMs: 300 },
    });
    const original = randomBytes(300_000);
    project.write('src/app.ts', 'export const version = 1;\n');
    project.write('assets/logo.bin', original);
    const manager = await project.open({ storage });
    const key = { projectKey: encodeProjectKey(project.root), sessionId: manager.sessionId };

    const first = await manager.checkpoint(randomUUID());
    await manager.trackEdit('src/app.ts');
    project.write('src/app.ts', 'export const version = 2;\n');
    await storage.flush();
    const beforeOutage = (await storage.remote.load(key))!.length;

    await server.stop();
    const second = await manager.checkpoint(randomUUID());
    await manager.trackEdit('src/app.ts');
    project.write('src/app.ts', 'export const version = 3;\n');
    await manager.trackEdit('assets/logo.bin');
    project.write('assets/logo.bin', randomBytes(1000));
    await manager.trackEdit('src/new.ts');
    project.write('src/new.ts', 'created during the outage\n');
    const rewound = await manager.rewindFiles(second);
    expect(rewound.canRewind).toBe(true);
    expect(project.read('src/app.ts').toString()).toBe('export const version = 2;\n');
    expect(project.read('assets/logo.bin')).toEqual(original);
    expect(project.exists('src/new.ts')).toBe(false);
    await manager.checkpoint(randomUUID());
    await manager.trackEdit('src/app.ts');
    project.write('src/app.ts', 'export const version = 4;\n');
    expect(storage.status()).toMatchObject({ caughtUp: false });
    expect(storage.status().pendingEntries).toBeGreaterThan(0);
    const timedOut = await storage.flush({ timeoutMs: 300 }).catch((error: unknown) => error);
    expect(MirrorFlushError.isInstance(timedOut)).toBe(true);

    await server.start();
    await storage.flush();
    const entries = await expectRemoteEqualsLocal(storage, key);
    expect(entries.length).toBeGreaterThan(beforeOutage);

    // The remote copy alone is enough to rewind: a fresh machine's view.
    await manager.rewindFiles(first);
    await manager.close();
    await storage.close();
    const fresh = mirroredStorage({
      local: filesystemStorage({ directory: path.join(project.outside, 'fresh-store'), durability: 'none' }),
      remote: postgresStorage({ connection: server.connectionString }),
    });
    project.write('src/app.ts', 'changed after the session\n');
    const resumed = await project.open({ storage: fresh, resume: manager.sessionId });
    await resumed.rewindFiles(second);
    expect(project.read('src/app.ts').toString()).toBe('export const version = 2;\n');
    await resumed.close();
    await fresh.close();
  });

  it('cross-host: a session written in one process, its store deleted, is resumed and rewound in another process with a fresh store', async () => {
    const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'rewindable-cross-host-')));
    try {
      const cwd = path.join(base, 'project');
      const write = (relative: string, bytes: Buffer) => {
        fs.mkdirSync(path.dirname(path.join(cwd, relative)), { recursive: true });
        fs.writeFileSync(path.join(cwd, relative), bytes);
      };
      write('README.md', Buffer.from('# project\n'));
      write('src/index.ts', Buffer.from('export {};\n'));
      write('data/large.bin', randomBytes(2 * 1024 * 1024 + 5)); // a loose blob locally, a large bytea remotely
      write('data/small.bin', Buffer.from([0, 1, 2, 0, 255]));
      const before = snapshotTree(cwd);
      const sessionId = randomUUID();
      const firstMessage = randomUUID();
      const secondMessage = randomUUID();
      const b64 = (text: string | Buffer) => Buffer.from(text).toString('base64');

      const machineA = await runMirrorWorker({
        cwd,
        storeDir: path.join(base, 'store-a'),
        connection: server.connectionString,
        sessionId,
        steps: [
          { do: 'checkpoint', id: firstMessage },
          { do: 'track', path: 'src/index.ts' },
          { do: 'write', path: 'src/index.ts', base64: b64('export const answer = 42;\n') },
          { do: 'track', path: 'data/large.bin' },
          { do: 'write', path: 'data/large.bin', base64: b64(randomBytes(1000)) },
          { do: 'track', path: 'data/small.bin' },
          { do: 'remove', path: 'data/small.bin' },
          { do: 'track', path: 'src/created.ts' },
          { do: 'write', path: 'src/created.ts', base64: b64('new file\n') },
          { do: 'checkpoint', id: secondMessage },
          { do: 'track', path: 'README.md' },
          { do: 'write', path: 'README.md', base64: b64('# rewritten\n') },
        ],
      });
      expect(machineA.stderr).toBe('');
      expect(machineA.code).toBe(0);
      fs.rmSync(path.join(base, 'store-a'), { recursive: true, force: true });
      expect(snapshotTree(cwd)).not.toEqual(before);

      const storeB = path.join(base, 'store-b');
      const machineB = await runMirrorWorker({
        cwd,
        storeDir: storeB,
        connection: server.connectionString,
        resume: sessionId,
        steps: [
          { do: 'rewind', id: firstMessage, dryRun: true },
          { do: 'rewind', id: firstMessage },
        ],
      });
      expect(machineB.stderr).toBe('');
      expect(machineB.code).toBe(0);
      const [preview, rewind] = machineB.lines.filter((line) => 'rewind' in line).map((line) => line.rewind as { canRewind: boolean; filesChanged?: string[] });
      expect(preview!.canRewind).toBe(true);
      expect(rewind!.canRewind).toBe(true);
      expect(snapshotTree(cwd)).toEqual(before);

      // Machine B's own store now holds the whole log, and the database holds B's rewind too.
      const key = { projectKey: encodeProjectKey(cwd), sessionId };
      const localB = filesystemStorage({ directory: storeB });
      const remote = postgresStorage({ connection: server.connectionString });
      const localEntries = await localB.load(key);
      expect(localEntries?.some((entry) => entry.type === 'rewind-end')).toBe(true);
      expect(await remote.load(key)).toEqual(localEntries);
      await localB.close();
      await remote.close();
    } finally {
      fs.rmSync(base, { recursive: true, force: true });
    }
  });
  it('a remote lock lost with its connection (the network to the database went down): another machine resuming the session there meanwhile gets it, and the first machine never writes into it again', async () => {
    const network = await startLossyProxy(server.port);
    try {
      await secondMachineTakesOver({
        connectionOfA: `postgres://rewindable@127.0.0.1:${network.port}/postgres`,
        // A's lock goes with its connection, and A cannot take it back before the network returns.
        loseTheRemote: async () => network.cut(),
        afterTakeover: () => network.restore(),
      });
    } finally {
      await network.close();
    }
  });

  it('a remote lock skipped at open (the database was down) is taken before entries are copied: a session another machine holds there meanwhile is never written into', async () => {
    await secondMachineTakesOver({
      async loseTheRemote(machineA, sessionId) {
        expect(await machineA.send({ do: 'close' })).toEqual({ closed: true });
        await server.stop();
        expect(await machineA.send({ do: 'open', resume: sessionId })).toEqual({ opened: sessionId }); // from its local copy
        await server.start();
      },
    });
  });
});
