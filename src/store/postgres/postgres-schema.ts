import type { PostgresClient } from './postgres-driver.js';
import { RewindableError, RewindableErrorCode } from '../../errors.js';

/**
 * The version of the table layout below; stored in the meta table so a later
 * release can migrate. 2 added the writers table, and the entries' layout
 * version: a release that knows only 1 refuses the tables when it starts, and
 * one already running when they were brought up to date can no longer append
 * (its entries lack the column), rather than write without the writer check.
 */
export const schemaVersion = 2;

/** Quoted, optionally schema-qualified names of the adapter's tables. */
export interface PostgresTables {
  readonly schema: string | undefined;
  readonly prefix: string;
  readonly meta: string;
  readonly sessions: string;
  readonly entries: string;
  readonly blobs: string;
  readonly sessionBlobs: string;
  readonly writers: string;
}

const identifierPattern = /^[a-z_][a-z0-9_]*$/;

export function postgresTables(schema: string | undefined, prefix: string): PostgresTables {
  for (const [option, value] of [['schema', schema], ['tablePrefix', prefix]] as const) {
    // Names are spliced into SQL, so only plain lowercase identifiers are accepted.
    if (value !== undefined && !identifierPattern.test(value) && !(option === 'tablePrefix' && value === '')) {
      throw new RewindableError(
        RewindableErrorCode.INVALID_OPTIONS,
        `Invalid PostgreSQL ${option} ${JSON.stringify(value)}: use lowercase letters, digits and underscores, starting with a letter or underscore.`,
      );
    }
  }
  const name = (table: string) => (schema === undefined ? `"${prefix}${table}"` : `"${schema}"."${prefix}${table}"`);
  return {
    schema,
    prefix,
    meta: name('meta'),
    sessions: name('sessions'),
    entries: name('entries'),
    blobs: name('blobs'),
    sessionBlobs: name('session_blobs'),
    writers: name('session_writers'),
  };
}

/**
 * Creates the tables if they do not exist. Runs in one transaction under an
 * advisory lock: `CREATE TABLE IF NOT EXISTS` from two processes at once can
 * still collide on the catalog.
 *
 *   sessions       one row per session: entry count (the next sequence number), log bytes, times
 *   entries        the log: (session, sequence) -> entry, with the id of the append that wrote it and the layout version of its release
 *   blobs          content-addressed backups: hash -> bytea, shared by every session
 *   session_blobs  which session holds which blob (delete frees exactly the unshared ones)
 *   session_writers  the token of the process that last took each session's lock (fences off a writer that lost it)
 *
 * Every statement is idempotent, so the same call creates a fresh layout and
 * brings an older one up to date.
 */
export async function createTables(client: PostgresClient, tables: PostgresTables): Promise<string> {
  const { prefix } = tables;
  await client.query('BEGIN');
  try {
    // Keyed by the schema the tables go to, however it is named (the default is the search_path's first).
    await client.query(`SELECT pg_advisory_xact_lock(hashtext('rewindable schema ' || coalesce($1::text, current_schema()::text, '') || '.' || $2))`, [tables.schema ?? null, prefix]);
    if (tables.schema !== undefined) await client.query(`CREATE SCHEMA IF NOT EXISTS "${tables.schema}"`);
    await client.query(`CREATE TABLE IF NOT EXISTS ${tables.meta} (name text PRIMARY KEY, value text NOT NULL)`);
    await client.query(`
      CREATE TABLE IF NOT EXISTS ${tables.sessions} (
        project_key text NOT NULL,
        session_id text NOT NULL,
        entry_count bigint NOT NULL,
        log_bytes bigint NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (project_key, session_id)
      )`);
    await client.query(`
      CREATE TABLE IF NOT EXISTS ${tables.entries} (
        project_key text NOT NULL,
        session_id text NOT NULL,
        sequence bigint NOT NULL,
        batch_id uuid NOT NULL,
        entry json NOT NULL,
        layout_version smallint NOT NULL,
        PRIMARY KEY (project_key, session_id, sequence)
      )`);
    await fenceOffOlderWriters(client, tables);
    await client.query(`CREATE INDEX IF NOT EXISTS "${prefix}entries_batch" ON ${tables.entries} (project_key, session_id, batch_id)`);
    await client.query(`
      CREATE TABLE IF NOT EXISTS ${tables.blobs} (
        hash text PRIMARY KEY,
        bytes bytea NOT NULL,
        size integer NOT NULL,
        used_at timestamptz NOT NULL DEFAULT now()
      )`);
    await client.query(`
      CREATE TABLE IF NOT EXISTS ${tables.sessionBlobs} (
        project_key text NOT NULL,
        session_id text NOT NULL,
        hash text NOT NULL,
        PRIMARY KEY (project_key, session_id, hash)
      )`);
    await client.query(`CREATE INDEX IF NOT EXISTS "${prefix}session_blobs_hash" ON ${tables.sessionBlobs} (hash)`);
    await client.query(`
      CREATE TABLE IF NOT EXISTS ${tables.writers} (
        project_key text NOT NULL,
        session_id text NOT NULL,
        token uuid NOT NULL,
        holder text NOT NULL,
        taken_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (project_key, session_id)
      )`);
    await client.query(`INSERT INTO ${tables.meta} (name, value) VALUES ('schemaVersion', $1) ON CONFLICT (name) DO NOTHING`, [String(schemaVersion)]);
    const stored = await client.query<{ value: string }>(`SELECT value FROM ${tables.meta} WHERE name = 'schemaVersion'`);
    const version = Number(stored.rows[0]?.value);
    if (version < schemaVersion) await client.query(`UPDATE ${tables.meta} SET value = $1 WHERE name = 'schemaVersion'`, [String(schemaVersion)]);
    if (version > schemaVersion) {
      throw new RewindableError(
        RewindableErrorCode.STORE_IO,
        `The rewindable tables in PostgreSQL (${tables.sessions} ...) have layout version ${version}, newer than this release understands (${schemaVersion}). Upgrade rewindable.`,
      );
    }
    const located = await client.query<{ schema: string }>(`SELECT relnamespace::regnamespace::text AS schema FROM pg_class WHERE oid = $1::regclass`, [tables.sessions]);
    await client.query('COMMIT');
    return located.rows[0]!.schema;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  }
}

/**
 * Gives entries of a layout of version 1 their column `layout_version` (1 for
 * the rows there are), without a default: a process of a release that knows
 * only version 1 and is still running passed its check of the version when
 * it started, and its appends, which do not name the column, now fail rather
 * than write beside this release's writer check. The column is added only
 * when it is missing: altering the table takes a lock every reader waits for.
 */
async function fenceOffOlderWriters(client: PostgresClient, tables: PostgresTables): Promise<void> {
  const found = await client.query(`SELECT 1 FROM pg_attribute WHERE attrelid = $1::regclass AND attname = 'layout_version' AND NOT attisdropped`, [tables.entries]);
  if (found.rowCount !== 0) return;
  await client.query(`ALTER TABLE ${tables.entries} ADD COLUMN layout_version smallint NOT NULL DEFAULT 1`);
  await client.query(`ALTER TABLE ${tables.entries} ALTER COLUMN layout_version DROP DEFAULT`);
}
