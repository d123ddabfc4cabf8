import { createHash, randomUUID } from 'node:crypto';
import os from 'node:os';
import type { PostgresClient, PostgresPool } from './postgres-driver.js';
import { RewindableError, RewindableErrorCode } from '../../errors.js';
import type { SessionKey, StorageLock } from '../storage-adapter.js';
import type { PostgresTables } from './postgres-schema.js';

export interface AdvisoryLockOptions {
  /** Seconds of silence before the server probes the lock holder's connection. */
  keepAliveSeconds: number;
  /**
   * Namespace of lock ids: the schema the tables resolve to and their prefix, so two stores in one database do
   * not collide, and one store reached under two spellings of its schema (named, or through the search_path) does.
   */
  namespace: string;
  /** Wait before the first attempt to take a lock lost with its connection again; each later one waits twice as long. */
  retakeDelayMs: number;
}

/** The longest wait between two attempts to take a lost lock again: how long a holder may look idle after the server is back. */
const maxRetakeDelayMs = 2000;

/** A held session lock, as the adapter's writes see it. */
export interface WriterLock extends StorageLock {
  /** The token this writer set in the session's writer row; every write it makes checks it is still there. */
  readonly token: string;
  /**
   * Resolves while this writer still holds the session. A lock lost with its
   * connection (a server restart) is taken again on a fresh one first; rejects
   * with `SESSION_LOCKED` when another writer took the session meanwhile.
   */
  ensureHeld(): Promise<void>;
  /** Drops the lock's connection without a word to the server (the adapter is closing). */
  discard(): void;
}

/**
 * One writer per session, across every machine that shares the database: a
 * session-level advisory lock held on a connection of its own, and a writer
 * token in the session's row of the writers table, set by whoever takes the
 * lock and checked inside every write's transaction.
 *
 * The lock alone is not enough: a connection can die under a live holder (a
 * server restart), and the server then lets another process take the lock
 * while the first goes on writing. The token fences that first writer off: its
 * next write sees another token and is refused, writing nothing. A holder
 * that merely lost its connection, while nobody took the session, takes the
 * lock again and goes on: as soon as the server answers again (retried with
 * backoff, on timers that never keep the process alive), so that a clean-up
 * meanwhile finds the session held, and at the latest before its next write.
 *
 * A holder that dies cannot block forever: PostgreSQL drops an advisory lock
 * with its connection. A crashed process closes its socket, so the lock goes
 * at once; a vanished machine is noticed by TCP keepalive probes, which this
 * connection asks the server to send every few seconds.
 */
export async function acquireWriterLock(
  pool: PostgresPool,
  tables: PostgresTables,
  key: SessionKey,
  options: AdvisoryLockOptions,
  onRelease: (lock: WriterLock) => void,
): Promise<WriterLock> {
  const token = randomUUID();
  let connection = await lockedConnection(pool, key, options);
  try {
    await connection.client.query(
      `INSERT INTO ${tables.writers} (project_key, session_id, token, holder) VALUES ($1, $2, $3, $4)
       ON CONFLICT (project_key, session_id) DO UPDATE SET token = EXCLUDED.token, holder = EXCLUDED.holder, taken_at = now()`,
      [key.projectKey, key.sessionId, token, holderName()],
    );
  } catch (error) {
    connection.discard();
    throw error;
  }
  let superseded = false;
  let retaking: Promise<void> | undefined;
  let retakeTimer: NodeJS.Timeout | undefined;
  let failedRetakes = 0;
  let released = false;
  const finished = () => superseded || released;

  async function retake(): Promise<void> {
    let fresh: LockedConnection;
    try {
      fresh = await lockedConnection(pool, key, options);
    } catch (error) {
      if (RewindableError.isInstance(error) && error.code === RewindableErrorCode.SESSION_LOCKED) throw supersede();
      throw error;
    }
    try {
      const row = await fresh.client.query<{ token: string }>(`SELECT token FROM ${tables.writers} WHERE project_key = $1 AND session_id = $2`, [key.projectKey, key.sessionId]);
      // Someone held the session since (and let go): what this writer knows of the log may be stale.
      if (row.rows[0]?.token !== token) {
        await fresh.client.query('SELECT pg_advisory_unlock($1::bigint)', [lockId(options.namespace, key)]).catch(() => {});
        throw supersede();
      }
    } catch (error) {
      fresh.discard();
      throw error;
    }
    // Let go meanwhile (the adapter closed): the fresh connection must not keep the lock.
    if (released) return fresh.discard();
    const dead = connection;
    connection = fresh;
    dead.discard();
    fresh.whenLost(() => retakeSoon());
  }

  /** The lost lock, taken again by one attempt at a time (the background one and a write's share it). */
  function retakeNow(): Promise<void> {
    // Superseded: never take the lock again, not even for a moment (the new holder's reopen would find it taken).
    if (superseded) return Promise.reject(supersededError(key));
    if (released || !connection.lost) return Promise.resolve();
    retaking ??= retake().finally(() => {
      retaking = undefined;
    });
    return retaking;
  }

  /**
   * The lock's connection dropped: the server let the lock go, and the session
   * looks idle to everyone (a clean-up would remove it). Take it back as soon
   * as the server answers; a holder found meanwhile supersedes this one.
   */
  function retakeSoon(): void {
    if (finished() || retakeTimer !== undefined) return;
    const delay = Math.min(maxRetakeDelayMs, options.retakeDelayMs * 2 ** failedRetakes);
    retakeTimer = setTimeout(() => {
      retakeTimer = undefined;
      retakeNow().then(
        () => {
          failedRetakes = 0;
        },
        () => {
          failedRetakes += 1;
          retakeSoon();
        },
      );
    }, delay);
    // A holder waiting for the server must not keep the process alive: its next write would find out anyway.
    retakeTimer.unref();
  }

  function supersede(): RewindableError {
    superseded = true;
    clearTimeout(retakeTimer);
    retakeTimer = undefined;
    return supersededError(key);
  }

  function stop(): void {
    released = true;
    clearTimeout(retakeTimer);
    retakeTimer = undefined;
  }

  connection.whenLost(() => retakeSoon());
  const lock: WriterLock = {
    token,
    async ensureHeld() {
      if (finished()) throw supersededError(key);
      await retakeNow();
    },
    async release() {
      if (released) return;
      stop();
      onRelease(lock);
      try {
        if (!connection.lost && !superseded) {
          await connection.client.query(`DELETE FROM ${tables.writers} WHERE project_key = $1 AND session_id = $2 AND token = $3`, [key.projectKey, key.sessionId, token]);
          await connection.client.query('SELECT pg_advisory_unlock($1::bigint)', [lockId(options.namespace, key)]);
        }
      } catch {
        // The connection is gone, and the lock with it; a stale token is replaced by the next holder.
      } finally {
        connection.discard();
      }
    },
    discard() {
      stop();
      connection.discard();
    },
  };
  return lock;
}

/**
 * Checks, inside a write's transaction, that `token` is still the session's
 * writer. The row stays share-locked until the transaction ends, so a takeover
 * (which updates it) waits for this write to commit, and the new writer then
 * loads a log that includes it.
 */
export async function assertWriter(client: PostgresClient, tables: PostgresTables, key: SessionKey, token: string): Promise<void> {
  const row = await client.query<{ token: string }>(`SELECT token FROM ${tables.writers} WHERE project_key = $1 AND session_id = $2 FOR SHARE`, [
    key.projectKey,
    key.sessionId,
  ]);
  if (row.rows[0]?.token !== token) throw supersededError(key);
}

interface LockedConnection {
  readonly client: PostgresClient;
  /** The connection ended or failed: the server has dropped the advisory lock. */
  readonly lost: boolean;
  /** Calls `listener` once when the connection drops (at once if it has), never once it is discarded. */
  whenLost(listener: () => void): void;
  discard(): void;
}

/** A connection of its own that holds the session's advisory lock, or SESSION_LOCKED when another one does. */
async function lockedConnection(pool: PostgresPool, key: SessionKey, options: AdvisoryLockOptions): Promise<LockedConnection> {
  const client = await pool.connect();
  let lost = false;
  let discarded = false;
  let onLoss: (() => void) | undefined;
  // A dropped connection is reported on the client; without a listener it would crash the process.
  const noteLoss = () => {
    if (lost) return;
    lost = true;
    if (!discarded) onLoss?.();
  };
  client.on('error', noteLoss);
  client.on('end', noteLoss);
  const connection: LockedConnection = {
    client,
    get lost() {
      return lost;
    },
    whenLost(listener) {
      onLoss = listener;
      if (lost && !discarded) listener();
    },
    discard() {
      if (discarded) return;
      discarded = true;
      // The lock's connection carries its own settings: never hand it back to the pool.
      client.release(true);
    },
  };
  try {
    const probe = Math.max(1, Math.round(options.keepAliveSeconds));
    await client.query(
      `SELECT set_config('tcp_keepalives_idle', $1, false), set_config('tcp_keepalives_interval', $2, false), ` +
        `set_config('tcp_keepalives_count', '3', false), set_config('application_name', $3, false)`,
      [String(probe), String(Math.max(1, Math.round(probe / 2))), `rewindable lock ${holderName()}`.slice(0, 63)],
    );
    const result = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1::bigint) AS locked', [lockId(options.namespace, key)]);
    if (result.rows[0]?.locked !== true) {
      throw new RewindableError(
        RewindableErrorCode.SESSION_LOCKED,
        `Session ${key.sessionId} is locked: another process (on this or another machine) has it open through the same PostgreSQL database. ` +
          'Close it there first; a holder that crashed releases the lock as soon as its database connection drops.',
      );
    }
  } catch (error) {
    connection.discard();
    throw error;
  }
  return connection;
}

function supersededError(key: SessionKey): RewindableError {
  return new RewindableError(
    RewindableErrorCode.SESSION_LOCKED,
    `Session ${key.sessionId} is no longer this process's to write: its lock was lost (the connection to PostgreSQL dropped) ` +
      'and another process took the session since. Nothing was written. Reopen the session to go on from what is stored.',
    { details: { sessionId: key.sessionId, reason: 'lock-lost' } },
  );
}

function holderName(): string {
  return `${process.pid}@${os.hostname()}`;
}

/** A signed 64-bit id for the session's lock, from a hash of its key. */
function lockId(namespace: string, key: SessionKey): string {
  const digest = createHash('sha256').update(JSON.stringify([namespace, key.projectKey, key.sessionId])).digest();
  return digest.readBigInt64BE(0).toString();
}
