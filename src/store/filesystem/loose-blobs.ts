import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { flushDirectory, flushFile, writeAll } from '../../fs/flush.js';

/**
 * Loose blobs: one immutable file per blob at `blobs/<first 2 hex>/<sha256>`,
 * shared by every session of the store. Used for large backups, where the
 * cost of creating a file is small next to the bytes, and where sharing one
 * copy between sessions saves the most space.
 */

export function looseBlobPath(blobsDirectory: string, hash: string): string {
  return path.join(blobsDirectory, hash.slice(0, 2), hash);
}

/**
 * Writes a blob once: temporary file in the target directory, flushed, then
 * linked into place. `link` fails when the name exists, so an existing blob is
 * never overwritten, not even by a concurrent writer of the same content.
 */
export async function writeLooseBlob(blobsDirectory: string, hash: string, bytes: Uint8Array, durable: boolean): Promise<void> {
  const target = looseBlobPath(blobsDirectory, hash);
  if (fs.existsSync(target)) return;
  const directory = path.dirname(target);
  const created = fs.mkdirSync(directory, { recursive: true }) !== undefined;
  // Temp files are written next to their destination: link and rename only work within one filesystem.
  const temporary = path.join(directory, `.${hash}.${randomBytes(6).toString('hex')}.tmp`);
  const fd = fs.openSync(temporary, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL, 0o600);
  try {
    try {
      writeAll(fd, bytes);
      if (durable) await flushFile(fd);
    } finally {
      fs.closeSync(fd);
    }
    try {
      fs.linkSync(temporary, target);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  } finally {
    fs.rmSync(temporary, { force: true });
  }
  if (durable) {
    await flushDirectory(directory);
    if (created) await flushDirectory(path.dirname(directory));
  }
}

/**
 * The blob's bytes, or `null` when absent. Refuses anything but a regular
 * file, so a blob replaced by a link is never read through.
 */
export function readLooseBlob(blobsDirectory: string, hash: string): Buffer | null {
  let fd: number;
  try {
    fd = fs.openSync(looseBlobPath(blobsDirectory, hash), fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return null;
    if (code === 'ELOOP') throw new Error(`blob ${hash} is a symbolic link`);
    throw error;
  }
  try {
    if (!fs.fstatSync(fd).isFile()) throw new Error(`blob ${hash} is not a regular file`);
    return fs.readFileSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

export function hasLooseBlob(blobsDirectory: string, hash: string): boolean {
  try {
    return fs.lstatSync(looseBlobPath(blobsDirectory, hash)).isFile();
  } catch {
    return false;
  }
}
