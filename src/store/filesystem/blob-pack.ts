import { hash as digest } from 'node:crypto';
import fs from 'node:fs';
import { constants as zlibConstants, crc32, deflateRawSync, inflateRawSync } from 'node:zlib';
import { flushFileData, writeAllAt } from '../../fs/flush.js';
import { commonPrefixLength, commonSuffixLength } from '../../util/byte-compare.js';
import type { BlobWrite } from '../storage-adapter.js';
import { openStoreFile } from './store-file.js';

/**
 * A pack: one append-only file holding a session's smaller blobs back to back.
 * Backups are taken on the agent's hot path, and appending to a file that is
 * already open costs a fraction of creating a file per blob. Entries are never
 * rewritten; a crash can only leave a torn entry at the end, which the next
 * writer cuts off.
 *
 * Entry: 72-byte header, then the payload.
 *   0  "RWPK"          4  format version (2)   5  kind   6  delta depth
 *   8  SHA-256 of the content (32 bytes; zero for a bundle)
 *   40 content size (48-bit)   48 payload size (48-bit)
 *   64 CRC-32 of bytes 0-63
 * Kinds:
 *   full   the content as is;
 *   delta  base SHA-256 (32 bytes), prefix and suffix lengths (48-bit each),
 *          then the bytes between them; prefix and suffix come from the base;
 *   bundle many blobs compressed together (a capture scope's first scan):
 *          member count (32-bit), per member its SHA-256, start and length
 *          (48-bit each) in the uncompressed data, then the raw-deflated data;
 *   loose  no payload: the blob is a loose file, stored before this entry.
 *          The session holds it even if the file goes missing (damage, not
 *          an append a crash interrupted). Readers of an older version skip it.
 */

const magic = Buffer.from('RWPK');
const formatVersion = 2;
const headerSize = 72;
const kindFull = 0;
const kindDelta = 1;
const kindBundle = 2;
const kindLoose = 3;
/** Longest chain of deltas before a full copy is stored again (bounds read cost). */
const maxDeltaDepth = 24;
/** Below this size a delta saves too little to be worth a chain. */
const minDeltaSize = 1024;
const memberSize = 32 + 6 + 6;
/** Bundles inflate into one buffer up to this raw size (they are far smaller). */
const maxSingleChunk = 64 * 1024 * 1024;
/** Reading part of a bundle: compressed bytes in proportion to the raw bytes needed, times this, plus the slack. */
const prefixMargin = 1.2;
const prefixSlackBytes = 2048;
/** Recently used contents kept in memory (see `recent`). */
const recentLimitBytes = 4 * 1024 * 1024;
/** How much larger than a blob its buffer may be for the pack to keep the buffer itself (`keepable`). */
const keepSlackBytes = 4096;
/** Inflated bundles kept in memory (see `bundles`): sixteen bundles of the usual 128 KiB. */
const bundleCacheBytes = 2 * 1024 * 1024;

/** A full or delta entry of its own. */
interface StoredEntry {
  kind: typeof kindFull | typeof kindDelta;
  offset: number;
  depth: number;
  size: number;
  payloadLength: number;
}

/**
 * Where a bundle's compressed bytes lie and how long they inflate, taken from
 * its table once (when the pack is opened, or the bundle written), so that
 * reading a member is one read of the file, not three.
 */
interface BundleInfo {
  offset: number;
  compressedStart: number;
  compressedLength: number;
  /** The end of its furthest member: what it inflates to, as far as its table tells. */
  rawLength: number;
  members: number;
}

type PackEntry = StoredEntry | { kind: 'member'; bundle: BundleInfo; start: number; size: number } | { kind: typeof kindLoose };

export type PackBlob = BlobWrite & { similarTo?: string | undefined };

export class BlobPack {
  /**
   * Contents recently appended, newest last: the next version of a file is
   * stored as a delta against the previous one, which would otherwise be
   * rebuilt from the file (and its own delta chain) every time.
   */
  private readonly recent = new RecentBuffers<string>(recentLimitBytes, recentLimitBytes / 4);
  /**
   * Bundles recently inflated (all or a first part). A rewind reads members
   * in path order, which is not quite the order of the walk that bundled
   * them, so it comes back to a bundle a few members later; inflating it
   * each time was most of a capture rewind.
   */
  private readonly bundles = new RecentBuffers<number>(bundleCacheBytes);
  /**
   * Entries encoded but not written yet: an append's entries go to the file
   * in one `writev` at its end. The index already points at them; what it
   * pointed at before is kept to put back should the write fail.
   */
  private staged: Buffer[] = [];
  private stagedBytes = 0;
  private stagedIndex: Array<[hash: string, before: PackEntry | undefined]> = [];

  private constructor(
    readonly path: string,
    private fd: number,
    private length: number,
    private readonly index: Map<string, PackEntry>,
    /** The file's size when it was scanned: a reader's index is complete while the file keeps it. */
    private readonly scannedSize: number,
  ) {}

  /**
   * Opens a pack. A reader gets `undefined` when the file does not exist; a
   * writer creates it and cuts off a torn tail left by a crash.
   */
  static open(path: string, mode: 'read' | 'write'): BlobPack | undefined {
    let fd: number;
    try {
      fd = openStoreFile(path, mode === 'write' ? fs.constants.O_RDWR | fs.constants.O_CREAT : fs.constants.O_RDONLY, 'the blob pack');
    } catch (error) {
      if (mode === 'read' && (error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    try {
      const size = fs.fstatSync(fd).size;
      // A pack written by another format version (an intact header, not a damaged one) is never
      // repaired: cutting it would delete its backups.
      const version = size >= headerSize ? headerVersion(readAt(fd, 0, headerSize)) : undefined;
      if (version !== undefined && version !== formatVersion) throw new Error(`${path} is a format ${version} pack; this version of rewindable reads format ${formatVersion}`);
      const { index, validLength } = scan(fd, size);
      if (mode === 'write' && validLength < size) fs.ftruncateSync(fd, validLength);
      return new BlobPack(path, fd, validLength, index, size);
    } catch (error) {
      fs.closeSync(fd);
      throw error;
    }
  }

  has(hash: string): boolean {
    return this.index.has(hash);
  }

  /**
   * Whether the file at the pack's path is still the one scanned, at the size
   * scanned: packs only grow by appends, so nothing was added since. Lets a
   * reader skip scanning again a pack that no one writes (one of an older layout).
   */
  unchangedOnDisk(): boolean {
    try {
      const now = fs.statSync(this.path);
      return now.ino === fs.fstatSync(this.fd).ino && now.size === this.scannedSize;
    } catch {
      return false;
    }
  }

  /** The blob's content (deltas and bundles resolved), or `undefined` when the pack does not hold it (or notes it as loose). */
  read(hash: string): Buffer | undefined {
    const entry = this.index.get(hash);
    return entry === undefined || entry.kind === kindLoose ? undefined : this.resolve(hash, 0);
  }

  /** Notes blobs just stored as loose files as this session's (see the `loose` kind). */
  noteLoose(hashes: readonly string[]): void {
    for (const hash of hashes) {
      if (this.index.has(hash)) continue;
      this.stage(encodeHeader(kindLoose, 0, hash, 0, 0), Buffer.alloc(0));
      this.point(hash, { kind: kindLoose });
    }
    this.writeStaged();
  }

  /**
   * Appends blobs the pack does not hold yet. The bytes reach the operating
   * system before this returns (a killed process loses nothing); `flush()`
   * makes them durable.
   */
  append(blobs: readonly PackBlob[]): void {
    for (const blob of blobs) {
      if (this.index.has(blob.hash)) continue;
      if (blob.similarTo !== undefined) this.takeOutOfBundle(blob.similarTo);
      this.appendEntry(blob);
      this.recent.keep(blob.hash, keepable(blob.bytes));
    }
    this.writeStaged();
  }

  private appendEntry(blob: PackBlob): void {
    const { kind, depth, payload } = this.encode(blob);
    const size = blob.bytes.length;
    const offset = this.stage(encodeHeader(kind, depth, blob.hash, size, payload.length), payload);
    this.point(blob.hash, { kind, offset, depth, size, payloadLength: payload.length });
  }

  /**
   * Appends blobs compressed together as one bundle. `compressed` is the
   * raw-deflated concatenation of the members' bytes, in order.
   */
  appendBundle(members: readonly PackBlob[], compressed: Buffer): void {
    this.writeBundle(members, compressed);
    this.writeStaged();
  }

  /**
   * Stores these blobs again on their own where they are members of bundles
   * of many (see `takeOutOfBundle`): the last content of files just deleted,
   * which a rewind would recreate. Other hashes are ignored.
   */
  takeOut(hashes: readonly string[]): void {
    for (const hash of hashes) this.takeOutOfBundle(hash);
    this.writeStaged();
  }

  /**
   * The version of a file that just changed is the one a rewind wants back.
   * When it is a member of a bundle of many (a first scan's), reading it
   * means inflating that bundle up to it, and a rewind of changes spread over
   * the scope would inflate most bundles. So it is stored again, compressed
   * on its own, and read from there; its bundle keeps it too (a reader that
   * opened the pack before finds it there). Its bytes are at hand anyway: the
   * new version is stored as a delta against them.
   */
  private takeOutOfBundle(hash: string): void {
    const entry = this.index.get(hash);
    if (entry?.kind !== 'member' || entry.bundle.members === 1) return;
    const content = this.recent.get(hash) ?? this.resolve(hash, 0);
    this.recent.keep(hash, content);
    const compressed = deflateRawSync(content, { level: 1 });
    if (compressed.length < content.length * 0.9) this.writeBundle([{ hash, bytes: content }], compressed);
    else this.appendEntry({ hash, bytes: content });
  }

  private writeBundle(members: readonly PackBlob[], compressed: Buffer): void {
    const table = Buffer.alloc(4 + members.length * memberSize);
    table.writeUInt32LE(members.length, 0);
    let start = 0;
    members.forEach((member, position) => {
      const at = 4 + position * memberSize;
      table.write(member.hash, at, 32, 'hex');
      table.writeUIntLE(start, at + 32, 6);
      table.writeUIntLE(member.bytes.length, at + 38, 6);
      start += member.bytes.length;
    });
    const payload = Buffer.concat([table, compressed]);
    const header = encodeHeader(kindBundle, 0, undefined, start, payload.length);
    const offset = this.stage(header, payload);
    readBundleTable(offset, table, payload.length, (hash, member) => this.point(hash, member));
  }

  flush(): Promise<void> {
    return flushFileData(this.fd);
  }

  close(): void {
    if (this.fd >= 0) fs.closeSync(this.fd);
    this.fd = -1;
  }

  /** Queues an entry for `writeStaged`; returns the offset it will have. */
  private stage(header: Buffer, payload: Buffer): number {
    const offset = this.length + this.stagedBytes;
    this.staged.push(header, payload);
    this.stagedBytes += header.length + payload.length;
    return offset;
  }

  private point(hash: string, entry: PackEntry): void {
    this.stagedIndex.push([hash, this.index.get(hash)]);
    this.index.set(hash, entry);
  }

  /**
   * Writes the staged entries in one call, without joining them first. If
   * that fails, the file is cut back to its last whole entry (never a partial
   * entry behind a later one) and the index points where it did before.
   */
  private writeStaged(): void {
    if (this.staged.length === 0) return;
    const start = this.length;
    const [buffers, bytes, pointed] = [this.staged, this.stagedBytes, this.stagedIndex];
    this.staged = [];
    this.stagedBytes = 0;
    this.stagedIndex = [];
    try {
      writeAllAt(this.fd, buffers, start);
    } catch (error) {
      for (const [hash, before] of pointed.reverse()) {
        if (before === undefined) this.index.delete(hash);
        else this.index.set(hash, before);
      }
      fs.ftruncateSync(this.fd, start);
      throw error;
    }
    this.length += bytes;
  }

  private encode(blob: PackBlob): { kind: StoredEntry['kind']; depth: number; payload: Buffer } {
    const content = Buffer.from(blob.bytes.buffer, blob.bytes.byteOffset, blob.bytes.byteLength);
    const full = { kind: kindFull, depth: 0, payload: content } as const;
    const base = blob.similarTo === undefined ? undefined : this.index.get(blob.similarTo);
    const baseDepth = base === undefined || base.kind === kindLoose ? undefined : base.kind === 'member' ? 0 : base.depth;
    if (baseDepth !== undefined && baseDepth < maxDeltaDepth && content.length >= minDeltaSize) {
      // Only computing a delta uses the in-memory copy; reads always go to the file, so damage there is seen.
      const baseContent = this.recent.get(blob.similarTo!) ?? this.intactContent(blob.similarTo!);
      if (baseContent === undefined) return full;
      const prefix = commonPrefixLength(baseContent, content);
      const suffix = commonSuffixLength(baseContent, content, Math.min(baseContent.length, content.length) - prefix);
      const middle = content.subarray(prefix, content.length - suffix);
      if (middle.length * 2 < content.length) {
        const payload = Buffer.allocUnsafe(44 + middle.length);
        payload.write(blob.similarTo!, 0, 32, 'hex');
        payload.writeUIntLE(prefix, 32, 6);
        payload.writeUIntLE(suffix, 38, 6);
        middle.copy(payload, 44);
        return { kind: kindDelta, depth: baseDepth + 1, payload };
      }
    }
    return full;
  }

  /**
   * A stored blob's content if it reads back intact, else undefined. A new
   * version is never stored as a delta of a damaged one: the damage would
   * spread to it, and every version after it.
   */
  private intactContent(hash: string): Buffer | undefined {
    try {
      const content = this.resolve(hash, 0);
      return digest('sha256', content, 'hex') === hash ? content : undefined;
    } catch {
      return undefined; // Damaged, or unreadable now: a full copy does without it.
    }
  }

  private resolve(hash: string, depth: number): Buffer {
    this.writeStaged(); // an entry read back during an append may still be staged
    const entry = this.index.get(hash);
    if (entry === undefined || entry.kind === kindLoose || depth > maxDeltaDepth) throw new Error(`pack has no usable entry for ${hash}`);
    if (entry.kind === 'member') {
      // A bundle of one is read for its one member: inflated into a buffer of its own, neither kept nor copied.
      const alone = entry.bundle.members === 1;
      const data = alone ? this.inflateBundle(entry.bundle) : this.bundleData(entry.bundle, entry.start + entry.size);
      if (entry.start + entry.size > data.length) throw new Error(`bundle at ${entry.bundle.offset} is shorter than its table says`);
      if (alone && entry.start === 0 && entry.size === data.length) return data;
      return Buffer.from(data.subarray(entry.start, entry.start + entry.size));
    }
    const payload = readAt(this.fd, entry.offset + headerSize, entry.payloadLength);
    if (entry.kind === kindFull) return payload;
    const baseContent = this.resolve(payload.toString('hex', 0, 32), depth + 1);
    const prefix = payload.readUIntLE(32, 6);
    const suffix = payload.readUIntLE(38, 6);
    const middle = payload.subarray(44);
    if (prefix + suffix > baseContent.length || prefix + middle.length + suffix !== entry.size) {
      throw new Error(`pack entry at ${entry.offset} does not fit its base`);
    }
    return Buffer.concat([baseContent.subarray(0, prefix), middle, baseContent.subarray(baseContent.length - suffix)]);
  }

  /**
   * The inflated bytes of `bundle`, at least its first
   * `needed`. Members are laid out one after another, so a member near the
   * start needs only the start of the stream: a proportional prefix of the
   * compressed bytes (with a margin) is read and inflated first, and the
   * whole bundle only if that fell short. A rewind reading one file from
   * each of a hundred bundles does half the work on average.
   */
  private bundleData(bundle: BundleInfo, needed: number): Buffer {
    const cached = this.bundles.get(bundle.offset);
    if (cached !== undefined && cached.length >= needed) return this.bundles.keep(bundle.offset, cached);
    // Only the first time: a bundle inflated in part before has members wanted further on; inflate it whole.
    return this.bundles.keep(bundle.offset, this.inflateBundle(bundle, cached === undefined ? needed : undefined));
  }

  /** Inflates a bundle: all of it, or, given `needed`, perhaps only a first part that holds that many bytes. */
  private inflateBundle(bundle: BundleInfo, needed?: number): Buffer {
    const { compressedStart, compressedLength, rawLength } = bundle;
    // Inflated into one buffer of the size the table gives (zlib would otherwise gather 16 KiB pieces and copy them
    // together). A damaged table is caught by the hash checks later; it must not make us allocate what it claims.
    const chunkSize = rawLength < maxSingleChunk ? Math.max(zlibConstants.Z_MIN_CHUNK, rawLength + 1) : zlibConstants.Z_DEFAULT_CHUNK;
    const prefixLength = needed === undefined ? undefined : Math.ceil((compressedLength * needed * prefixMargin) / Math.max(rawLength, 1)) + prefixSlackBytes;
    if (prefixLength !== undefined && prefixLength < compressedLength) {
      // Z_SYNC_FLUSH: a cut stream gives what it holds instead of an error.
      const data = inflateRawSync(readCompressed(this.fd, compressedStart, prefixLength), { chunkSize, finishFlush: zlibConstants.Z_SYNC_FLUSH });
      if (data.length >= needed!) return data;
    }
    return inflateRawSync(readCompressed(this.fd, compressedStart, compressedLength), { chunkSize });
  }
}

/**
 * Buffers kept in memory up to a total size: past it, those kept least
 * recently go first, never the one just kept (which may exceed it alone).
 * One larger than `largestBytes` is not kept at all.
 */
class RecentBuffers<Key> {
  private readonly buffers = new Map<Key, Buffer>();
  private bytes = 0;

  constructor(
    private readonly limitBytes: number,
    private readonly largestBytes = Infinity,
  ) {}

  get(key: Key): Buffer | undefined {
    return this.buffers.get(key);
  }

  /** Keeps `buffer` under `key`, in place of what it held there, as the most recently used; returns it. */
  keep(key: Key, buffer: Buffer): Buffer {
    if (buffer.length > this.largestBytes) return buffer;
    this.bytes += buffer.length - (this.buffers.get(key)?.length ?? 0);
    this.buffers.delete(key);
    this.buffers.set(key, buffer);
    for (const [oldest, kept] of this.buffers) {
      if (this.bytes <= this.limitBytes || oldest === key) break;
      this.buffers.delete(oldest);
      this.bytes -= kept.length;
    }
    return buffer;
  }
}

/**
 * The bytes of an appended blob, to keep for later deltas: the caller's own
 * buffer when it holds little more than them (blob bytes never change once
 * handed to the store, `BlobWrite`); a copy when they are a view into
 * something larger (a batch of files), which keeping the view would keep alive.
 */
function keepable(bytes: Uint8Array): Buffer {
  const slack = bytes.buffer.byteLength - bytes.byteLength;
  if (slack <= keepSlackBytes && !(bytes.buffer instanceof SharedArrayBuffer)) return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return Buffer.from(bytes);
}

/** An entry's header. A slice of Node's shared pool, zeroed here: one is encoded for every backup. */
function encodeHeader(kind: number, depth: number, hash: string | undefined, size: number, payloadLength: number): Buffer {
  const bytes = Buffer.allocUnsafe(headerSize).fill(0);
  magic.copy(bytes, 0);
  bytes[4] = formatVersion;
  bytes[5] = kind;
  bytes[6] = depth;
  if (hash !== undefined) bytes.write(hash, 8, 32, 'hex');
  bytes.writeUIntLE(size, 40, 6);
  bytes.writeUIntLE(payloadLength, 48, 6);
  bytes.writeUInt32LE(crc32(bytes.subarray(0, 64)), 64);
  return bytes;
}

/**
 * Walks the headers. An entry cut short at the end (a crash while appending)
 * ends the walk, and a writer cuts it off. A damaged header anywhere else is
 * stepped over by looking for the next valid header: a flipped bit costs the
 * entry it hit, never the entries after it (which a writer would otherwise
 * cut off for good). Skipping means trusting a header found inside the
 * damaged entry's bytes; its blobs are still checked against their hashes.
 */
function scan(fd: number, size: number): { index: Map<string, PackEntry>; validLength: number } {
  const index = new Map<string, PackEntry>();
  let offset = 0;
  let validLength = 0;
  while (offset + headerSize <= size) {
    const header = readAt(fd, offset, headerSize);
    if (headerVersion(header) !== formatVersion) {
      const next = findHeader(fd, offset + 1, size);
      if (next === undefined) break;
      offset = next;
      continue;
    }
    const kind = header[5]!;
    const payloadLength = header.readUIntLE(48, 6);
    const end = offset + headerSize + payloadLength;
    if (end > size) break;
    if (kind === kindBundle) {
      const tableLength = 4 + readAt(fd, offset + headerSize, 4).readUInt32LE(0) * memberSize;
      if (tableLength <= payloadLength) readBundleTable(offset, readAt(fd, offset + headerSize, tableLength), payloadLength, (hash, member) => index.set(hash, member));
    } else if (kind === kindFull || kind === kindDelta) {
      index.set(header.toString('hex', 8, 40), { kind, offset, depth: header[6]!, size: header.readUIntLE(40, 6), payloadLength });
    } else if (kind === kindLoose) {
      index.set(header.toString('hex', 8, 40), { kind });
    }
    // An entry of another kind (or a damaged bundle table) is skipped whole: its header says how long it is.
    offset = end;
    validLength = end;
  }
  return { index, validLength };
}

/**
 * Gives `point` an entry for each member a bundle's table lists (`table`: the
 * member count, then the members), as a writer and a scan of the file both see them.
 */
function readBundleTable(offset: number, table: Buffer, payloadLength: number, point: (hash: string, member: PackEntry) => void): void {
  const members = table.readUInt32LE(0);
  const bundle: BundleInfo = { offset, compressedStart: offset + headerSize + table.length, compressedLength: payloadLength - table.length, rawLength: 0, members };
  for (let at = 4; at < table.length; at += memberSize) {
    const member = { kind: 'member' as const, bundle, start: table.readUIntLE(at + 32, 6), size: table.readUIntLE(at + 38, 6) };
    bundle.rawLength = Math.max(bundle.rawLength, member.start + member.size);
    point(table.toString('hex', at, at + 32), member);
  }
}

/** The format version of an intact header, or undefined when these bytes are not one. */
function headerVersion(header: Buffer): number | undefined {
  return header.subarray(0, 4).equals(magic) && header.readUInt32LE(64) === crc32(header.subarray(0, 64)) ? header[4] : undefined;
}

/** Offset of the next valid, complete entry at or after `from`, or undefined. */
function findHeader(fd: number, from: number, size: number): number | undefined {
  const windowSize = 1024 * 1024;
  for (let start = from; start + headerSize <= size; start += windowSize - headerSize) {
    const window = readAt(fd, start, Math.min(windowSize, size - start));
    for (let found = window.indexOf(magic); found !== -1; found = window.indexOf(magic, found + 1)) {
      const candidate = start + found;
      if (candidate + headerSize > size) return undefined;
      const header = readAt(fd, candidate, headerSize);
      if (headerVersion(header) === formatVersion && candidate + headerSize + header.readUIntLE(48, 6) <= size) return candidate;
    }
  }
  return undefined;
}

function readAt(fd: number, position: number, length: number, into = Buffer.allocUnsafe(length)): Buffer {
  let read = 0;
  while (read < length) {
    const count = fs.readSync(fd, into, read, length - read, position + read);
    if (count === 0) throw new Error(`pack ended early at byte ${position + read}`);
    read += count;
  }
  return into;
}

/**
 * Compressed bytes on their way to `inflateRawSync`, which is done with them
 * before it returns: read into one buffer kept for the purpose. A rewind
 * reads a bundle for each of hundreds of files, and fresh buffers for them
 * cost a page fault per 4 KiB each time the allocator has given the memory
 * back in between. Larger reads get a buffer of their own.
 */
const compressedScratch = Buffer.allocUnsafe(256 * 1024);

function readCompressed(fd: number, position: number, length: number): Buffer {
  return length <= compressedScratch.length ? readAt(fd, position, length, compressedScratch.subarray(0, length)) : readAt(fd, position, length);
}
