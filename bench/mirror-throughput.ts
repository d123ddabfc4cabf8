/**
 * Mirror throughput against a real PostgreSQL server: how fast entries and
 * blob bytes reach the database through `mirroredStorage`, timed from the
 * first write until `flush()` resolves (the remote holds everything).
 *
 * Starts its own throwaway PostgreSQL cluster with the server's durable
 * defaults (fsync and synchronous commit on). Run: npx tsx bench/mirror-throughput.ts
 * Options: --entries N (default 20000), --blob-mib N (default 64 per blob size).
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { filesystemStorage } from '../src/index.js';
import { mirroredStorage } from '../src/store/mirror/mirrored-storage.js';
import { postgresStorage } from '../src/store/postgres/postgres-storage.js';
import type { BlobWrite, StorageAdapter, StoreEntry } from '../src/store/storage-adapter.js';
import { faultyStorage } from '../src/testing/index.js';
import { startPostgres } from '../test/helpers/postgres-server.js';

const argument = (name: string, fallback: number) => {
  const index = process.argv.indexOf(`--${name}`);
  return index === -1 ? fallback : Number(process.argv[index + 1]);
};
const entryCount = argument('entries', 20_000);
const blobMiB = argument('blob-mib', 64);

/** A record the size and shape of the manager's `write` records (they name no backup). */
function writeEntry(index: number): StoreEntry {
  return {
    type: 'write',
    path: `src/module-${index % 500}/file-${index}.ts`,
    state: { kind: 'file', sha256: createHash('sha256').update(String(index)).digest('hex'), size: 4096, mode: 0o644 },
    observed: { sig: `2049:${1_000_000 + index}:4096:33188:1718000000000000000:1718000000000000000`, atNs: '1718000000000000000' },
    tool: 'Edit',
    toolCallId: `toolu_${index.toString(36).padStart(12, '0')}`,
    at: new Date(1_718_000_000_000 + index).toISOString(),
  };
}

/** The manager's `track` record for a backup: the mirror sends the blob it names before it. */
function trackEntry(index: number, hash: string, size: number): StoreEntry {
  return {
    type: 'track',
    checkpointId: '6f1c2a9e-0b7d-4c3e-9a8f-1e2d3c4b5a69',
    path: `assets/file-${index}.bin`,
    state: { kind: 'file', sha256: hash, size, mode: 0o644 },
    at: new Date(1_718_000_000_000 + index).toISOString(),
  };
}

function blob(bytes: Buffer): BlobWrite {
  return { hash: createHash('sha256').update(bytes).digest('hex'), bytes };
}

interface Row {
  scenario: string;
  items: string;
  seconds: number;
  rate: string;
}

const rows: Row[] = [];
const record = (scenario: string, items: string, seconds: number, rate: string) => {
  rows.push({ scenario, items, seconds, rate });
  console.error(`${scenario}: ${rate} (${seconds.toFixed(2)} s)`);
};

const server = await startPostgres();
const workDirectory = fs.mkdtempSync(path.join(os.tmpdir(), 'rewindable-bench-'));
const connection = server.connectionString;
try {
  const newMirror = (remote: StorageAdapter = postgresStorage({ connection })) =>
    mirroredStorage({ local: filesystemStorage({ directory: path.join(workDirectory, randomUUID()), durability: 'none' }), remote, flushTimeoutMs: 600_000 });
  const newKey = () => ({ projectKey: '-bench-project', sessionId: randomUUID() });

  // Warm-up: tables, connections, JIT.
  {
    const storage = newMirror();
    const key = newKey();
    for (let index = 0; index < 200; index += 1) await storage.append(key, [writeEntry(index)]);
    await storage.close();
  }

  // 1. Entries, one per append (as the manager writes them), mirrored live.
  {
    const storage = newMirror();
    const key = newKey();
    const started = performance.now();
    for (let index = 0; index < entryCount; index += 1) await storage.append(key, [writeEntry(index)]);
    const appended = performance.now();
    await storage.flush();
    const seconds = (performance.now() - started) / 1000;
    record('entries, live (1 per append, as the manager writes)', `${entryCount} entries`, seconds, `${Math.round(entryCount / seconds)} entries/s`);
    const returned = (appended - started) / 1000;
    record('  of which: the appends themselves returned', `${entryCount} entries`, returned, `${Math.round(entryCount / returned)} entries/s`);
    await storage.close();
  }

  // 2. Catch-up: a backlog written while the database was unreachable, sent once it is back.
  {
    const remote = faultyStorage(postgresStorage({ connection }));
    const storage = newMirror(remote);
    const key = newKey();
    remote.down = true;
    for (let index = 0; index < entryCount; index += 1) await storage.append(key, [writeEntry(index)]);
    const started = performance.now();
    remote.down = false;
    await storage.flush();
    const seconds = (performance.now() - started) / 1000;
    record('entries, catch-up after an outage', `${entryCount} entries`, seconds, `${Math.round(entryCount / seconds)} entries/s`);
    await storage.close();
  }

  // 3. Blobs with the entry that names each, at two sizes; random bytes (nothing to compress).
  for (const blobBytes of [64 * 1024, 1024 * 1024]) {
    const storage = newMirror();
    const key = newKey();
    const count = Math.max(1, Math.round((blobMiB * 1024 * 1024) / blobBytes));
    const blobs = Array.from({ length: count }, () => blob(randomBytes(blobBytes)));
    const started = performance.now();
    for (const [index, item] of blobs.entries()) await storage.append(key, [trackEntry(index, item.hash, blobBytes)], [item]);
    const returned = (performance.now() - started) / 1000;
    await storage.flush();
    const seconds = (performance.now() - started) / 1000;
    const mebibytes = (count * blobBytes) / 1024 / 1024;
    record(`blobs of ${blobBytes / 1024} KiB, live`, `${count} blobs, ${mebibytes} MiB`, seconds, `${(mebibytes / seconds).toFixed(1)} MiB/s`);
    record('  of which: the appends themselves returned', `${count} blobs`, returned, `${(mebibytes / returned).toFixed(1)} MiB/s`);
    await storage.close();
  }

  // 4. For comparison: the PostgreSQL adapter on its own, one awaited append per entry.
  {
    const storage = postgresStorage({ connection });
    const key = newKey();
    const count = Math.min(entryCount, 2000);
    const started = performance.now();
    for (let index = 0; index < count; index += 1) await storage.append(key, [writeEntry(index)]);
    const seconds = (performance.now() - started) / 1000;
    record('postgres adapter alone (1 awaited append per entry)', `${count} entries`, seconds, `${Math.round(count / seconds)} entries/s`);
    await storage.close();
  }

  const version = fs.readFileSync(path.join(server.directory, 'data', 'PG_VERSION'), 'utf8').trim();
  console.log(`\nMirror throughput: filesystem local (durability 'none') -> PostgreSQL ${version} on 127.0.0.1 (fsync on, synchronous_commit on)`);
  console.log(`${os.cpus().length} CPU(s) ${os.cpus()[0]?.model ?? ''}, Node ${process.version}\n`);
  console.log('| scenario | volume | time (s) | throughput |');
  console.log('|---|---|---:|---:|');
  for (const row of rows) console.log(`| ${row.scenario} | ${row.items} | ${row.seconds.toFixed(2)} | ${row.rate} |`);
} finally {
  await server.destroy();
  fs.rmSync(workDirectory, { recursive: true, force: true });
}
