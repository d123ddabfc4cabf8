/**
 * The parts of node-postgres (`pg`) the adapter uses, declared here rather
 * than imported from `pg`'s types: the package's declarations then type-check
 * in a project that has no `@types/pg` (with `skipLibCheck: false` too). A
 * real `pg.Pool`, its clients and a `pg.PoolConfig` are assignable to them.
 */

/** What a query resolves to (the fields the adapter reads of `pg.QueryResult`). */
export interface PostgresQueryResult<Row> {
  rows: Row[];
  rowCount: number | null;
}

/** A connection checked out of the pool (`pg.PoolClient`). */
export interface PostgresClient {
  // `any` as in `pg`: a row's shape is the query's business, stated at each call.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  query<Row extends Record<string, any> = any>(text: string, values?: unknown[]): Promise<PostgresQueryResult<Row>>;
  on(event: 'error' | 'end', listener: () => void): unknown;
  off(event: 'error', listener: () => void): unknown;
  /** Back to the pool; given `true` or an error, the connection is closed instead. */
  release(destroy?: boolean | Error): void;
}

/** A connection pool (`pg.Pool`): the adapter borrows one you pass and never ends it. */
export interface PostgresPool {
  connect(): Promise<PostgresClient>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  query<Row extends Record<string, any> = any>(text: string, values?: unknown[]): Promise<PostgresQueryResult<Row>>;
  end(): Promise<void>;
}

/**
 * A pool configuration, as `new pg.Pool(config)` takes it (`pg.PoolConfig`).
 * Options whose types come from `pg` or Node's `tls` are left `unknown` here:
 * `pg` checks them when it builds the pool.
 */
export interface PostgresPoolConfig {
  connectionString?: string | undefined;
  host?: string | undefined;
  port?: number | undefined;
  user?: string | undefined;
  password?: string | (() => string | Promise<string>) | undefined;
  database?: string | undefined;
  ssl?: unknown;
  max?: number | undefined;
  min?: number | undefined;
  idleTimeoutMillis?: number | undefined | null;
  connectionTimeoutMillis?: number | undefined;
  allowExitOnIdle?: boolean | undefined;
  maxUses?: number | undefined;
  maxLifetimeSeconds?: number | undefined;
  keepAlive?: boolean | undefined;
  keepAliveInitialDelayMillis?: number | undefined;
  statement_timeout?: false | number | undefined;
  query_timeout?: number | undefined;
  lock_timeout?: number | undefined;
  idle_in_transaction_session_timeout?: number | undefined;
  application_name?: string | undefined;
  fallback_application_name?: string | undefined;
  options?: string | undefined;
  client_encoding?: string | undefined;
  enableChannelBinding?: boolean | undefined;
  sslnegotiation?: 'postgres' | 'direct' | undefined;
  pipeline?: boolean | undefined;
  types?: unknown;
  stream?: unknown;
  log?: unknown;
  Promise?: unknown;
  Client?: unknown;
  onConnect?: unknown;
  verify?: unknown;
}
