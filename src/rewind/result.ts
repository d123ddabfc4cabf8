import { RewindableError, type RewindableErrorCode, type RewindableErrorDetailsOf } from '../errors.js';
import type { RewindAction } from '../schemas.js';
import { safetyRefusals, type Refusal } from '../refusal.js';
import type { PlannedChange } from './change.js';
import type { Measurements } from './measure.js';
import type { SkippedPath } from './safety.js';
import type { FileMerge } from './file-merge.js';
import type { Goal } from './goal.js';

/** One file a rewind changes (or would change). */
export interface RewindFileChange {
  path: string;
  /** `restore`: content replaced. `recreate`: file brought back. `delete`: file the agent created removed. `chmod`: only the mode differs. */
  action: RewindAction;
  insertions: number;
  deletions: number;
  binary: boolean;
  /** The line diff was too costly to finish; the file is counted as 0/0. */
  statsSkipped: boolean;
  /** It changed since the tracked tools last wrote it: the rewind discards someone else's edit. */
  conflict: boolean;
  /**
   * The tracked tool calls whose writes to this file the rewind takes back:
   * those the file's content comes from that its content at the target
   * checkpoint did not (the calls since that checkpoint, less those a
   * completed rewind already took back), oldest first, each once. Writes
   * recorded without a call id are not listed.
   */
  toolCallIds: string[];
  /** The file's new content is a merge (`revertTurn`, `onConflict: 'merge' | 'markers'`): how it went. */
  merge?: FileMerge;
}

/**
 * What `rewindFiles` answers, discriminated on `canRewind` (the Claude Agent
 * SDK's field): `RewindFilesReady` for a rewind that can happen (dry run) or
 * happened, `RewindFilesRefused` for a dry run of one that cannot. A real run
 * that cannot happen rejects with a `RewindableError` instead.
 */
export type RewindFilesResult = RewindFilesReady | RewindFilesRefused;

/** A rewind that can happen (dry run) or happened (real run). */
export interface RewindFilesReady {
  canRewind: true;
  dryRun: boolean;
  /** Absolute paths the rewind changes (dry run) or changed. */
  filesChanged: string[];
  /** Lines the rewind adds back, over all files. */
  insertions: number;
  /** Lines the rewind removes, over all files. */
  deletions: number;
  /** Tracked paths refused for safety: links, hard links, non-regular files, moved parents, unreadable backups. */
  skippedLinks: number;
  /**
   * `skipped` counted by reason, every reason that occurs (safety refusals,
   * conflicts, too-large files...). `skippedLinks` keeps the Claude SDK's
   * meaning; this tells its causes apart. Reasons with no path are absent.
   */
  skippedByReason: Partial<Record<Refusal, number>>;
  /** Per-file detail of `filesChanged`. */
  files: RewindFileChange[];
  /** Every path left alone, with the reason. */
  skipped: SkippedPath[];
  /** Paths changed by someone other than the tracked tools since they last wrote them. */
  conflicts: string[];
  /**
   * Directories the session's tools created that the rewind removes (dry
   * run) or removed, because the files it deletes leave them empty. Never
   * one that existed at the target checkpoint, one holding anything else, or
   * a link. Undoing the rewind brings them back with the files.
   */
  directoriesRemoved: string[];
  /** Real runs: the checkpoint holding the state just before this rewind. Rewind to it to undo. */
  undoCheckpointId?: string;
  error?: undefined;
  errorCode?: undefined;
}

/** A dry run's answer for a rewind that cannot happen; nothing else is reported. */
export interface RewindFilesRefused {
  canRewind: false;
  dryRun: true;
  /** Why not; safe to show to an end user as is. */
  error: string;
  /** The `RewindableError` code behind `error`. */
  errorCode: RewindableErrorCode;
  /** That error's `details`, when it has any (for `HUNK_NOT_FOUND`, the stale hunk's id). */
  errorDetails?: RewindableErrorDetailsOf<RewindableErrorCode>;
  // Absent, declared so that code written for one loose shape (the Claude SDK's) reads them without narrowing first.
  filesChanged?: undefined;
  insertions?: undefined;
  deletions?: undefined;
  skippedLinks?: undefined;
  skippedByReason?: undefined;
  files?: undefined;
  skipped?: undefined;
  conflicts?: undefined;
  directoriesRemoved?: undefined;
  undoCheckpointId?: undefined;
}

/** The result of a rewind that can happen, or the error a refused dry run reported, thrown (for callers that preview first). */
export function readyOrThrow(result: RewindFilesResult): RewindFilesReady {
  if (result.canRewind) return result;
  throw new RewindableError(result.errorCode, result.error, result.errorDetails !== undefined ? { details: result.errorDetails } : {});
}

export function summarize(changes: readonly PlannedChange[], measurements: Measurements, skipped: readonly SkippedPath[], dryRun: boolean, directoriesRemoved: readonly string[] = []): RewindFilesReady {
  const byPath = (a: { path: string }, b: { path: string }) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
  const files = [...changes].sort(byPath).map((change): RewindFileChange => {
    const stats = measurements.of(change);
    return {
      path: change.path,
      action: change.action,
      insertions: stats.insertions,
      deletions: stats.deletions,
      binary: stats.binary,
      statsSkipped: stats.skipped,
      conflict: change.conflict,
      toolCallIds: [], // from the session's records, by `withToolCallIds`
    };
  });
  const skippedByReason: Partial<Record<Refusal, number>> = {};
  for (const entry of skipped) skippedByReason[entry.reason] = (skippedByReason[entry.reason] ?? 0) + 1;
  return {
    canRewind: true,
    dryRun,
    filesChanged: files.map((file) => file.path),
    insertions: files.reduce((sum, file) => sum + file.insertions, 0),
    deletions: files.reduce((sum, file) => sum + file.deletions, 0),
    skippedLinks: skipped.filter((entry) => safetyRefusals.has(entry.reason)).length,
    skippedByReason,
    files,
    // In path order, as the dry run lists them: a real run finds some only as it applies the changes.
    skipped: [...skipped].sort(byPath),
    conflicts: [
      ...files.filter((file) => file.conflict).map((file) => file.path),
      ...skipped.filter((entry) => entry.reason === 'conflict').map((entry) => entry.path),
    ],
    directoriesRemoved: [...directoriesRemoved].sort(),
  };
}

/** The result with each file's `toolCallIds`, from `SessionState.toolCallsTakenBack` as it was before the rewind ran. */
export function withToolCallIds(result: RewindFilesReady, toolCallIds: ReadonlyMap<string, string[]>): RewindFilesReady {
  return { ...result, files: result.files.map((file) => ({ ...file, toolCallIds: [...(toolCallIds.get(file.path) ?? [])] })) };
}

/** The result with the merge behind each merged file, changed or left alone (previews in dry runs only). */
export function withMerges(result: RewindFilesReady, goal: Goal | undefined, dryRun: boolean): RewindFilesReady {
  if (goal === undefined || goal.merges.size === 0) return result;
  const mergeOf = (path: string) => {
    const merge = goal.merges.get(path);
    if (merge === undefined) return {};
    const { preview, ...rest } = merge;
    return { merge: dryRun && preview !== undefined ? { ...rest, preview } : rest };
  };
  return {
    ...result,
    files: result.files.map((file) => ({ ...file, ...mergeOf(file.path) })),
    skipped: result.skipped.map((entry) => ({ ...entry, ...mergeOf(entry.path) })),
    conflicts: [...result.conflicts, ...result.skipped.filter((entry) => entry.reason === 'merge-conflict').map((entry) => entry.path)],
  };
}
