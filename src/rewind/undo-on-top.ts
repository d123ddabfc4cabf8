import { isUtf8 } from 'node:buffer';
import type { ObservedPath } from '../fs/inspect-path.js';
import type { FileState, RegularFileState } from '../schemas.js';
import { sameState, type TrackedPath } from '../session/session-state.js';
import type { BlobRead } from '../store/session-log.js';
import type { FileMerge } from './file-merge.js';
import { ComputedContents, type Goal, type GoalOutcome } from './goal.js';
import { leftAlone, unreadableBackup } from './safety.js';
import { mergeThreeWay, type ThreeWayMergeResult } from '../text/three-way-merge.js';

/**
 * Undoing one change (base -> restored) on top of a file that changed since
 * (base -> current): `revertTurn`, where the change is a turn, and
 * `rewindFiles` with `onConflict: 'merge'`, where it is what the tools wrote
 * since the checkpoint and the file was edited after them. A three-way
 * merge (base: after the change; ours: now; theirs: before it) keeps the
 * later edits, as `git revert` does.
 *
 * Per path, in order:
 * - no base, or the file is still the base: it simply goes back;
 * - the file already holds the restored version, or the change changed
 *   nothing: it stays as it is;
 * - the file was deleted since, or the change created it and it was edited
 *   since: a conflict without lines (git's modify/delete);
 * - otherwise the merge; a binary file is a conflict without lines.
 * A conflict is left alone (`skip`), written with conflict markers where
 * there are lines to mark (`markers`; otherwise left alone), or overwritten
 * with the restored version (`overwrite`).
 */

export type RevertConflictChoice = 'skip' | 'markers' | 'overwrite';

export interface UndoOnTopSettings {
  /** What the change led to, or undefined when there is nothing to merge with: the path simply goes back. */
  baseOf(tracked: TrackedPath): FileState | undefined;
  readBlob(hash: string): Promise<BlobRead>;
  onConflict: RevertConflictChoice;
  /** Written after the conflict markers of the base and of the restored side. */
  labels: { base: string; restored: string };
  /** Dry runs: keep the merged text to show. */
  preview: boolean;
}

export function undoOnTop(settings: UndoOnTopSettings): Goal {
  const computed = new ComputedContents();
  const merges = new Map<string, FileMerge>();
  const target = (state: FileState): GoalOutcome => ({ kind: 'target', state });

  /** A conflict with no merge to write: modify/delete, binary, or a base that cannot be read. */
  const unmergeable = (tracked: TrackedPath, restored: FileState, why: string): GoalOutcome => {
    merges.set(tracked.path, { status: 'conflict', conflicts: [] });
    if (settings.onConflict === 'overwrite') return target(restored);
    return { kind: 'left-alone', skipped: leftAlone(tracked.path, 'merge-conflict', `${why}, so the change cannot be undone on top of it`) };
  };

  const mergeOutcome = (tracked: TrackedPath, result: Exclude<ThreeWayMergeResult, { status: 'binary' }>, mode: number, restored: FileState): GoalOutcome => {
    const preview = settings.preview && isUtf8(result.merged) ? { preview: result.merged.toString('utf8') } : {};
    if (result.status === 'clean') {
      merges.set(tracked.path, { status: 'clean', conflicts: [], ...preview });
      return target(computed.add(result.merged, mode));
    }
    const conflicts = result.conflicts.map(({ oursLines, baseLines, theirsLines }) => ({ current: range(oursLines), base: range(baseLines), restored: range(theirsLines) }));
    merges.set(tracked.path, { status: 'conflict', conflicts, ...preview });
    if (settings.onConflict === 'markers') return target(computed.add(result.merged, mode));
    if (settings.onConflict === 'overwrite') return target(restored);
    const regions = conflicts.map(({ current }) => (current.count <= 1 ? `line ${current.start}` : `lines ${current.start}-${current.start + current.count - 1}`)).join(', ');
    return { kind: 'left-alone', skipped: leftAlone(tracked.path, 'merge-conflict', `undoing the change conflicts with later edits at ${regions}`) };
  };

  /** The merge is needed: the file is none of base, restored, and the change changed something. */
  const mergeNeeded = (now: FileState, base: FileState | undefined, restored: FileState): base is FileState =>
    base !== undefined && !sameState(now, base) && !sameState(now, restored) && !sameState(base, restored);

  return {
    computed,
    merges,
    needsBytes: (tracked, now, restored) => now.kind === 'file' && mergeNeeded(now, settings.baseOf(tracked), restored),
    async resolve(tracked: TrackedPath, found: ObservedPath, restored: FileState): Promise<GoalOutcome> {
      const now = found.state;
      const base = settings.baseOf(tracked);
      if (!mergeNeeded(now, base, restored)) return target(base !== undefined && sameState(base, restored) ? now : restored);
      // Anything else on either side is refused by the plan's safety rules, as in a full rewind.
      if (!isRestorable(now) || !isRestorable(restored)) return target(restored);
      if (!isRestorable(base)) return unmergeable(tracked, restored, 'the version after the change has no backup');
      if (now.kind === 'absent') return unmergeable(tracked, restored, 'it was deleted since the change');
      if (restored.kind === 'absent') return unmergeable(tracked, restored, 'the change created it and it was edited since');
      const [baseBytes, restoredBytes] = await Promise.all([bytesOf(settings, base), bytesOf(settings, restored)]);
      // Writes recorded before their bytes were kept (or a damaged backup): nothing to merge from.
      if (!baseBytes.ok) return unmergeable(tracked, restored, 'the version it is merged from is not in the store');
      if (!restoredBytes.ok) return { kind: 'left-alone', skipped: unreadableBackup(tracked.path, restoredBytes.reason) };
      if (found.content === undefined) throw new Error(`internal: no bytes read for ${tracked.path}`);
      const labels = { ours: 'current', base: settings.labels.base, theirs: settings.labels.restored };
      const result = mergeThreeWay({ base: baseBytes.bytes, ours: found.content, theirs: restoredBytes.bytes }, { labels });
      if (result.status === 'binary') return unmergeable(tracked, restored, 'it is binary');
      // The permission bits merge too: a mode changed since the change is kept.
      const mode = base.kind === 'file' && now.mode !== base.mode ? now.mode : restored.mode;
      return mergeOutcome(tracked, result, mode, restored);
    },
  };
}

function isRestorable(state: FileState): state is RegularFileState | { kind: 'absent' } {
  return state.kind === 'file' || state.kind === 'absent';
}

async function bytesOf(settings: UndoOnTopSettings, state: RegularFileState | { kind: 'absent' }): Promise<BlobRead> {
  return state.kind === 'absent' ? { ok: true, bytes: Buffer.alloc(0) } : settings.readBlob(state.sha256);
}

/** A 0-based, end-exclusive range as a 1-based start and a count. */
function range([start, end]: [number, number]): { start: number; count: number } {
  return { start: start + 1, count: end - start };
}
