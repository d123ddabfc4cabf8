import os from 'node:os';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { mapConcurrently } from '../../util/concurrency.js';
import { WorkerPool, workerModule } from '../../util/worker-pool.js';
import type { BlobWrite, SessionKey } from '../storage-adapter.js';
import type { BlobPack, PackBlob } from './blob-pack.js';
import { writeLooseBlob } from './loose-blobs.js';
import { nothingToFlush, type SessionPacks } from './session-packs.js';

const deflateRaw = promisify(zlib.deflateRaw);
/**
 * Uncompressed size of a bundle. Reading one member inflates its bundle up to
 * that member, so bundles stay small; deflate's window is 32 KiB, so larger
 * ones would barely compress better.
 */
const bundleBytes = 128 * 1024;
/** A write of at least this many first versions at once is a bulk backup (a capture scope's first scan): bundled. */
const bulkMinimumBlobs = 16;
/**
 * Bundles are compressed on two worker threads. Each compressor holds about
 * 400 KiB of zlib state and its output buffers, which V8 counts as external
 * memory of the thread that made it, and each such megabyte brings that
 * thread's next full garbage collection closer. On the caller's thread, whose
 * heap holds the session state (a gigabyte at 500,000 files), those
 * collections took half of a first scan's time; a worker's heap is small.
 */
const compressorPool = new WorkerPool<Uint8Array<ArrayBuffer>, Uint8Array<ArrayBuffer>>(workerModule(import.meta.url, 'deflate-worker'), 2);
/** Without workers (a one-file bundle of the library, or workers that failed): as many at once as libuv's 4 pool threads run. */
const compressorsHere = Math.max(1, Math.min(4, os.availableParallelism()));

export interface BlobPlacement {
  packs: SessionPacks;
  blobsDirectory: string;
  durable: boolean;
  /** Blobs of at least this many bytes are loose files shared by all sessions; smaller ones go to the session's pack. */
  looseBlobMinBytes: number;
}

/** What a write knows of its blobs from the entries stored with it (see `PathVersions`). */
export interface BlobHistory {
  /** Each new version's predecessor: the base of a delta. */
  previous: ReadonlyMap<string, string>;
  /** Last versions of files just deleted, to take out of their bundles. */
  deleted: readonly string[];
}

const noHistory: BlobHistory = { previous: new Map(), deleted: [] };

/**
 * Writes the blobs the session's store lacks and returns what makes them
 * durable. Large ones become loose files (flushed as they are written, noted
 * in the pack); a bulk of first versions is compressed in bundles; any other
 * goes to the pack as it is, or as a delta of its predecessor.
 */
export async function storeBlobs(placement: BlobPlacement, key: SessionKey, blobs: readonly BlobWrite[], history: BlobHistory = noHistory): Promise<() => Promise<void>> {
  const loose = blobs.filter((blob) => blob.bytes.length >= placement.looseBlobMinBytes);
  for (const blob of loose) await writeLooseBlob(placement.blobsDirectory, blob.hash, blob.bytes, placement.durable);
  const small = blobs.filter((blob) => blob.bytes.length < placement.looseBlobMinBytes);
  const firstVersions = small.filter((blob) => !history.previous.has(blob.hash));
  const bulk = firstVersions.length >= bulkMinimumBlobs ? new Set(firstVersions) : new Set<BlobWrite>();
  const taking = history.deleted.length > 0 ? placement.packs.openWriter(key) : undefined;
  if (loose.length === 0 && small.length === 0 && taking === undefined) return nothingToFlush;
  const { pack, flush } = placement.packs.writer(key);
  pack.noteLoose(loose.map((blob) => blob.hash));
  pack.takeOut(history.deleted);
  const single = small.filter((blob) => !bulk.has(blob));
  if (single.length > 0) pack.append(single.map((blob): PackBlob => ({ ...blob, similarTo: history.previous.get(blob.hash) })));
  if (bulk.size > 0) await appendBundles(pack, [...bulk]);
  return flush;
}

/**
 * Compresses blobs in bundles of about 128 KiB: one compressor per bundle
 * instead of per file, run on the thread pool in parallel. A bundle that does
 * not shrink is stored as plain entries.
 */
async function appendBundles(pack: BlobPack, blobs: readonly BlobWrite[]): Promise<void> {
  const seen = new Set<string>();
  const groups: BlobWrite[][] = [];
  let size = 0;
  for (const blob of blobs) {
    if (pack.has(blob.hash) || seen.has(blob.hash)) continue;
    seen.add(blob.hash);
    if (groups.length === 0 || size + blob.bytes.length > bundleBytes) {
      groups.push([]);
      size = 0;
    }
    groups.at(-1)!.push(blob);
    size += blob.bytes.length;
  }
  const compressed = await compressBundles(groups.map((group) => group.map((blob) => blob.bytes)));
  groups.forEach((group, index) => {
    const raw = group.reduce((sum, blob) => sum + blob.bytes.length, 0);
    if (compressed[index]!.length < raw * 0.9) pack.appendBundle(group, compressed[index]!);
    else pack.append(group);
  });
}

let bundlesCompressedOnWorkers = 0;

/** How many bundles worker threads have compressed in this process: for tests, that a bulk backup really left this thread. */
export function bundlesCompressedOffMainThread(): number {
  return bundlesCompressedOnWorkers;
}

/** Each bundle's members deflated as one raw stream, on the compressor threads when they run. */
async function compressBundles(bundles: ReadonlyArray<readonly Uint8Array[]>): Promise<Buffer[]> {
  const workers = compressorPool.get();
  if (workers !== undefined) {
    try {
      // Two bundles in flight per worker: one compressed while the other's bytes travel.
      return await mapConcurrently(bundles, workers.length * 2, async (members, index) => {
        const raw = joined(members);
        const compressed = await workers[index % workers.length]!.run(raw, [raw.buffer]);
        bundlesCompressedOnWorkers += 1;
        return Buffer.from(compressed.buffer, compressed.byteOffset, compressed.byteLength);
      });
    } catch {
      // A worker failed (the pool is given up): every bundle again, here; the members' own bytes were never moved.
    }
  }
  return mapConcurrently(bundles, compressorsHere, (members) => deflateRaw(joined(members), { level: 1, chunkSize: bundleBytes }));
}

/** The members' bytes one after another, in a buffer of their own (never a slice of a shared pool, so it can be moved). */
function joined(members: readonly Uint8Array[]): Uint8Array<ArrayBuffer> {
  // Not zero-filled (every byte is written below), and never from the shared pool (`allocUnsafeSlow`).
  const raw = Buffer.allocUnsafeSlow(members.reduce((sum, member) => sum + member.length, 0));
  let at = 0;
  for (const member of members) {
    raw.set(member, at);
    at += member.length;
  }
  return raw;
}
