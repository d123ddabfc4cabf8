import type { Pool, PoolConfig } from 'pg';

export interface PoolHandle {
  /** The pool, created on first call when the adapter owns it. */
  pool(): Promise<Pool>;
  /** Ends the pool if the adapter created it; a borrowed pool is left to its owner. */
  end(): Promise<void>;
}

function isPool(value: unknown): value is Pool {
  return typeof value === 'object' && value !== null && typeof (value as Pool).connect === 'function' && typeof (value as Pool).query === 'function';
}

/**
 * Lazy access to a `pg.Pool`: a borrowed one as is, or one built from a
 * connection string or configuration on first use. `pg` is imported only
 * then, so importing this adapter costs nothing until it is used.
 */
export function borrowOrCreatePool(connection: string | PoolConfig | Pool): PoolHandle {
  if (isPool(connection)) return { pool: async () => connection, end: async () => {} };
  let created: Promise<Pool> | undefined;
  return {
    pool() {
      created ??= import('pg').then((module) => {
        // The CommonJS package arrives as `default` under ESM and as the module itself when bundled to CommonJS.
        const pg = (module as unknown as { default?: typeof module }).default ?? module;
        const config: PoolConfig = typeof connection === 'string' ? { connectionString: connection } : connection;
        const pool = new pg.Pool({ keepAlive: true, connectionTimeoutMillis: 10_000, application_name: 'rewindable', ...config });
        // An idle connection cut by a server restart is reported here; the pool replaces it. Without
        // a listener the event would crash the process, and the next query reports the outage anyway.
        pool.on('error', () => {});
        return pool;
      });
      return created;
    },
    async end() {
      if (created === undefined) return;
      const pool = await created;
      created = undefined;
      await pool.end();
    },
  };
}
