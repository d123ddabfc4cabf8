import { spawn } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CheckpointManager, cleanup, encodeProjectKey, type SessionKey, type StorageLock } from '../../src/index.js';
import { postgresStorage } from '../../src/store/postgres/postgres-storage.js';
import { runStorageConformance } from '../../src/testing/index.js';
import { crashAndRestart, fastTestSettings, startPostgres, type PostgresServer } from '../helpers/postgres-server.js';
import { tempProject } from '../helpers/temp-project.js';
import { startSessionProcess } from './helpers/session-process.js';
import { startLossyProxy } from './helpers/tcp-proxy.js';

let server: PostgresServer;
let admin: pg.Pool;
beforeAll(async () => {
  server = await startPostgres({ settings: fastTestSettings });
  admin = new pg.Pool({ connectionString: server.connectionString });
  admin.on('error', () => {}); // idle connections are cut when a test restarts the server
});
afterAll(async () => {
  await admin?.end();
  await server?.destroy();
});

runStorageConformance({
  name: 'postgres',
  create: () => postgresStorage({ connection: server.connectionString }),
  reopen: () => postgresStorage({ connection: server.connectionString }),
  describe,
  it,
});

const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const newKey = () => ({ projectKey: '-srv-project', sessionId: randomUUID() });

/** Tables in `schema` as a release of layout version 1 left them, with one entry of `key`. */
async function layoutOfVersion1(schema: string, key: SessionKey): Promise<void> {
  const first = postgresStorage({ connection: server.connectionString, schema });
  await first.append(key, [{ type: 'written by an older release' }]);
  await first.close();
  await admin.query(`DROP TABLE "${schema}".rewindable_session_writers`);
  await admin.query(`ALTER TABLE "${schema}".rewindable_entries DROP COLUMN IF EXISTS layout_version`);
  await admin.query(`UPDATE "${schema}".rewindable_meta SET value = '1' WHERE name = 'schemaVersion'`);
}

/** An append as a process of layout version 1 sends it (its statements, word for word). */
async function appendAsVersion1(client: pg.PoolClient, schema: string, key: SessionKey, entries: object[]): Promise<void> {
  const json = JSON.stringify(entries);
  await client.query('BEGIN');
  try {
    const counted = await client.query<{ first: string }>(
      `INSERT INTO "${schema}".rewindable_sessions AS s (project_key, session_id, entry_count, log_bytes) VALUES ($1, $2, $3, $4)
       ON CONFLICT (project_key, session_id) DO UPDATE
         SET entry_count = s.entry_count + EXCLUDED.entry_count, log_bytes = s.log_bytes + EXCLUDED.log_bytes, updated_at = now()
       RETURNING s.entry_count - $3 AS first`,
      [key.projectKey, key.sessionId, entries.length, Buffer.byteLength(json)],
    );
    await client.query(
      `INSERT INTO "${schema}".rewindable_entries (project_key, session_id, sequence, batch_id, entry)
       SELECT $1, $2, $3::bigint + item.position - 1, $4, item.entry
       FROM json_array_elements($5::json) WITH ORDINALITY AS item(entry, position)`,
      [key.projectKey, key.sessionId, counted.rows[0]!.first, randomUUID(), json],
    );
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  }
}

describe('postgresStorage', () => {
  it('creates its tables on first use, in the schema and with the prefix asked for, and stores rows in sequence with bytea blobs keyed by hash', async () => {
    const schema = `fresh_${randomUUID().slice(0, 8)}`;
    const storage = postgresStorage({ connection: server.connectionString, schema, tablePrefix: 'rw_' });
    const tablesBefore = await admin.query('SELECT table_name FROM information_schema.tables WHERE table_schema = $1', [schema]);
    expect(tablesBefore.rows).toEqual([]); // creating the adapter connects to nothing
    const key = newKey();
    const bytes = Buffer.from([0, 1, 2, 255, 0]);
    await storage.append(key, [{ type: 'a' }, { type: 'b' }], [{ hash: sha(bytes), bytes }]);
    await storage.append(key, [{ type: 'c' }]);
    const tables = await admin.query<{ table_name: string }>('SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1', [schema]);
    expect(tables.rows.map((row) => row.table_name)).toEqual(['rw_blobs', 'rw_entries', 'rw_meta', 'rw_session_blobs', 'rw_session_writers', 'rw_sessions']);
    const entries = await admin.query(`SELECT sequence::int, entry FROM "${schema}".rw_entries WHERE session_id = $1 ORDER BY sequence`, [key.sessionId]);
    expect(entries.rows).toEqual([
      { sequence: 0, entry: { type: 'a' } },
      { sequence: 1, entry: { type: 'b' } },
      { sequence: 2, entry: { type: 'c' } },
    ]);
    const blob = await admin.query(`SELECT hash, bytes, size FROM "${schema}".rw_blobs`);
    expect(blob.rows).toEqual([{ hash: sha(bytes), bytes, size: 5 }]);
    await storage.close();
  });

  it('several adapters using a fresh schema at once all succeed', async () => {
    const schema = `race_${randomUUID().slice(0, 8)}`;
    const adapters = Array.from({ length: 4 }, () => postgresStorage({ connection: server.connectionString, schema }));
    const keys = adapters.map(() => newKey());
    await Promise.all(adapters.map((storage, index) => storage.append(keys[index]!, [{ type: 'first', index }])));
    for (const [index, key] of keys.entries()) expect(await adapters[0]!.load(key)).toEqual([{ type: 'first', index }]);
    await Promise.all(adapters.map((storage) => storage.close()));
  });

  it('an append whose acknowledgement was lost is retried once and applied once', async () => {
    const proxy = await startLossyProxy(server.port);
    const storage = postgresStorage({ connection: `postgres://rewindable@127.0.0.1:${proxy.port}/postgres`, retryDelayMs: 10 });
    try {
      const key = newKey();
      await storage.append(key, [{ type: 'before' }]); // tables exist from here on
      proxy.dropNextCommitAcknowledgement();
      await storage.append(key, [{ type: 'once' }, { type: 'and only once' }]);
      expect(proxy.droppedAcknowledgements).toBe(1);
      expect(await storage.load(key)).toEqual([{ type: 'before' }, { type: 'once' }, { type: 'and only once' }]);
    } finally {
      await storage.close();
      await proxy.close();
    }
  });

  it('rejects with a retryable STORE_IO error when the server cannot be reached', async () => {
    const storage = postgresStorage({ connection: 'postgres://rewindable@127.0.0.1:1/postgres', retries: 1, retryDelayMs: 10 });
    await expect(storage.load(newKey())).rejects.toMatchObject({
      code: 'STORE_IO',
      details: { retryable: true },
      message: expect.stringMatching(/PostgreSQL storage could not read the log .*2 attempts/),
    });
    await storage.close();
  });

  it('rejects a schema name it would have to quote with INVALID_OPTIONS', () => {
    expect(() => postgresStorage({ connection: server.connectionString, schema: 'bad"; DROP TABLE x; --' })).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS' }));
  });

  it('borrows an existing pg.Pool: getInstance() returns it and close() leaves it open', async () => {
    const pool = new pg.Pool({ connectionString: server.connectionString });
    const storage = postgresStorage({ connection: pool });
    expect(await storage.getInstance()).toBe(pool);
    await storage.append(newKey(), [{ type: 'through a borrowed pool' }]);
    await storage.close();
    expect((await pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    await pool.end();
  });

  it('a lock held by a process that dies is released with its connection', async () => {
    const key = newKey();
    const holder = spawn(process.execPath, ['--import', 'tsx', path.join(path.dirname(fileURLToPath(import.meta.url)), 'helpers', 'lock-holder.ts'), server.connectionString, key.projectKey, key.sessionId], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise((resolve) => holder.on('exit', resolve));
    await new Promise<void>((resolve, reject) => {
      holder.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('locked') && resolve());
      holder.on('exit', () => reject(new Error('the lock holder exited before taking the lock')));
    });
    const storage = postgresStorage({ connection: server.connectionString, retries: 0 });
    try {
      await expect(storage.lock(key)).rejects.toMatchObject({ code: 'SESSION_LOCKED' });
      holder.kill('SIGKILL');
      await exited;
      // The server notices the closed socket within moments; poll rather than guess how long.
      let lock: StorageLock | undefined;
      await expect.poll(async () => (lock = await storage.lock(key).catch(() => undefined)), { timeout: 10_000, interval: 50 }).toBeDefined();
      await expect(storage.lock(key)).rejects.toMatchObject({ code: 'SESSION_LOCKED' }); // ours now
      await lock!.release();
    } finally {
      holder.kill('SIGKILL');
      await storage.close();
    }
  });

  it('an older table layout (version 1, without the writers table) is brought up to date on first use', async () => {
    const schema = `upgrade_${randomUUID().slice(0, 8)}`;
    const key = newKey();
    await layoutOfVersion1(schema, key);

    const storage = postgresStorage({ connection: server.connectionString, schema });
    const lock = await storage.lock(key);
    await storage.append(key, [{ type: 'written under a lock' }]);
    await lock.release();
    expect(await storage.load(key)).toEqual([{ type: 'written by an older release' }, { type: 'written under a lock' }]);
    expect((await admin.query(`SELECT value FROM "${schema}".rewindable_meta WHERE name = 'schemaVersion'`)).rows).toEqual([{ value: '2' }]);
    await storage.close();
  });

  it('a process of the release before the writers table, still running when the tables are brought up to date, can append no more; every entry it wrote is kept', async () => {
    const schema = `fence_${randomUUID().slice(0, 8)}`;
    const key = newKey();
    await layoutOfVersion1(schema, key);
    const olderRelease = await admin.connect();
    try {
      await appendAsVersion1(olderRelease, schema, key, [{ type: 'its second append' }]);
      const storage = postgresStorage({ connection: server.connectionString, schema });
      const lock = await storage.lock(key); // brings the tables up to date
      await expect(appendAsVersion1(olderRelease, schema, key, [{ type: 'beside the writer check' }])).rejects.toMatchObject({ code: '23502', column: 'layout_version' });
      await storage.append(key, [{ type: 'under the lock' }]);
      await lock.release();
      expect(await storage.load(key)).toEqual([{ type: 'written by an older release' }, { type: 'its second append' }, { type: 'under the lock' }]);
      await storage.close();
    } finally {
      olderRelease.release();
    }
  });

  it('a lock lost in a server restart is taken again before the next append: the holder goes on, and a second process gets SESSION_LOCKED', async () => {
    const project = tempProject();
    project.write('notes.txt', 'ORIGINAL\n');
    const holder = startSessionProcess({ cwd: project.root, storage: { kind: 'postgres', connection: server.connectionString } });
    const second = startSessionProcess({ cwd: project.root, storage: { kind: 'postgres', connection: server.connectionString } });
    try {
      const { opened: sessionId } = (await holder.send({ do: 'open' })) as { opened: string };
      const first = randomUUID();
      expect(await holder.send({ do: 'checkpoint', id: first })).toEqual({ checkpoint: first });
      await crashAndRestart(server, admin);

      expect(await holder.send({ do: 'edit', path: 'notes.txt', content: 'EDITED\n' })).toEqual({ edited: 'notes.txt' });
      expect(await second.send({ do: 'open', resume: sessionId })).toMatchObject({ error: { code: 'SESSION_LOCKED' } });
      expect(await holder.send({ do: 'rewind', id: first })).toMatchObject({ rewind: { canRewind: true } });
      expect(project.read('notes.txt').toString()).toBe('ORIGINAL\n');
      expect(await holder.send({ do: 'close' })).toEqual({ closed: true });
    } finally {
      await holder.end();
      await second.end();
    }
  });

  it('a server restart under a live session: of its holder and a second process resuming it, exactly one writes on, the other gets SESSION_LOCKED before writing anything, and the first checkpoint restores the original bytes', async () => {
    const project = tempProject();
    project.write('shared.txt', 'ORIGINAL\n');
    const storageOption = { kind: 'postgres', connection: server.connectionString } as const;
    const processA = startSessionProcess({ cwd: project.root, storage: storageOption });
    const processB = startSessionProcess({ cwd: project.root, storage: storageOption });
    const first = randomUUID();
    const second = randomUUID();
    let sessionId: string;
    try {
      sessionId = ((await processA.send({ do: 'open' })) as { opened: string }).opened;
      await processA.send({ do: 'checkpoint', id: first });
      // A's lock goes with its connection. A takes it back as soon as the server answers, and B may come first.
      await crashAndRestart(server, admin);
      const resumed = await processB.send({ do: 'open', resume: sessionId });

      // Both now take the same turn: back up shared.txt and change it, then the next checkpoint.
      const answers = { A: [] as Array<Record<string, unknown>>, B: [] as Array<Record<string, unknown>> };
      answers.B.push(resumed);
      answers.A.push(await processA.send({ do: 'edit', path: 'shared.txt', content: 'A EDIT\n' }));
      const afterA = project.read('shared.txt').toString();
      answers.B.push(await processB.send({ do: 'edit', path: 'shared.txt', content: 'B EDIT\n' }));
      answers.A.push(await processA.send({ do: 'checkpoint', id: second }));
      answers.B.push(await processB.send({ do: 'checkpoint', id: second }));
      const refused = Object.entries(answers).filter(([, list]) => list.some((answer) => 'error' in answer));
      expect(refused.map(([name]) => name)).toHaveLength(1);
      const [loser, losersAnswers] = refused[0]!;
      expect(losersAnswers.find((answer) => 'error' in answer)).toMatchObject({ error: { code: 'SESSION_LOCKED' } });
      expect(losersAnswers.every((answer) => 'error' in answer)).toBe(true); // refused from its first write on
      if (loser === 'A') expect(afterA).toBe('ORIGINAL\n'); // refused before writing anything
      expect(project.read('shared.txt').toString()).toBe(loser === 'A' ? 'B EDIT\n' : 'A EDIT\n');
      await processA.send({ do: 'close' });
      await processB.send({ do: 'close' });
    } finally {
      await processA.end();
      await processB.end();
    }

    const storage = postgresStorage({ connection: server.connectionString });
    const reopened = await CheckpointManager.open({ cwd: project.root, storage, resume: sessionId, durability: 'none' });
    try {
      expect((await reopened.listCheckpoints()).map((checkpoint) => checkpoint.id)).toEqual([first, second]);
      const entries = (await storage.load({ projectKey: encodeProjectKey(project.root), sessionId }))!;
      expect(entries.filter((entry) => entry.type === 'checkpoint' && entry.id === second)).toHaveLength(1); // never accepted twice
      expect(await reopened.rewindFiles(first)).toMatchObject({ canRewind: true, skippedLinks: 0 });
      expect(project.read('shared.txt').toString()).toBe('ORIGINAL\n');
    } finally {
      await reopened.close();
      await storage.close();
    }
  });

  it('cleanup() through the adapter removes idle sessions and the blobs only they held', async () => {
    const schema = `retention_${randomUUID().slice(0, 8)}`;
    const storage = postgresStorage({ connection: server.connectionString, schema });
    const project = tempProject();
    project.write('kept.txt', 'kept\n');
    project.write('idle.txt', 'idle\n');
    const idle = await project.open({ storage });
    await idle.checkpoint(randomUUID());
    await idle.trackEdit('idle.txt');
    await idle.close();
    const active = await project.open({ storage });
    await active.checkpoint(randomUUID());
    await active.trackEdit('kept.txt');
    await active.close();
    await admin.query(`UPDATE "${schema}".rewindable_sessions SET updated_at = now() - interval '40 days' WHERE session_id = $1`, [idle.sessionId]);
    await admin.query(`UPDATE "${schema}".rewindable_blobs SET used_at = now() - interval '40 days'`);

    const result = await cleanup({ storage, olderThanDays: 30 });
    expect(result.sessionsRemoved.map((session) => session.sessionId)).toEqual([idle.sessionId]);
    expect(result.sessionsKept).toBe(1);
    const blobs = await admin.query<{ hash: string }>(`SELECT hash FROM "${schema}".rewindable_blobs`);
    expect(blobs.rows.map((row) => row.hash)).toEqual([sha(Buffer.from('kept\n'))]);
    await storage.close();
  });
});
