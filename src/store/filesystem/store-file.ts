import fs from 'node:fs';
import { RewindableError, RewindableErrorCode } from '../../errors.js';

/**
 * What opening a file of the store found. A store copied, restored or crafted
 * by someone else may hold a link where a log, pack, blob or lock belongs:
 * reading through it would read a file outside the store, and writing (an
 * append, the cut of a torn tail) would change one. `missing` is ENOENT, the
 * error itself, for callers that pass it on.
 */
export type StoreFileOpening =
  | { kind: 'open'; fd: number; stat: fs.Stats }
  | { kind: 'refused'; refused: 'is a symbolic link' | 'is not a regular file' }
  | { kind: 'missing'; missing: NodeJS.ErrnoException };

/**
 * Opens `file` never through a link and only if it is a regular file, and
 * never blocks on a FIFO put there. Errors other than ENOENT are thrown as they are.
 */
export function openRegularFile(file: string, flags: number): StoreFileOpening {
  let fd: number;
  try {
    fd = fs.openSync(file, flags | fs.constants.O_NOFOLLOW | (fs.constants.O_NONBLOCK ?? 0), 0o600);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { kind: 'missing', missing: error as NodeJS.ErrnoException };
    if (code === 'ELOOP') return { kind: 'refused', refused: 'is a symbolic link' };
    // A socket cannot be opened at all.
    if (code === 'ENXIO') return { kind: 'refused', refused: 'is not a regular file' };
    throw error;
  }
  let stat: fs.Stats;
  try {
    stat = fs.fstatSync(fd);
  } catch (error) {
    fs.closeSync(fd);
    throw error;
  }
  if (stat.isFile()) return { kind: 'open', fd, stat };
  fs.closeSync(fd);
  return { kind: 'refused', refused: 'is not a regular file' };
}

/**
 * `openRegularFile` for a log or pack: a refusal is a STORE_IO error, `what`
 * naming the file in it (as "the log of session …"); ENOENT is thrown as it is.
 */
export function openStoreFile(file: string, flags: number, what: string): number {
  const opened = openRegularFile(file, flags);
  if (opened.kind === 'missing') throw opened.missing;
  if (opened.kind === 'refused') throw notAFile(file, what, opened.refused);
  return opened.fd;
}

/** Every byte of the file open at `fd`, which is closed then. */
export function readAndClose(fd: number): Buffer {
  try {
    return fs.readFileSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

function notAFile(file: string, what: string, found: string): RewindableError {
  return new RewindableError(
    RewindableErrorCode.STORE_IO,
    `${what[0]!.toUpperCase()}${what.slice(1)}, ${file}, ${found}: the store never reads or writes its files through a link or into anything but a regular file. Replace it with the file it stands for, or remove it.`,
    { details: { path: file } },
  );
}
