import fs from 'node:fs';
import path from 'node:path';
import { isAsideName, removeStaleLooseBlob, restoreAside } from './loose-blobs.js';
import { entriesIn, safeLstat } from './missing-entries.js';

/**
 * The filesystem store's garbage collection: packs of sessions that have no
 * log any more, and loose blobs no log names. Anything written or reused
 * after `cutoff` is kept: a live session may be about to name it. Only real
 * directories are entered and no link is followed, so nothing outside the
 * store is ever removed.
 */

export interface GarbageCollection {
  blobsDirectory: string;
  /** Blobs named by the logs of every remaining session. */
  referenced: ReadonlySet<string>;
  /** Milliseconds since the epoch. */
  cutoff: number;
  /** Every session with a log, as `<project key>/<session id>`. */
  sessions: ReadonlySet<string>;
}

export interface Collected {
  blobsRemoved: number;
  bytesFreed: number;
}

export function collectGarbage(collection: GarbageCollection): Collected {
  const collected: Collected = { blobsRemoved: 0, bytesFreed: 0 };
  for (const folder of entriesIn(collection.blobsDirectory).filter((entry) => entry.isDirectory())) {
    const folderPath = path.join(collection.blobsDirectory, folder.name);
    if (folder.name === 'packs') collectPacks(folderPath, collection, collected);
    else collectLooseBlobs(folderPath, collection, collected);
  }
  return collected;
}

/**
 * `packs/<project key>/<session id>.pack`, and the older `packs/<session id>.pack`
 * named by session alone, which any project's session of that id may still
 * read: it goes only once no project has a log of that id.
 */
function collectPacks(packsDirectory: string, collection: GarbageCollection, collected: Collected): void {
  const sessionIds = new Set([...collection.sessions].map((session) => session.slice(session.lastIndexOf('/') + 1)));
  for (const entry of entriesIn(packsDirectory)) {
    if (entry.isDirectory()) {
      for (const name of entriesIn(path.join(packsDirectory, entry.name))) {
        const sessionId = packSessionId(name);
        if (sessionId !== undefined && !collection.sessions.has(`${entry.name}/${sessionId}`)) {
          removeIfOld(path.join(packsDirectory, entry.name, name.name), collection.cutoff, collected);
        }
      }
    } else {
      const sessionId = packSessionId(entry);
      if (sessionId !== undefined && !sessionIds.has(sessionId)) removeIfOld(path.join(packsDirectory, entry.name), collection.cutoff, collected);
    }
  }
}

function collectLooseBlobs(folder: string, collection: GarbageCollection, collected: Collected): void {
  for (const entry of entriesIn(folder)) {
    if (entry.isDirectory()) continue;
    if (isAsideName(entry.name)) {
      restoreAside(folder, entry.name);
      continue;
    }
    const file = path.join(folder, entry.name);
    // A blob the logs do not name, or a temporary file of a write that was cut short.
    if (entry.name.endsWith('.tmp')) removeIfOld(file, collection.cutoff, collected);
    else if (!collection.referenced.has(entry.name) && (safeLstat(file)?.mtimeMs ?? Infinity) <= collection.cutoff) count(collected, removeStaleLooseBlob(file, collection.cutoff));
  }
}

function packSessionId(entry: fs.Dirent): string | undefined {
  return entry.isFile() && entry.name.endsWith('.pack') ? entry.name.slice(0, -'.pack'.length) : undefined;
}

function removeIfOld(file: string, cutoff: number, collected: Collected): void {
  const stat = safeLstat(file);
  if (stat === undefined || stat.mtimeMs > cutoff) return;
  fs.rmSync(file, { force: true });
  count(collected, stat.size);
}

function count(collected: Collected, bytes: number | undefined): void {
  if (bytes === undefined) return;
  collected.blobsRemoved += 1;
  collected.bytesFreed += bytes;
}
