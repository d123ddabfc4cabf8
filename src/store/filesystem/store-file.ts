import fs from 'node:fs';
import { RewindableError, RewindableErrorCode } from '../../errors.js';

/**
 * Opens a file of the store, never through a link and only if it is a
 * regular file: a store copied, restored or crafted by someone else may hold
 * a link where a log or pack belongs, and writing through it (an append, or
 * the cut of a torn tail) would change a file outside the store. Never
 * blocks on a FIFO put there. `what` names the file in the error, as "the
 * log of session …". Other errors (ENOENT, EACCES) are thrown as they are.
 */
export function openStoreFile(file: string, flags: number, what: string, mode = 0o600): number {
  let fd: number;
  try {
    fd = fs.openSync(file, flags | fs.constants.O_NOFOLLOW | (fs.constants.O_NONBLOCK ?? 0), mode);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw notAFile(file, what, 'is a symbolic link');
    // A socket cannot be opened at all.
    if (code === 'ENXIO') throw notAFile(file, what, 'is not a regular file');
    throw error;
  }
  let regular: boolean;
  try {
    regular = fs.fstatSync(fd).isFile();
  } catch (error) {
    fs.closeSync(fd);
    throw error;
  }
  if (!regular) {
    fs.closeSync(fd);
    throw notAFile(file, what, 'is not a regular file');
  }
  return fd;
}

function notAFile(file: string, what: string, found: string): RewindableError {
  return new RewindableError(
    RewindableErrorCode.STORE_IO,
    `${what[0]!.toUpperCase()}${what.slice(1)}, ${file}, ${found}: the store never reads or writes its files through a link or into anything but a regular file. Replace it with the file it stands for, or remove it.`,
    { details: { path: file } },
  );
}
