import type * as Pg from 'pg';
import { RewindableError, RewindableErrorCode } from '../../errors.js';
import { commonJsExports } from '../../util/commonjs-exports.js';
import type { PostgresPool, PostgresPoolConfig } from './postgres-driver.js';

export interface PoolHandle<PoolType extends PostgresPool> {
  /** The pool, created on first call when the adapter owns it. */
  pool(): Promise<PoolType>;
  /** Ends the pool if the adapter created it; a borrowed pool is left to its owner. */
  end(): Promise<void>;
}

function isPool(value: unknown): value is PostgresPool {
  return typeof value === 'object' && value !== null && typeof (value as PostgresPool).connect === 'function' && typeof (value as PostgresPool).query === 'function';
}

/**
 * Lazy access to a `pg.Pool`: a borrowed one as is, or one built from a
 * connection string or configuration on first use. `pg` is imported only
 * then, so importing this adapter costs nothing until it is used, and works
 * without `pg` installed.
 */
export function borrowOrCreatePool<PoolType extends PostgresPool>(connection: string | PostgresPoolConfig | PoolType): PoolHandle<PoolType> {
  if (isPool(connection)) return { pool: async () => connection as PoolType, end: async () => {} };
  let created: Promise<PoolType> | undefined;
  return {
    pool() {
      created ??= createPool(typeof connection === 'string' ? { connectionString: connection } : connection).catch((error: unknown) => {
        created = undefined; // installed meanwhile, the next call finds it
        throw error;
      }) as Promise<PoolType>;
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

async function createPool(config: PostgresPoolConfig): Promise<PostgresPool> {
  const pg = await importDriver();
  // Our configuration type mirrors `pg.PoolConfig`, leaving `pg`'s own option types `unknown`: `pg` checks those.
  const pool = new pg.Pool({ keepAlive: true, connectionTimeoutMillis: 10_000, application_name: 'rewindable', ...(config as Pg.PoolConfig) });
  // An idle connection cut by a server restart is reported here; the pool replaces it. Without
  // a listener the event would crash the process, and the next query reports the outage anyway.
  pool.on('error', () => {});
  return pool;
}

/** The `pg` module, or a STORE_IO that says to install it (it is an optional peer dependency). */
async function importDriver(): Promise<typeof Pg> {
  try {
    return commonJsExports<typeof Pg>(await import('pg'));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') throw error;
    throw new RewindableError(
      RewindableErrorCode.STORE_IO,
      // The first line only: CommonJS appends the whole require stack.
      `PostgreSQL storage needs the \`pg\` package, which could not be loaded (${(error as Error).message.split('\n')[0]}). ` +
        'Install it next to rewindable: `npm install pg`.',
      { cause: error, details: { retryable: false, missingPackage: 'pg' } },
    );
  }
}
