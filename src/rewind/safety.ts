import type { EntryRefusal } from '../fs/entry.js';
import { isConfined, type PathScope } from '../paths.js';
import type { Refusal } from '../refusal.js';
import type { FileState, RewindAction } from '../schemas.js';
import type { ObservedPath } from '../fs/inspect-path.js';
import type { FileMerge } from './file-merge.js';

/**
 * Every rule that makes a rewind leave a path alone, as functions of the
 * states involved: the plan asks them of what it found, and applying asks
 * them again of what it finds just before each write. Nothing else decides
 * a refusal, so this file is the whole of what a rewind refuses to touch.
 */

/** Why a path is left alone (see refusal.ts). */
export type SkipReason = Refusal;

export interface SkippedPath {
  path: string;
  reason: SkipReason;
  /** A sentence for people: what was found and why nothing was written. */
  message: string;
  /** `merge-conflict`: the merge that conflicted. */
  merge?: FileMerge;
}

/** What the plan knows of a path when it decides whether a rewind may change it. */
export interface PathSituation {
  path: string;
  /** What is there now (or, previewing after a rollback, what will be). */
  found: ObservedPath;
  /** In the capture scope: a link a shell left where a file was is replaced, never followed. */
  captured: boolean;
  target: FileState;
  /** What the rewind would do; none when the path already holds its target. */
  action: RewindAction | undefined;
  conflict: boolean;
  skipConflicts: boolean;
}

/** Why the plan leaves a path alone, or undefined when the rewind may change it. */
export function refusalOf(situation: PathSituation): SkippedPath | undefined {
  const { path, found, target } = situation;
  switch (found.state.kind) {
    case 'symlink':
      if (!situation.captured) return leftAlone(path, 'symlink', 'it is now a symbolic link; links are never written through');
      break;
    case 'not-regular':
      return leftAlone(path, 'not-regular', `it is now a ${found.state.fileType}, not a regular file`);
    case 'unsafe-parent':
      return leftAlone(path, 'parent-changed', found.reason ?? 'its parent directory changed');
    case 'too-large':
      return leftAlone(path, 'too-large', `it is now ${found.state.size} bytes, over the backup size cap, so it could not be backed up first`);
    case 'file':
      if (found.stat !== undefined && found.stat.nlink > 1n) return leftAlone(path, 'hard-link', `it has ${found.stat.nlink} hard links; writing it would change the other names too`);
  }
  switch (target.kind) {
    case 'symlink':
      return leftAlone(path, 'target-not-restorable', 'at that checkpoint it was a symbolic link, and links are never recreated');
    case 'not-regular':
      return leftAlone(path, 'target-not-restorable', `at that checkpoint it was a ${target.fileType}, which is never recreated`);
    case 'unsafe-parent':
      return leftAlone(path, 'target-not-restorable', 'at that checkpoint its parent path went through a link, so no backup was taken');
    case 'too-large':
      return leftAlone(path, 'target-not-restorable', `at that checkpoint it was ${target.size} bytes, over the backup size cap, so no backup was taken`);
  }
  if (situation.action !== undefined && situation.conflict && situation.skipConflicts) {
    return leftAlone(path, 'conflict', 'it changed since the tracked tools last wrote it, and conflicts are skipped');
  }
  return undefined;
}

/** A backup (the target's, or the content a preview assumes) that is missing or no longer matches its hash. */
export function unreadableBackup(path: string, reason: string): SkippedPath {
  return leftAlone(path, 'backup-unreadable', reason);
}

/** Plans only hold tracked paths, confined when loaded; a write outside the roots is refused all the same. */
export function outsideRoots(path: string, confinement: Pick<PathScope, 'root' | 'extraRoots' | 'storeDirectory'>): SkippedPath | undefined {
  return isConfined(path, confinement) ? undefined : storedPathRefusal(path, 'outside-project');
}

/** A path a record names that is never acted on (`SessionState.refusedPaths`): reported by every rewind, never touched. */
export function storedPathRefusal(path: string, reason: 'outside-project' | 'invalid-path'): SkippedPath {
  if (reason === 'invalid-path') {
    return leftAlone(path, reason, 'the session log names it, but no file can have that name (a NUL byte, or a name over 255 bytes), so it is never read or written; the log was altered or damaged');
  }
  return leftAlone(
    path,
    reason,
    'the session log names it, but it is outside the project root and the extra roots (or inside the store), so it is never read or written; ' +
      'the log was altered or comes from elsewhere, unless the path is in an extra root this session is no longer opened with',
  );
}

/** A path found, just before its write, not to be what the plan saw. */
export function changedSincePlanned(path: string, found: EntryRefusal, detail?: string): SkippedPath {
  switch (found) {
    case 'changed-during-rewind':
      return leftAlone(path, 'changed-during-rewind', 'it changed while the rewind was running');
    case 'parent-changed':
      return leftAlone(path, 'parent-changed', detail ?? 'its parent directory changed since the plan was made');
    case 'symlink':
      return leftAlone(path, 'symlink', 'it became a symbolic link while the rewind was running; links are never written through');
    case 'hard-link':
      return leftAlone(path, 'hard-link', 'it gained a hard link while the rewind was running');
    case 'not-regular':
      return leftAlone(path, 'not-regular', 'it stopped being a regular file while the rewind was running');
  }
}

/** Rolling back an interrupted rewind: a file that no longer holds what it wrote keeps the later change. */
export function changedAfterInterruptedRewind(path: string): SkippedPath {
  return leftAlone(path, 'changed-during-rewind', 'it changed after the interrupted rewind, and rolling it back would discard that change');
}

/** `detail` completes "<path> was left alone: ...". */
export function leftAlone(path: string, reason: SkipReason, detail: string): SkippedPath {
  return { path, reason, message: `${path} was left alone: ${detail}.` };
}
