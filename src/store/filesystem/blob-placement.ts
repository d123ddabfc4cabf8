import os from 'node:os';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { mapConcurrently } from '../../util/concurrency.js';
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
 * Bundles compressed at once. Each compressor holds about 400 KiB of zlib
 * state and its output buffers, which V8 counts as external memory: a first
 * scan of 500,000 files that started every bundle of a 16 MiB batch at once
 * (128 compressors) spent half its time in the full garbage collections that
 * memory set off. As many as the processor and libuv's 4 pool threads can
 * run side by side is enough; each writes into one buffer the size of a
 * bundle rather than 16 KiB chunks joined afterwards.
 */
const compressors = Math.max(1, Math.min(4, os.availableParallelism()));

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
  const compressed = await mapConcurrently(groups, compressors, (group) => deflateRaw(Buffer.concat(group.map((blob) => blob.bytes)), { level: 1, chunkSize: bundleBytes }));
  groups.forEach((group, index) => {
    const raw = group.reduce((sum, blob) => sum + blob.bytes.length, 0);
    if (compressed[index]!.length < raw * 0.9) pack.appendBundle(group, compressed[index]!);
    else pack.append(group);
  });
}
