import path from 'node:path';
import type { DirectoryCache } from '../fs/directory-cache.js';
import type { PinnedDirectory } from '../fs/pinned-directory.js';
import { isInside } from '../paths.js';
import type { SessionState, TrackedPath } from '../session/session-state.js';
import type { PlannedChange } from './change.js';

/**
 * Directories the session's tools created, which a rewind that deletes the
 * files in them removes once they are empty. A path's first backup records
 * how many of its ancestors were missing (`TrackRecord.missingParents`):
 * those are the directories its write created. A rewind to checkpoint C
 * removes such a directory when the file it deletes was first tracked in C's
 * turn or later, and only when nothing says the directory existed at C: no
 * path first tracked before C's turn created it, and no tracked path under
 * it has a target other than "absent". It must also be empty once the
 * rewind's deletions are made (and the created directories inside it are
 * gone), be strictly inside the project, and be a real directory at its own
 * path: a link or a moved directory is left alone.
 *
 * The plan predicts which (`plannedRemovals`, what a dry run reports); the
 * rewind removes those that are still empty after its deletions
 * (`removeEmptyDirectories`). Undoing the rewind, or rolling it back,
 * recreates the files and with them their missing parent directories.
 */

/**
 * The directories a rewind to `targetIndex` making `changes` would remove,
 * deepest first. Each one is read (through its pinned handle) to see that
 * nothing but what the rewind deletes is in it.
 */
export function plannedRemovals(state: SessionState, targetIndex: number, changes: readonly PlannedChange[], directories: DirectoryCache): string[] {
  const deleted = changes.filter((change) => change.action === 'delete');
  const candidates = new Set<string>();
  for (const change of deleted) {
    if (change.tracked.versions[0]!.checkpointIndex < targetIndex) continue;
    for (const directory of createdBy(change.tracked, state.root)) candidates.add(directory);
  }
  if (candidates.size === 0) return [];
  for (const directory of existedAtTarget(state, targetIndex, candidates)) candidates.delete(directory);
  // Names each directory loses in the rewind: its files deleted, and its created directories found empty.
  const leaving = new Map<string, Set<string>>();
  const leaves = (directory: string, name: string) => {
    const names = leaving.get(directory) ?? new Set<string>();
    names.add(name);
    leaving.set(directory, names);
  };
  for (const change of deleted) leaves(path.dirname(change.path), path.basename(change.path));
  const removals: string[] = [];
  for (const directory of deepestFirst(candidates)) {
    const pinned = directories.open(directory);
    if (typeof pinned === 'string') continue; // gone already, a link, or moved: left alone
    const names = pinned.names();
    const gone = leaving.get(directory);
    if (names === undefined || !names.every((name) => gone?.has(name) === true)) continue;
    removals.push(directory);
    leaves(path.dirname(directory), path.basename(directory));
  }
  return removals;
}

/**
 * Removes `planned` (deepest first) where each is still the directory the
 * plan pinned, at its path, and empty. Returns the ones removed. A directory
 * that cannot be removed (something was put in it since, it was moved, the
 * removal failed) is left alone and not listed: an empty directory left
 * behind loses nothing, and failing the rewind over it would roll back every
 * file. rmdir only ever removes an empty directory, and never follows a link.
 */
export async function removeEmptyDirectories(directories: DirectoryCache, planned: readonly string[], durable: boolean): Promise<string[]> {
  const removed: string[] = [];
  const parents = new Map<string, PinnedDirectory>();
  for (const directory of planned) {
    const parent = directories.open(path.dirname(directory));
    const pinned = directories.open(directory);
    if (typeof parent === 'string' || typeof pinned === 'string') continue;
    try {
      if (!parent.isStillAtPath() || !pinned.isStillAtPath()) continue;
      parent.removeDirectory(path.basename(directory));
    } catch {
      continue;
    }
    // The handle held a directory that is gone: a later file (a rollback's recreate) must find it missing.
    directories.forget(directory);
    parents.delete(directory);
    parents.set(parent.path, parent);
    removed.push(directory);
  }
  if (durable) for (const parent of parents.values()) await parent.flush();
  return removed;
}

/** The directories `tracked`'s write created (its missing parents when first backed up), inside the project only. */
function createdBy(tracked: TrackedPath, root: string): string[] {
  const created: string[] = [];
  let directory = path.dirname(tracked.path);
  for (let level = 0; level < (tracked.missingParents ?? 0) && isInside(directory, root); level += 1) {
    created.push(directory);
    directory = path.dirname(directory);
  }
  return created;
}

/** Of `candidates`, those known to have existed at the target: created before its turn, or holding a path it restores. */
function existedAtTarget(state: SessionState, targetIndex: number, candidates: ReadonlySet<string>): Set<string> {
  const existed = new Set<string>();
  for (const tracked of state.paths.values()) {
    if (tracked.versions[0]!.checkpointIndex < targetIndex) for (const directory of createdBy(tracked, state.root)) existed.add(directory);
    if (state.versionAt(tracked, targetIndex).state.kind === 'absent') continue;
    for (let directory = path.dirname(tracked.path); isInside(directory, state.root); directory = path.dirname(directory)) {
      if (candidates.has(directory)) existed.add(directory);
    }
  }
  return existed;
}

function deepestFirst(directories: Iterable<string>): string[] {
  const depth = (directory: string) => directory.split(path.sep).length;
  return [...directories].sort((a, b) => depth(b) - depth(a) || (a < b ? -1 : a > b ? 1 : 0));
}
