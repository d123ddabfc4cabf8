import type { PostgresClient } from './postgres-driver.js';
import type { BlobWrite, SessionKey } from '../storage-adapter.js';
import type { PostgresTables } from './postgres-schema.js';

/** Above this many bytes in one call, ask which blobs the server already has before sending any. */
const lookupFirstBytes = 256 * 1024;
/** Bytes and rows per INSERT statement. */
const statementBytes = 16 * 1024 * 1024;
const statementRows = 1000;

/**
 * Stores blobs and records that `key` holds them. Runs inside the caller's
 * transaction, or opens one: the blob rows stay locked until the holder rows
 * are committed, so a concurrent `delete` of another session cannot remove a
 * blob this session is claiming.
 */
export async function storeBlobs(client: PostgresClient, tables: PostgresTables, key: SessionKey, blobs: readonly BlobWrite[], inTransaction = false): Promise<void> {
  const byHash = new Map(blobs.map((blob) => [blob.hash, blob]));
  if (byHash.size === 0) return;
  if (!inTransaction) await client.query('BEGIN');
  try {
    // One order for every transaction that locks blob rows, so two of them cannot deadlock.
    const hashes = [...byHash.keys()].sort();
    let missing = hashes;
    const total = blobs.reduce((sum, blob) => sum + blob.bytes.length, 0);
    if (total >= lookupFirstBytes) {
      const found = await client.query<{ hash: string }>(
        `UPDATE ${tables.blobs} SET used_at = now() WHERE hash IN (SELECT hash FROM ${tables.blobs} WHERE hash = ANY($1::text[]) ORDER BY hash FOR UPDATE) RETURNING hash`,
        [hashes],
      );
      const present = new Set(found.rows.map((row) => row.hash));
      missing = hashes.filter((hash) => !present.has(hash));
    }
    for (const chunk of chunks(missing.map((hash) => byHash.get(hash)!))) {
      const values = chunk.flatMap((blob) => [blob.hash, toBuffer(blob.bytes), blob.bytes.length]);
      const rows = chunk.map((_, index) => `($${index * 3 + 1}, $${index * 3 + 2}, $${index * 3 + 3})`).join(', ');
      // An existing row is touched rather than skipped: the update locks it and renews its grace period.
      await client.query(`INSERT INTO ${tables.blobs} (hash, bytes, size) VALUES ${rows} ON CONFLICT (hash) DO UPDATE SET used_at = now()`, values);
    }
    await client.query(
      `INSERT INTO ${tables.sessionBlobs} (project_key, session_id, hash) SELECT $1, $2, unnest($3::text[]) ON CONFLICT DO NOTHING`,
      [key.projectKey, key.sessionId, hashes],
    );
    if (!inTransaction) await client.query('COMMIT');
  } catch (error) {
    if (!inTransaction) await client.query('ROLLBACK').catch(() => {});
    throw error;
  }
}

function* chunks(blobs: BlobWrite[]): Generator<BlobWrite[]> {
  let chunk: BlobWrite[] = [];
  let bytes = 0;
  for (const blob of blobs) {
    if (chunk.length > 0 && (bytes + blob.bytes.length > statementBytes || chunk.length >= statementRows)) {
      yield chunk;
      chunk = [];
      bytes = 0;
    }
    chunk.push(blob);
    bytes += blob.bytes.length;
  }
  if (chunk.length > 0) yield chunk;
}

/** node-postgres sends a Buffer as a binary parameter; other views are wrapped without copying. */
function toBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
