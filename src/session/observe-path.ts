import path from 'node:path';
import { fileIoError } from '../errors.js';
import type { DirectoryCache } from '../fs/directory-cache.js';
import { inspectPath, type LastSeen, type ObservedPath } from '../fs/inspect-path.js';
import { unchangedSinceSeen, unchangedSinceSeenNow } from '../fs/glance-many.js';
import { trustedSignature } from '../fs/stat-signature.js';
import type { Observation } from '../schemas.js';

export interface ObserveOptions {
  maxBytes: number;
  /** Pinned directories shared by the files of one operation. */
  directories?: DirectoryCache;
  /** `if-changed` trusts a matching stat signature (see stat-signature.ts); `always` reads the bytes. */
  read: 'always' | 'if-changed';
  /** A batch glance (`unchangedSinceLastSeen`) already found the path not plainly unchanged: skip the quick look. */
  glanced?: boolean;
}

/**
 * The current state of a tracked path, as a checkpoint would record it. Never
 * follows a link: a link, or a link on the parent path, is recorded as such.
 */
export function observePath(filePath: string, lastSeen: LastSeen | undefined, options: ObserveOptions): ObservedPath {
  if (options.read === 'if-changed' && options.glanced !== true && lastSeen !== undefined && options.directories !== undefined && unchangedAtAGlance(filePath, lastSeen.observed, options.directories)) {
    return asLastSeen(lastSeen);
  }
  try {
    return inspectPath(filePath, { maxBytes: options.maxBytes, lastSeen: options.read === 'if-changed' ? lastSeen : undefined }, options.directories);
  } catch (error) {
    throw fileIoError('read', filePath, error);
  }
}

/** The observation of a path found still as last seen: its known state and signature, nothing read. */
export function asLastSeen(lastSeen: LastSeen): ObservedPath {
  return { state: lastSeen.state, observed: lastSeen.observed };
}

/**
 * The common case of a large operation, cheaply: a plain lstat says the file
 * is still the one last seen, and no directory on its path is a link (see
 * `unchangedSinceLastSeen` for why a glance needs no pinned directory).
 * Anything else, an error included, is looked at closely by the full
 * inspection, which reports it as it always does.
 */
function unchangedAtAGlance(filePath: string, observed: Observation, directories: DirectoryCache): boolean {
  return trustedSignature(observed) !== undefined && directories.linkFree.has(path.dirname(filePath)) && unchangedSinceSeenNow(filePath, observed);
}

/**
 * The same glance for many paths at once (one batch of lstats, see
 * glance-many.ts): true where a path is still what `lastSeen` says, so that
 * observing it would return `lastSeen` without reading it.
 *
 * Paths are looked up as they are, not through pinned directories: a
 * glance only ever answers "nothing to do here", and a directory pinned
 * for it could move right after its check as well. What a pin adds is
 * checked once per directory instead: no link anywhere on the directory's
 * path (`directories.linkFree`), so a directory swapped for a link to where
 * it went is never taken for unchanged. A large capture scope has hundreds
 * of directories, and pinning each (an open, an fstat, a readlink) cost
 * more than glancing at the files in it; the paths that are not plainly
 * unchanged are pinned as they are observed.
 */
export async function unchangedSinceLastSeen(
  paths: ReadonlyArray<{ path: string; lastSeen?: { observed: Observation } | undefined }>,
  directories: DirectoryCache,
): Promise<boolean[]> {
  const unchanged = new Array<boolean>(paths.length).fill(false);
  const indexes: number[] = [];
  const entries: Array<{ path: string; observed: Observation }> = [];
  paths.forEach(({ path: filePath, lastSeen }, index) => {
    // A signature the racy rule does not trust yet can never pass: no lstat for it.
    if (lastSeen === undefined || trustedSignature(lastSeen.observed) === undefined) return;
    indexes.push(index);
    entries.push({ path: filePath, observed: lastSeen.observed });
  });
  // The files are looked at (on worker threads, for many) while this thread checks their directories.
  const glancing = unchangedSinceSeen(entries);
  const linkFree = entries.map((entry) => directories.linkFree.has(path.dirname(entry.path)));
  (await glancing).forEach((verdict, at) => (unchanged[indexes[at]!] = verdict && linkFree[at]!));
  return unchanged;
}

