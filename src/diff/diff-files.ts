import path from 'node:path';
import { isUtf8 } from 'node:buffer';
import { selectTrackedPaths } from '../session/select-paths.js';
import type { FileState, RewindAction } from '../schemas.js';
import type { ObservedPath } from '../fs/inspect-path.js';
import { sameState, type CheckpointInfo, type TrackedPath } from '../session/session-state.js';
import type { Session } from '../session/session.js';
import { gitBinaryFilePatch, gitMode, gitTextFilePatch, type FilePatchSides } from '../text/git-patch.js';
import { isBinary } from '../text/line-stats.js';
import type { PlannedChange } from '../rewind/change.js';
import { measurementsFor, type Measurements } from '../rewind/measure.js';
import { defaultLineDiffBounds, hunkDigest, lineDiff } from '../text/patch-hunks.js';
import { planRewind } from '../rewind/plan.js';
import type { SkippedPath, SkipReason } from '../rewind/safety.js';
import { afterRollBack } from '../rewind/transaction.js';

/**
 * Per-file diffs between the files now and a checkpoint. They come from the
 * rewind's own plan, so a diff lists exactly the files, actions, statistics
 * and refusals a rewind (or its dry run) would report, plus a unified patch.
 */

/** Options of `manager.diffFiles()`. */
export interface DiffOptions {
  /**
   * Only these files: relative to the project root (as trackEdit takes them)
   * or absolute. A directory selects every tracked file under it, a glob
   * (`src/**\/*.ts`) every tracked file it matches.
   * @default every tracked file
   */
  paths?: readonly string[];
  /** Unchanged lines shown around each change. @default 3 */
  context?: number;
  /**
   * A file whose current or checkpoint content is larger than this gets no
   * patch (`tooLarge: true`); its statistics are still exact.
   * @default 1048576 (1 MiB)
   */
  maxPatchBytes?: number;
  /** Milliseconds one file's line diff may take before its patch is given up (`tooComplex: true`). @default 1000 */
  timeoutMs?: number;
  /**
   * Largest edit, in lines added plus removed, among the lines both sides
   * share (lines found on one side only cost nothing); past it, `tooComplex: true`.
   * @default 5000
   */
  maxEditLength?: number;
  /**
   * Binary files get a `GIT binary patch` (zlib-deflated literals, as `git diff --binary` writes them), which
   * `git apply` applies; without it they get git's `Binary files a/x and b/x differ`, which it cannot apply.
   * @default false
   */
  binary?: boolean;
  /** Report files with conflicts as left alone, as `rewindFiles(id, { skipConflicts: true })` would. @default false */
  skipConflicts?: boolean;
  /** Called as each tracked file is examined (for progress on large diffs). */
  onProgress?: (progress: { done: number; total: number; path: string }) => void;
}

/**
 * One `@@` hunk of a text patch. Its numbers are those of its `@@` line: 1-based, and a side with no lines
 * starts at the line before it, as git writes them.
 */
export interface PatchHunk {
  /**
   * `<digest>-<block>` or `<digest>-<first>-<last>`: the digest names the file and both sides' contents, the
   * numbers the change blocks (runs of changed lines between unchanged ones, counted from 0 in the file) the
   * hunk covers. Context only decides which blocks a hunk merges: `d-2-4` with `context: 3` is `d-2`, `d-3`
   * and `d-4` with `context: 0`.
   */
  id: string;
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
}

/** Size and permission bits of one side of a diff. */
export interface FileSide {
  size: number;
  mode: number;
}

/** A file a rewind to the checkpoint would change. */
export interface FileChangeDiff {
  /** Absolute path, as in `RewindFilesResult.filesChanged`. */
  path: string;
  /** `restore`: content replaced. `recreate`: file brought back. `delete`: file removed. `chmod`: only the mode differs. */
  action: RewindAction;
  /**
   * The patch `git diff` prints from the file now (`a/`) to the file at the checkpoint (`b/`), which `git apply`
   * accepts: headers, `index` line, hunks. A binary file gets git's `Binary files ... differ` line, or with
   * `binary: true` a `GIT binary patch`. Absent when too large or too complex, and when only permission bits
   * git does not record differ.
   */
  patch?: string;
  /**
   * The `@@` hunks of a text `patch`, in its order, each with an id that stays the same as long as the file now
   * and the file at the checkpoint do. Absent, never empty, when the patch has no `@@` hunk: no patch, a
   * binary patch, only a mode change, or an empty file created or deleted.
   */
  hunks?: PatchHunk[];
  /** Lines the rewind adds back: the rewind's own exact statistic. */
  insertions: number;
  /** Lines the rewind removes: the rewind's own exact statistic. */
  deletions: number;
  binary: boolean;
  /** A side exceeds `maxPatchBytes`, so no patch was made. */
  tooLarge: boolean;
  /** The line diff exceeded `timeoutMs` or `maxEditLength`, so no patch was made. */
  tooComplex: boolean;
  /** The rewind's line statistics gave up on this file (it is counted as 0/0). */
  statsSkipped: boolean;
  /** Changed by someone other than the tracked tools since they last wrote it: a rewind discards that edit. */
  conflict: boolean;
  /** The tracked tool calls whose writes a rewind to the checkpoint takes back, as in `RewindFileChange.toolCallIds`. */
  toolCallIds: string[];
  /** The file now; null when it does not exist. */
  current: FileSide | null;
  /** The file at the checkpoint; null when it did not exist. */
  target: FileSide | null;
}

/** A tracked file a rewind would leave alone, and why. */
export interface FileSkipDiff {
  path: string;
  action: 'skip';
  reason: SkipReason;
  /** A sentence for people. */
  message: string;
}

/** One file's difference between now and a checkpoint. Discriminate on `action`. */
export type FileDiff = FileChangeDiff | FileSkipDiff;

interface PatchOutcome {
  patch?: string;
  hunks?: PatchHunk[];
  binary: boolean;
  tooLarge: boolean;
  tooComplex: boolean;
}

export async function diffAgainstCheckpoint(session: Session, target: CheckpointInfo, options: DiffOptions): Promise<FileDiff[]> {
  const settings = {
    context: options.context ?? 3,
    maxPatchBytes: options.maxPatchBytes ?? 1024 * 1024,
    timeoutMs: options.timeoutMs ?? defaultLineDiffBounds.timeoutMs,
    maxEditLength: options.maxEditLength ?? defaultLineDiffBounds.maxEditLength,
    binary: options.binary ?? false,
  };
  const only = options.paths === undefined ? undefined : selectTrackedPaths(session.state, session.root, options.paths, 'diffFiles({ paths })', false);
  const total = only?.size ?? session.state.paths.size;
  const patches = new Map<string, PatchOutcome>();
  let done = 0;
  const assumed = await afterRollBack(session);
  const measurements = measurementsFor(session, 'other');
  const plan = await planRewind(
    {
      state: session.state,
      measurements,
      ...(assumed !== undefined ? { assumed } : {}),
      readBlob: (hash) => session.readBlob(hash),
      maxFileBytes: session.maxFileBytes,
      skipConflicts: options.skipConflicts ?? false,
      ...(only !== undefined ? { only } : {}),
      // The plan hands over the very bytes its statistics are computed from, so patch and counts agree.
      onContent: async (tracked, observation) => {
        const goal = session.state.versionAt(tracked, target.index).state;
        const outcome = await patchFor(session, tracked, observation, goal, settings);
        if (outcome !== undefined) patches.set(tracked.path, outcome);
        done += 1;
        options.onProgress?.({ done, total, path: tracked.path });
      },
    },
    target.index,
  );
  const toolCalls = session.state.toolCallsTakenBack(target.index);
  const diffs: FileDiff[] = [
    ...plan.changes.map((change) => changeDiff(change, measurements, patches.get(change.path), toolCalls.get(change.path) ?? [])),
    ...plan.skipped.map((skipped: SkippedPath): FileSkipDiff => ({ path: skipped.path, action: 'skip', reason: skipped.reason, message: skipped.message })),
  ];
  return diffs.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

function changeDiff(change: PlannedChange, measurements: Measurements, outcome: PatchOutcome | undefined, toolCallIds: string[]): FileChangeDiff {
  const side = (state: PlannedChange['from']): FileSide | null => (state.kind === 'file' ? { size: state.size, mode: state.mode } : null);
  const stats = measurements.of(change);
  return {
    path: change.path,
    action: change.action,
    ...(outcome?.patch !== undefined ? { patch: outcome.patch } : {}),
    ...(outcome?.hunks !== undefined ? { hunks: outcome.hunks } : {}),
    insertions: stats.insertions,
    deletions: stats.deletions,
    binary: stats.binary || (outcome?.binary ?? false),
    tooLarge: outcome?.tooLarge ?? false,
    tooComplex: outcome?.tooComplex ?? false,
    statsSkipped: stats.skipped,
    conflict: change.conflict,
    toolCallIds,
    current: side(change.from),
    target: side(change.to),
  };
}

/** The patch for one path, or undefined when the rewind would not change it (or may not). */
async function patchFor(
  session: Session,
  tracked: TrackedPath,
  observation: ObservedPath,
  goal: FileState,
  settings: { context: number; maxPatchBytes: number; timeoutMs: number; maxEditLength: number; binary: boolean },
): Promise<PatchOutcome | undefined> {
  if (goal.kind !== 'file' && goal.kind !== 'absent') return undefined;
  // Anything but a regular file (a link a shell command left, say) has no lines: the patch shows the file coming back.
  const current: FileState = observation.state.kind === 'file' ? observation.state : { kind: 'absent' };
  if (sameState(current, goal)) return undefined;
  const none = { binary: false, tooLarge: false, tooComplex: false };
  if ((current.kind === 'file' && current.size > settings.maxPatchBytes) || (goal.kind === 'file' && goal.size > settings.maxPatchBytes)) {
    return { ...none, tooLarge: true };
  }
  const contentChanged = current.kind !== 'file' || goal.kind !== 'file' || current.sha256 !== goal.sha256;
  let before: Buffer = Buffer.alloc(0);
  let after: Buffer = Buffer.alloc(0);
  if (contentChanged) {
    if (current.kind === 'file') {
      if (observation.content === undefined) return undefined; // the plan re-reads such a file before handing it over
      before = observation.content;
    }
    if (goal.kind === 'file') {
      const read = await session.readBlob(goal.sha256);
      if (!read.ok) return undefined; // the plan refuses the path with the reason
      after = read.bytes;
    }
  }
  const name = path.relative(session.root, tracked.path).split(path.sep).join('/');
  const side = (state: FileState) => (state.kind === 'file' ? { mode: state.mode } : null);
  const sides: FilePatchSides = { name, current: side(current), target: side(goal), before, after, contentChanged };
  // Text that is not UTF-8 too: a patch is a string, and decoding would change its bytes (git would print them raw).
  if (contentChanged && (isBinary(before) || isBinary(after) || !isUtf8(before) || !isUtf8(after))) {
    return { ...none, binary: true, patch: gitBinaryFilePatch(sides, settings.binary) };
  }
  // Git records only whether a file is executable: a change of other permission bits is none to it.
  if (!contentChanged && current.kind === 'file' && goal.kind === 'file' && gitMode(current.mode) === gitMode(goal.mode)) return none;
  const diff = lineDiff(before, after, settings);
  if (diff === undefined) return { ...none, tooComplex: true };
  const digest = hunkDigest(tracked.storedPath, current.kind === 'file' ? current.sha256 : 'absent', goal.kind === 'file' ? goal.sha256 : 'absent');
  const { patch, hunks } = gitTextFilePatch(sides, diff, settings.context, digest);
  return { ...none, patch, ...(hunks.length > 0 ? { hunks } : {}) };
}
