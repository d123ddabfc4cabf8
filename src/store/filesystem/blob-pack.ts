import fs from 'node:fs';
import { crc32 } from 'node:zlib';
import { flushFileData, writeAll } from '../../fs/flush.js';
import { commonPrefixLength, commonSuffixLength } from '../../util/byte-compare.js';

/**
 * A pack: one append-only file holding a session's smaller blobs back to back.
 * Backups are taken on the agent's hot path, and appending to a file that is
 * already open costs a fraction of creating a file per blob. Entries are never
 * rewritten; a crash can only leave a torn entry at the end, which the next
 * writer cuts off.
 *
 * Entry: 72-byte header, then the payload.
 *   0  "RWPK"          4  format version (1)   5  kind (0 full, 1 delta)
 *   6  delta depth     8  SHA-256 of the content (32 bytes)
 *   40 content size (48-bit)   48 payload size (48-bit)   56 base entry offset (48-bit)
 *   64 CRC-32 of bytes 0-63
 * A delta payload is: prefix length (48-bit), suffix length (48-bit), then the
 * bytes between them; prefix and suffix come from the base entry's content.
 */

const magic = Buffer.from('RWPK');
const headerSize = 72;
const kindFull = 0;
const kindDelta = 1;
/** Longest chain of deltas before a full copy is stored again (bounds read cost). */
const maxDeltaDepth = 24;
/** Below this size a delta saves too little to be worth a chain. */
const minDeltaSize = 1024;

interface PackEntry {
  offset: number;
  kind: number;
  depth: number;
  size: number;
  payloadLength: number;
  baseOffset: number;
}

export interface PackBlob {
  hash: string;
  bytes: Uint8Array;
  similarTo?: string | undefined;
}

export class BlobPack {
  private readonly byOffset = new Map<number, PackEntry>();

  private constructor(
    readonly path: string,
    private fd: number,
    private length: number,
    private readonly index: Map<string, PackEntry>,
  ) {
    for (const entry of index.values()) this.byOffset.set(entry.offset, entry);
  }

  /**
   * Opens a pack. A reader gets `undefined` when the file does not exist; a
   * writer creates it and cuts off a torn tail left by a crash.
   */
  static open(path: string, mode: 'read' | 'write'): BlobPack | undefined {
    let fd: number;
    try {
      fd = fs.openSync(path, mode === 'write' ? fs.constants.O_RDWR | fs.constants.O_CREAT : fs.constants.O_RDONLY, 0o600);
    } catch (error) {
      if (mode === 'read' && (error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    try {
      const size = fs.fstatSync(fd).size;
      const { index, validLength } = scan(fd, size);
      if (mode === 'write' && validLength < size) fs.ftruncateSync(fd, validLength);
      return new BlobPack(path, fd, validLength, index);
    } catch (error) {
      fs.closeSync(fd);
      throw error;
    }
  }

  has(hash: string): boolean {
    return this.index.has(hash);
  }

  get hashes(): IterableIterator<string> {
    return this.index.keys();
  }

  /** The blob's content (deltas resolved), or `undefined` when the pack does not hold it. */
  read(hash: string): Buffer | undefined {
    const entry = this.index.get(hash);
    return entry === undefined ? undefined : this.readEntry(entry, 0);
  }

  /**
   * Appends blobs the pack does not hold yet. The bytes reach the operating
   * system before this returns (a killed process loses nothing); `flush()`
   * makes them durable.
   */
  append(blobs: readonly PackBlob[]): void {
    for (const blob of blobs) {
      if (this.index.has(blob.hash)) continue;
      const entry = this.encode(blob);
      const start = this.length;
      try {
        writeAll(this.fd, entry.bytes, start);
      } catch (error) {
        // Never leave a partial entry behind a later one: cut back to the last whole entry.
        fs.ftruncateSync(this.fd, start);
        throw error;
      }
      this.length += entry.bytes.length;
      const stored: PackEntry = { ...entry.header, offset: start };
      this.index.set(blob.hash, stored);
      this.byOffset.set(start, stored);
    }
  }

  flush(): Promise<void> {
    return flushFileData(this.fd);
  }

  close(): void {
    if (this.fd >= 0) fs.closeSync(this.fd);
    this.fd = -1;
  }

  private encode(blob: PackBlob): { bytes: Buffer; header: Omit<PackEntry, 'offset'> } {
    const content = Buffer.from(blob.bytes.buffer, blob.bytes.byteOffset, blob.bytes.byteLength);
    const base = blob.similarTo === undefined ? undefined : this.index.get(blob.similarTo);
    if (base !== undefined && base.depth < maxDeltaDepth && content.length >= minDeltaSize) {
      const baseContent = this.readEntry(base, 0);
      const prefix = commonPrefixLength(baseContent, content);
      const suffix = commonSuffixLength(baseContent, content, Math.min(baseContent.length, content.length) - prefix);
      const middle = content.subarray(prefix, content.length - suffix);
      if (middle.length * 2 < content.length) {
        const payload = Buffer.allocUnsafe(12 + middle.length);
        payload.writeUIntLE(prefix, 0, 6);
        payload.writeUIntLE(suffix, 6, 6);
        middle.copy(payload, 12);
        const header = { kind: kindDelta, depth: base.depth + 1, size: content.length, payloadLength: payload.length, baseOffset: base.offset };
        return { bytes: Buffer.concat([encodeHeader(blob.hash, header), payload]), header };
      }
    }
    const header = { kind: kindFull, depth: 0, size: content.length, payloadLength: content.length, baseOffset: 0 };
    return { bytes: Buffer.concat([encodeHeader(blob.hash, header), content]), header };
  }

  private readEntry(entry: PackEntry, depth: number): Buffer {
    const payload = Buffer.allocUnsafe(entry.payloadLength);
    readAll(this.fd, payload, entry.offset + headerSize);
    if (entry.kind === kindFull) return payload;
    const base = this.byOffset.get(entry.baseOffset);
    if (base === undefined || depth > maxDeltaDepth) throw new Error(`pack entry at ${entry.offset} names a missing base`);
    const baseContent = this.readEntry(base, depth + 1);
    const prefix = payload.readUIntLE(0, 6);
    const suffix = payload.readUIntLE(6, 6);
    const middle = payload.subarray(12);
    if (prefix + suffix > baseContent.length || prefix + middle.length + suffix !== entry.size) {
      throw new Error(`pack entry at ${entry.offset} does not fit its base`);
    }
    return Buffer.concat([baseContent.subarray(0, prefix), middle, baseContent.subarray(baseContent.length - suffix)]);
  }
}

function encodeHeader(hash: string, header: Omit<PackEntry, 'offset'>): Buffer {
  const bytes = Buffer.alloc(headerSize);
  magic.copy(bytes, 0);
  bytes[4] = 1;
  bytes[5] = header.kind;
  bytes[6] = header.depth;
  bytes.write(hash, 8, 32, 'hex');
  bytes.writeUIntLE(header.size, 40, 6);
  bytes.writeUIntLE(header.payloadLength, 48, 6);
  bytes.writeUIntLE(header.baseOffset, 56, 6);
  bytes.writeUInt32LE(crc32(bytes.subarray(0, 64)), 64);
  return bytes;
}

/** Walks the headers; stops at the first entry that is torn or damaged. */
function scan(fd: number, size: number): { index: Map<string, PackEntry>; validLength: number } {
  const index = new Map<string, PackEntry>();
  const header = Buffer.alloc(headerSize);
  let offset = 0;
  while (offset + headerSize <= size) {
    readAll(fd, header, offset);
    if (!header.subarray(0, 4).equals(magic) || header.readUInt32LE(64) !== crc32(header.subarray(0, 64))) break;
    const entry: PackEntry = {
      offset,
      kind: header[5]!,
      depth: header[6]!,
      size: header.readUIntLE(40, 6),
      payloadLength: header.readUIntLE(48, 6),
      baseOffset: header.readUIntLE(56, 6),
    };
    const end = offset + headerSize + entry.payloadLength;
    if (end > size) break;
    index.set(header.toString('hex', 8, 40), entry);
    offset = end;
  }
  return { index, validLength: offset };
}

function readAll(fd: number, into: Buffer, position: number): void {
  let read = 0;
  while (read < into.length) {
    const count = fs.readSync(fd, into, read, into.length - read, position + read);
    if (count === 0) throw new Error(`pack ended early at byte ${position + read}`);
    read += count;
  }
}
