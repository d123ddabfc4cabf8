import fs from 'node:fs';
import { promisify } from 'node:util';

/**
 * Flushing helpers. They run on libuv's thread pool so a flush of one file
 * can overlap with work on another (a backup's flush with the tool's own write).
 *
 * A failed flush is final: after an fsync error the kernel may already have
 * dropped the dirty pages, so a retry could succeed without the data being on
 * disk. Callers treat the write as lost.
 */

// `fs.fsync` is looked up at each call, as the durability tests that replace it need.
export const flushFileData = (fd: number): Promise<void> => promisify(fs.fdatasync)(fd);
export const flushFile = (fd: number): Promise<void> => promisify(fs.fsync)(fd);

/** Makes a directory's entries (a created, renamed or removed name) durable. */
export async function flushDirectory(directory: string): Promise<void> {
  const fd = fs.openSync(directory, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
  try {
    await flushFile(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Writes the whole buffer at the fd's current position, looping over short writes. */
export function writeAll(fd: number, bytes: Uint8Array): void {
  let written = 0;
  while (written < bytes.length) {
    written += fs.writeSync(fd, bytes, written, bytes.length - written, null);
  }
}

/** Writes `buffers` one after another from `position`, in one call when the kernel takes them all (no joined copy). */
export function writeAllAt(fd: number, buffers: readonly Uint8Array[], position: number): void {
  let pending = buffers.filter((buffer) => buffer.length > 0);
  let at = position;
  while (pending.length > 0) {
    let written = fs.writevSync(fd, pending, at);
    at += written;
    // Drop what the call wrote: whole buffers, then the front of the next one.
    let done = 0;
    while (done < pending.length && written >= pending[done]!.length) written -= pending[done++]!.length;
    pending = pending.slice(done);
    if (written > 0) pending[0] = pending[0]!.subarray(written);
  }
}
