import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { createByLink } from './create-by-link.js';
import { flushCreatedDirectories } from './created-directories.js';
import { entriesIn, safeLstat, unlessMissing } from './missing-entries.js';
import { openRegularFile, readAndClose } from './store-file.js';

/**
 * Loose blobs: one immutable file per blob at `blobs/<first 2 hex>/<sha256>`,
 * shared by every session of the store. Used for large backups, where the
 * cost of creating a file is small next to the bytes, and where sharing one
 * copy between sessions saves the most space.
 *
 * A blob's mtime is when it was last written or reused: retention keeps a
 * blob that a live session reused as long as a new one (see `removeStaleLooseBlob`).
 */

export function looseBlobPath(blobsDirectory: string, hash: string): string {
  return path.join(blobsDirectory, hash.slice(0, 2), hash);
}

/** A blob a clean-up moved aside for a moment: `.<sha256>.<random>.gc`, next to where it belongs. */
const asideSuffix = '.gc';

export function isAsideName(name: string): boolean {
  return name.startsWith('.') && name.endsWith(asideSuffix);
}

/**
 * Writes a blob once (`createByLink`): an existing blob is never overwritten,
 * not even by a concurrent writer of the same content; it is reused, and marked as just used.
 */
export async function writeLooseBlob(blobsDirectory: string, hash: string, bytes: Uint8Array, durable: boolean): Promise<void> {
  const target = looseBlobPath(blobsDirectory, hash);
  if (refreshExisting(target)) return;
  const directory = path.dirname(target);
  const firstCreated = fs.mkdirSync(directory, { recursive: true });
  // Temp files are written next to their destination: link and rename only work within one filesystem. A blob
  // another writer linked at the same moment is just as fresh.
  await createByLink(path.join(directory, `.${hash}.${randomBytes(6).toString('hex')}.tmp`), target, bytes, durable);
  if (durable) await flushCreatedDirectories(target, firstCreated ?? target);
}

/**
 * Sets an existing blob's mtime to now (never through a link), so that a
 * clean-up that read the logs before this reuse does not take it for unused.
 * False when there is no blob: a clean-up may have just moved it aside, and
 * the caller writes it afresh.
 */
function refreshExisting(target: string): boolean {
  const stat = fs.lstatSync(target, { throwIfNoEntry: false });
  if (stat === undefined) return false;
  if (!stat.isFile()) throw new Error(`blob ${target} is not a regular file`);
  const now = new Date();
  return unlessMissing(() => fs.lutimesSync(target, now, now));
}

/**
 * The blob's bytes, or `null` when absent. Refuses anything but a regular
 * file, so a blob replaced by a link is never read through. A blob a
 * clean-up holds aside at this moment is read there (the caller checks its hash).
 */
export function readLooseBlob(blobsDirectory: string, hash: string): Buffer | null {
  const target = looseBlobPath(blobsDirectory, hash);
  const found = readRegularFile(target);
  if (found !== null) return found;
  for (const aside of asideCopies(target)) {
    const bytes = readRegularFile(aside);
    if (bytes !== null) return bytes;
  }
  return null;
}

export function hasLooseBlob(blobsDirectory: string, hash: string): boolean {
  const target = looseBlobPath(blobsDirectory, hash);
  const isRegularFile = (file: string) => safeLstat(file)?.isFile() === true;
  return isRegularFile(target) || asideCopies(target).some(isRegularFile);
}

/**
 * Removes the blob at `file` if it was neither written nor reused since
 * `cutoff`; returns the bytes freed, or undefined when it was kept. The caller has found it
 * older than `cutoff` and named by no log it read.
 *
 * Why this is safe against a session reusing the blob at the same moment
 * (`writeLooseBlob`: set its mtime, or write it afresh if it is gone):
 * the blob is first renamed to a name of this clean-up's own, and its mtime
 * checked there. Renaming keeps the mtime, and once renamed, the blob's name
 * leads a writer nowhere, so a reuse either
 * - came before the rename: the mtime seen after it is fresh, and the blob
 *   is put back (linked to its name, then the aside name removed, so that it
 *   always has one of the two names); or
 * - comes after the rename: the writer finds no blob and writes a new one,
 *   and the one moved aside (unused) is removed. Putting back tolerates that
 *   new one: the link fails with EEXIST and the contents are the same.
 * A reader that comes while the blob is aside reads it there
 * (`readLooseBlob`). Two clean-ups at once move to names of their own: the
 * second finds nothing to move, or a fresh blob it then puts back. A
 * clean-up killed while the blob is aside leaves it there for readers, and
 * the next clean-up puts it back (`restoreAside`). No path is followed
 * through a link: `lstat`, `rename`, `link` and `rm` all act on the names.
 */
export function removeStaleLooseBlob(file: string, cutoff: number): number | undefined {
  const aside = `${path.join(path.dirname(file), `.${path.basename(file)}`)}.${randomBytes(6).toString('hex')}${asideSuffix}`;
  if (!unlessMissing(() => fs.renameSync(file, aside))) return undefined;
  const moved = fs.lstatSync(aside);
  if (moved.mtimeMs > cutoff) {
    putBack(aside, file);
    return undefined;
  }
  fs.rmSync(aside, { force: true });
  return moved.size;
}

/** A blob left aside by a clean-up that was killed: back to its name, unless a new copy took it. */
export function restoreAside(folder: string, name: string): void {
  const hash = name.slice(1).split('.')[0]!;
  putBack(path.join(folder, name), path.join(folder, hash));
}

function putBack(aside: string, file: string): void {
  try {
    fs.linkSync(aside, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  fs.rmSync(aside, { force: true });
}

function asideCopies(target: string): string[] {
  const folder = path.dirname(target);
  const prefix = `.${path.basename(target)}.`;
  return entriesIn(folder)
    .filter((entry) => entry.name.startsWith(prefix) && entry.name.endsWith(asideSuffix))
    .map((entry) => path.join(folder, entry.name));
}

/** Blob damage is a plain Error on purpose: the caller turns it into a reason the blob is unusable, not a STORE_IO failure. */
function readRegularFile(file: string): Buffer | null {
  const opened = openRegularFile(file, fs.constants.O_RDONLY);
  if (opened.kind === 'missing') return null;
  if (opened.kind === 'refused') throw new Error(`blob ${path.basename(file)} ${opened.refused}`);
  return readAndClose(opened.fd);
}
