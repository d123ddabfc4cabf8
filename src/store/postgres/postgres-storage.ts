import { randomUUID } from 'node:crypto';
import type { SessionKey, StorageAdapter, StorageLock, StoreEntry, StoredSessionInfo } from '../storage-adapter.js';
import { storeBlobs } from './postgres-blobs.js';
import { borrowOrCreatePool } from './postgres-connection.js';
import type { PostgresClient, PostgresPool, PostgresPoolConfig } from './postgres-driver.js';
import { acquireWriterLock, assertWriter, type WriterLock } from './postgres-lock.js';
import { withRetry, type RetryPolicy } from './postgres-retry.js';
import { createTables, postgresTables, schemaVersion } from './postgres-schema.js';

export type { PostgresClient, PostgresPool, PostgresPoolConfig, PostgresQueryResult } from './postgres-driver.js';

/** `PoolType`: the type of the pool you pass as `connection` (`pg.Pool`), which `getInstance()` then returns. */
export interface PostgresStorageOptions<PoolType extends PostgresPool = PostgresPool> {
  /**
   * The database: a connection string (`postgres://user:password@host:5432/db`),
   * a `pg` pool configuration, or an existing `pg.Pool`, which the adapter
   * borrows and never ends. A pool the adapter creates keeps TCP keepalive on
   * and gives up connecting after 10 seconds unless the configuration says otherwise.
   */
  connection: string | PostgresPoolConfig | PoolType;
  /**
   * Schema of the tables, created if missing.
   * @default undefined (the connection's search_path, normally `public`)
   */
  schema?: string;
  /**
   * Prefix of the table names (`<prefix>sessions`, `<prefix>entries`, `<prefix>blobs` ...).
   * @default 'rewindable_'
   */
  tablePrefix?: string;
  /**
   * Further attempts after a connection failure, before an operation rejects.
   * @default 2
   */
  retries?: number;
  /**
   * Wait before the first retry; each later one waits four times longer.
   * @default 100
   */
  retryDelayMs?: number;
  /**
   * Seconds of silence after which the server probes a lock holder's
   * connection; a machine that vanished loses its locks within about twice this.
   * @default 10
   */
  lockKeepAliveSeconds?: number;
}

export interface PostgresStorage<PoolType extends PostgresPool = PostgresPool> extends StorageAdapter {
  /**
   * The `pg.Pool` in use (connecting lazily: the adapter itself connects on its first operation): typed as the pool
   * you passed, or as the few methods the adapter uses when it created the pool (cast it to `pg.Pool` for more).
   */
  getInstance(): Promise<PoolType>;
  listProjects(): Promise<string[]>;
  collectGarbage: NonNullable<StorageAdapter['collectGarbage']>;
  lock: NonNullable<StorageAdapter['lock']>;
  /** Releases held locks and ends the pool if the adapter created it. */
  close(): Promise<void>;
}

/**
 * Storage in PostgreSQL, for sessions that outlive the machine: logs as
 * ordered rows (one sequence per session), backups as `bytea` keyed by hash
 * and shared by all sessions. Tables are created on first use. Every
 * operation may be retried after a lost connection without duplicating
 * anything. Requires the `pg` package (an optional peer dependency).
 *
 * @example
 * import { postgresStorage } from 'rewindable/storage/postgres';
 * const storage = postgresStorage({ connection: process.env.DATABASE_URL! });
 * const manager = await CheckpointManager.open({ cwd: projectDirectory, storage });
 */
export function postgresStorage<PoolType extends PostgresPool = PostgresPool>(options: PostgresStorageOptions<PoolType>): PostgresStorage<PoolType> {
  const tables = postgresTables(options.schema, options.tablePrefix ?? 'rewindable_');
  const policy: RetryPolicy = { retries: options.retries ?? 2, firstDelayMs: options.retryDelayMs ?? 100 };
  const connection = borrowOrCreatePool(options.connection);
  /**
   * The newest lock this adapter took on each session, which is the only one
   * that can still hold it: the session's writes outside a manager (a
   * clean-up's delete, a relocation's copy) are fenced with its token.
   */
  const writers = new Map<string, WriterLock>();
  /** Every lock this adapter took and nobody released yet, a stale one included: closing drops them all. */
  const unreleased = new Set<WriterLock>();
  const keyString = (key: SessionKey) => JSON.stringify([key.projectKey, key.sessionId]);
  /** Resolves to the schema the tables are in, once they exist. */
  let tablesReady: Promise<string> | undefined;

  async function ready(): Promise<{ pool: PoolType; schema: string }> {
    const pool = await connection.pool();
    tablesReady ??= withClient(pool, (client) => createTables(client, tables)).catch((error: unknown) => {
      tablesReady = undefined; // the next call tries again
      throw error;
    });
    return { pool, schema: await tablesReady };
  }

  /** One retried operation on a pooled connection. */
  const run = <T>(action: string, operation: (client: PostgresClient) => Promise<T>) =>
    withRetry(policy, action, async () => withClient((await ready()).pool, operation));

  /**
   * The lock this adapter holds on the session, made sure of before a write:
   * one lost with its connection is taken again first. Undefined when the
   * session is written without a lock (nothing to fence).
   */
  async function heldWriter(key: SessionKey): Promise<WriterLock | undefined> {
    const writer = writers.get(keyString(key));
    if (writer !== undefined) await withRetry(policy, `take the lock of session ${key.sessionId} again`, () => writer.ensureHeld());
    return writer;
  }

  return {
    specificationVersion: 'v2',

    getInstance: () => connection.pool(),

    async append(key, entries, blobs = []) {
      if (entries.length === 0) {
        if (blobs.length > 0) await run(`store backups of session ${key.sessionId}`, (client) => storeBlobs(client, tables, key, blobs));
        return;
      }
      const json = JSON.stringify(entries);
      // One id per call, kept across retries: the server applies a batch id at most once per session.
      const batchId = randomUUID();
      const writer = await heldWriter(key);
      await run(`append to session ${key.sessionId}`, (client) =>
        inTransaction(client, async () => {
          // Creating or updating the session row locks it, so appends to one session take sequence numbers in turn.
          const counted = await client.query<{ first: string }>(
            `INSERT INTO ${tables.sessions} AS s (project_key, session_id, entry_count, log_bytes) VALUES ($1, $2, $3, $4)
             ON CONFLICT (project_key, session_id) DO UPDATE
               SET entry_count = s.entry_count + EXCLUDED.entry_count, log_bytes = s.log_bytes + EXCLUDED.log_bytes, updated_at = now()
             RETURNING s.entry_count - $3 AS first`,
            [key.projectKey, key.sessionId, entries.length, Buffer.byteLength(json)],
          );
          // Checked after the row lock: a first attempt whose acknowledgement was lost has committed by now, or never will.
          const applied = await client.query(`SELECT 1 FROM ${tables.entries} WHERE project_key = $1 AND session_id = $2 AND batch_id = $3 LIMIT 1`, [
            key.projectKey,
            key.sessionId,
            batchId,
          ]);
          if (applied.rowCount !== 0) return 'already applied';
          // A writer that lost its lock to another one writes nothing (an append it made before is kept, above).
          if (writer !== undefined) await assertWriter(client, tables, key, writer.token);
          // Blobs first (same transaction): an entry is never visible without the backups it names.
          await storeBlobs(client, tables, key, blobs, true);
          await client.query(
            `INSERT INTO ${tables.entries} (project_key, session_id, sequence, batch_id, entry, layout_version)
             SELECT $1, $2, $3::bigint + item.position - 1, $4, item.entry, $6
             FROM json_array_elements($5::json) WITH ORDINALITY AS item(entry, position)`,
            [key.projectKey, key.sessionId, counted.rows[0]!.first, batchId, json, schemaVersion],
          );
          return 'applied';
        }, (outcome) => outcome === 'applied'),
      );
    },

    async load(key) {
      return run(`read the log of session ${key.sessionId}`, async (client) => {
        // One statement, one snapshot: the count and the entries agree.
        const result = await client.query<{ entry: StoreEntry | null }>(
          `SELECT e.entry FROM ${tables.sessions} s
           LEFT JOIN ${tables.entries} e ON e.project_key = s.project_key AND e.session_id = s.session_id
           WHERE s.project_key = $1 AND s.session_id = $2 ORDER BY e.sequence`,
          [key.projectKey, key.sessionId],
        );
        if (result.rows.length === 0) return null;
        return result.rows.flatMap((row) => (row.entry === null ? [] : [row.entry]));
      });
    },

    async listSessions(projectKey) {
      return run(`list the sessions of ${projectKey}`, async (client) => {
        const result = await client.query<{ session_id: string; mtime: number; bytes: number }>(
          `SELECT s.session_id, (extract(epoch FROM s.updated_at) * 1000)::float8 AS mtime,
             (s.log_bytes + coalesce((
               SELECT sum(b.size) FROM ${tables.sessionBlobs} held JOIN ${tables.blobs} b ON b.hash = held.hash
               WHERE held.project_key = s.project_key AND held.session_id = s.session_id
                 AND NOT EXISTS (SELECT 1 FROM ${tables.sessionBlobs} other
                   WHERE other.hash = held.hash AND (other.project_key, other.session_id) <> (held.project_key, held.session_id))
             ), 0))::float8 AS bytes
           FROM ${tables.sessions} s WHERE s.project_key = $1 ORDER BY s.session_id`,
          [projectKey],
        );
        return result.rows.map((row): StoredSessionInfo => ({ sessionId: row.session_id, mtime: Math.round(row.mtime), bytes: row.bytes }));
      });
    },

    async delete(key) {
      const writer = await heldWriter(key);
      await run(`delete session ${key.sessionId}`, (client) =>
        inTransaction(client, async () => {
          if (writer !== undefined) await assertWriter(client, tables, key, writer.token);
          const held = await client.query<{ hash: string }>(
            `DELETE FROM ${tables.sessionBlobs} WHERE project_key = $1 AND session_id = $2 RETURNING hash`,
            [key.projectKey, key.sessionId],
          );
          const hashes = held.rows.map((row) => row.hash).sort();
          if (hashes.length > 0) {
            // Lock the blobs first: a session storing one of them right now either commits its claim
            // before the check below sees it, or waits and then stores the blob afresh.
            await client.query(`SELECT 1 FROM ${tables.blobs} WHERE hash = ANY($1::text[]) ORDER BY hash FOR UPDATE`, [hashes]);
            await client.query(
              `DELETE FROM ${tables.blobs} b WHERE b.hash = ANY($1::text[])
               AND NOT EXISTS (SELECT 1 FROM ${tables.sessionBlobs} other WHERE other.hash = b.hash)`,
              [hashes],
            );
          }
          await client.query(`DELETE FROM ${tables.entries} WHERE project_key = $1 AND session_id = $2`, [key.projectKey, key.sessionId]);
          await client.query(`DELETE FROM ${tables.sessions} WHERE project_key = $1 AND session_id = $2`, [key.projectKey, key.sessionId]);
        }),
      );
    },

    async putBlobs(key, blobs) {
      if (blobs.length === 0) return;
      await run(`store backups of session ${key.sessionId}`, (client) => storeBlobs(client, tables, key, blobs));
    },

    async getBlob(_key, hash) {
      return run(`read backup ${hash.slice(0, 12)}`, async (client) => {
        // Text results on purpose: node-postgres decodes a binary-format row as UTF-8 text, which would corrupt bytea.
        const result = await client.query<{ bytes: Buffer }>(`SELECT bytes FROM ${tables.blobs} WHERE hash = $1`, [hash]);
        return result.rows[0]?.bytes ?? null;
      });
    },

    async hasBlobs(key, hashes) {
      if (hashes.length === 0) return new Set<string>();
      return run(`look up backups of session ${key.sessionId}`, async (client) => {
        // Held by this session, not merely stored: another session's blob goes when that session is deleted.
        const result = await client.query<{ hash: string }>(
          `SELECT held.hash FROM ${tables.sessionBlobs} held JOIN ${tables.blobs} b ON b.hash = held.hash
           WHERE held.project_key = $1 AND held.session_id = $2 AND held.hash = ANY($3::text[])`,
          [key.projectKey, key.sessionId, [...hashes]],
        );
        return new Set(result.rows.map((row) => row.hash));
      });
    },

    async listProjects() {
      return run('list projects', async (client) => {
        const result = await client.query<{ project_key: string }>(`SELECT DISTINCT project_key FROM ${tables.sessions} ORDER BY project_key`);
        return result.rows.map((row) => row.project_key);
      });
    },

    async collectGarbage(referenced, { graceMs }) {
      return run('collect unreferenced backups', (client) =>
        inTransaction(client, async () => {
          // Storing a blob refreshes used_at under a row lock, so a blob claimed during this delete is kept.
          const removed = await client.query<{ hash: string; size: number }>(
            `DELETE FROM ${tables.blobs} WHERE used_at < now() - $1 * interval '1 millisecond' AND NOT (hash = ANY($2::text[])) RETURNING hash, size`,
            [graceMs, [...referenced]],
          );
          const hashes = removed.rows.map((row) => row.hash);
          if (hashes.length > 0) await client.query(`DELETE FROM ${tables.sessionBlobs} WHERE hash = ANY($1::text[])`, [hashes]);
          return { blobsRemoved: hashes.length, bytesFreed: removed.rows.reduce((total, row) => total + row.size, 0) };
        }),
      );
    },

    async lock(key): Promise<StorageLock> {
      const { pool, schema } = await ready();
      const id = keyString(key);
      const forget = (released: WriterLock) => {
        unreleased.delete(released);
        if (writers.get(id) === released) writers.delete(id);
      };
      const lockOptions = {
        keepAliveSeconds: options.lockKeepAliveSeconds ?? 10,
        // The schema the tables are in, not the option as spelled: `schema: 'public'` and the default are one store.
        namespace: `${schema}.${tables.prefix}`,
        retakeDelayMs: policy.firstDelayMs,
      };
      const writer = await withRetry(policy, `lock session ${key.sessionId}`, () => acquireWriterLock(pool, tables, key, lockOptions, forget));
      writers.set(id, writer);
      unreleased.add(writer);
      return {
        release: () => writer.release(),
        assertHeld: () => withRetry(policy, `take the lock of session ${key.sessionId} again`, () => writer.ensureHeld()),
      };
    },

    async close() {
      for (const writer of unreleased) writer.discard();
      unreleased.clear();
      writers.clear();
      await connection.end();
    },
  };
}

async function withClient<T>(pool: PostgresPool, operation: (client: PostgresClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  // A connection cut mid-query fails the query and also emits 'error' on the client, which the pool
  // only listens for while the client is idle; unheard, it would crash the process.
  client.on('error', ignoreError);
  try {
    const result = await operation(client);
    client.off('error', ignoreError);
    client.release();
    return result;
  } catch (error) {
    // A connection that failed mid-transaction is not reused (and keeps the listener until it is gone).
    client.release(error instanceof Error ? error : true);
    throw error;
  }
}

function ignoreError(): void {
  // The failure reaches the caller through the query's rejection.
}

/** Runs `body` in a transaction; commits unless it throws or `keep` says to roll back. */
async function inTransaction<T>(client: PostgresClient, body: () => Promise<T>, keep: (result: T) => boolean = () => true): Promise<T> {
  await client.query('BEGIN');
  let result: T;
  try {
    result = await body();
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  }
  await client.query(keep(result) ? 'COMMIT' : 'ROLLBACK');
  return result;
}
