import { createHash } from 'node:crypto';
import os from 'node:os';
import type { Pool, PoolClient } from 'pg';
import { RewindableError, RewindableErrorCode } from '../../errors.js';
import type { SessionKey, StorageLock } from '../storage-adapter.js';

export interface AdvisoryLockOptions {
  /** Seconds of silence before the server probes the lock holder's connection. */
  keepAliveSeconds: number;
  /** Namespace of lock ids (the adapter's table prefix and schema), so two stores in one database do not collide. */
  namespace: string;
}

/**
 * One writer per session, across every machine that shares the database: a
 * session-level advisory lock held on a connection of its own for as long as
 * the session is open.
 *
 * A holder that dies cannot block forever: PostgreSQL drops an advisory lock
 * with its connection. A crashed process closes its socket, so the lock goes
 * at once; a vanished machine is noticed by TCP keepalive probes, which this
 * connection asks the server to send every few seconds.
 */
export async function acquireAdvisoryLock(pool: Pool, key: SessionKey, options: AdvisoryLockOptions, held: Set<PoolClient>): Promise<StorageLock> {
  const client = await pool.connect();
  let lost = false;
  // A dropped connection is reported on the client; without a listener it would crash the process.
  const onError = () => {
    lost = true;
  };
  client.on('error', onError);
  const discard = () => {
    held.delete(client);
    // The lock's connection carries its own settings: never hand it back to the pool.
    client.release(true);
  };
  try {
    const probe = Math.max(1, Math.round(options.keepAliveSeconds));
    await client.query(
      `SELECT set_config('tcp_keepalives_idle', $1, false), set_config('tcp_keepalives_interval', $2, false), ` +
        `set_config('tcp_keepalives_count', '3', false), set_config('application_name', $3, false)`,
      [String(probe), String(Math.max(1, Math.round(probe / 2))), `rewindable lock ${process.pid}@${os.hostname()}`.slice(0, 63)],
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
    discard();
    throw error;
  }
  held.add(client);
  let released = false;
  return {
    async release() {
      if (released) return;
      released = true;
      try {
        if (!lost) await client.query('SELECT pg_advisory_unlock($1::bigint)', [lockId(options.namespace, key)]);
      } catch {
        // The connection is gone, and the lock with it.
      } finally {
        discard();
      }
    },
  };
}

/** A signed 64-bit id for the session's lock, from a hash of its key. */
function lockId(namespace: string, key: SessionKey): string {
  const digest = createHash('sha256').update(JSON.stringify([namespace, key.projectKey, key.sessionId])).digest();
  return digest.readBigInt64BE(0).toString();
}
