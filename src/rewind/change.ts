import type { RegularFileState, RewindAction } from '../schemas.js';
import type { ObservedPath } from '../fs/inspect-path.js';
import type { TrackedPath } from '../session/session-state.js';
import type { SkippedPath } from './safety.js';

/**
 * A rewind's plan as data: what each path is, what it should become, and
 * what turns one into the other. Nothing here says when bytes are read or
 * how the statistics are counted (measure.ts); applying a change never
 * alters it.
 */

export type TargetState = { kind: 'absent' } | RegularFileState;
/** What may be replaced: a regular file or nothing, or, for paths of the capture scope, a link (removed, never followed). */
export type CurrentState = TargetState | { kind: 'symlink' };

export interface PlannedChange {
  readonly path: string;
  readonly tracked: TrackedPath;
  readonly action: RewindAction;
  /** What the plan saw on disk; the write is made only while this still holds. */
  readonly from: CurrentState;
  readonly to: TargetState;
  /** Changed by someone other than the tracked tools since they last wrote it. */
  readonly conflict: boolean;
}

export interface RewindPlan {
  readonly changes: readonly PlannedChange[];
  readonly skipped: readonly SkippedPath[];
  /**
   * Tracked paths with their state right now, in the order first tracked, for
   * the pre-rewind checkpoint to record. Left out: paths found still as last
   * seen when that is also their latest recorded state. They have nothing to
   * record, and on a large capture scope they are nearly all the paths.
   */
  readonly observations: ReadonlyArray<{ tracked: TrackedPath; observation: ObservedPath }>;
  /** Directories the session created that the deletions leave empty, deepest first (see created-directories.ts). */
  readonly directoriesRemoved: readonly string[];
}

/**
 * The change that undoes `change` (used to roll back), or undefined when it
 * cannot be undone: a link that was removed is never recreated.
 */
export function inverseOf(change: PlannedChange): PlannedChange | undefined {
  if (change.from.kind === 'symlink') return undefined;
  const inverse: Record<RewindAction, RewindAction> = { restore: 'restore', chmod: 'chmod', recreate: 'delete', delete: 'recreate' };
  return { ...change, action: inverse[change.action], from: change.to, to: change.from };
}
