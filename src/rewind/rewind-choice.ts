import { RewindableError, RewindableErrorCode } from '../errors.js';
import type { FileState } from '../schemas.js';
import { sameState, type CheckpointInfo, type TrackedPath } from '../session/session-state.js';
import type { Session } from '../session/session.js';
import { chosenHunks } from './chosen-hunks.js';
import { selectTrackedPaths } from '../session/select-paths.js';
import type { RewindChoice } from './transaction.js';
import { undoOnTop, type RevertConflictChoice } from './undo-on-top.js';

/**
 * From the options of `rewindFiles` and `revertTurn` to what the rewind
 * changes (`RewindChoice`): which paths, what they become, and what happens
 * to files someone else changed.
 */

/**
 * What a rewind does with a file changed by someone other than the tracked
 * tools since they last wrote it: `overwrite` it with the checkpoint's
 * version, `skip` it, `merge` (undo the tools' changes on top of the other
 * edit; a merge that conflicts is left alone), or `markers` (the same, and a
 * conflicting merge is written with conflict markers).
 */
export type RewindConflictChoice = 'overwrite' | 'skip' | 'merge' | 'markers';

const rewindConflictChoices: readonly string[] = ['overwrite', 'skip', 'merge', 'markers'] satisfies RewindConflictChoice[];
const revertConflictChoices: readonly string[] = ['skip', 'markers', 'overwrite'] satisfies RevertConflictChoice[];

export interface RewindSelection {
  skipConflicts?: boolean | undefined;
  onConflict?: RewindConflictChoice | undefined;
  paths?: readonly string[] | undefined;
  hunks?: readonly string[] | undefined;
}

/** A rewind to `target` (`rewindFiles`). */
export function rewindChoice(session: Session, target: CheckpointInfo, options: RewindSelection, dryRun: boolean, what: string): RewindChoice {
  const onConflict = conflictChoice(options, what);
  const select = selectionOf(session, options.paths, what);
  const merging = onConflict === 'merge' || onConflict === 'markers';
  if (options.hunks !== undefined) {
    if (merging) {
      throw new RewindableError(RewindableErrorCode.INVALID_OPTIONS, `${what}: \`hunks\` and \`onConflict: '${onConflict}'\` cannot be combined; a hunk is applied to the file as it is now.`, {
        details: { option: 'hunks' },
      });
    }
    return { skipConflicts: onConflict === 'skip', select, goal: chosenHunks(options.hunks, (hash) => session.readBlob(hash), what) };
  }
  if (!merging) return { skipConflicts: onConflict === 'skip', select };
  const goal = undoOnTop({
    // Undo what the tools wrote since the checkpoint, keeping what was edited after their last write.
    baseOf: (tracked) => tracked.lastWrite?.state,
    readBlob: (hash) => session.readBlob(hash),
    onConflict: onConflict === 'merge' ? 'skip' : 'markers',
    labels: { base: 'written by the tools', restored: `checkpoint ${target.id.slice(0, 8)}` },
    preview: dryRun,
  });
  return { skipConflicts: false, select, goal };
}

/**
 * Undoing the turn of checkpoint `turn` alone (`revertTurn`): the paths it
 * changed, each put back as it was before the turn with the changes made
 * since kept (undo-on-top.ts). The turn ends at the next user message; the
 * latest turn ends now, with the tools' last writes as what it led to.
 */
export function revertChoice(session: Session, turn: CheckpointInfo, options: { onConflict?: RevertConflictChoice | undefined; paths?: readonly string[] | undefined }, dryRun: boolean, what: string): RewindChoice {
  const onConflict = options.onConflict ?? 'skip';
  if (!revertConflictChoices.includes(onConflict)) throw invalidChoice(what, onConflict, revertConflictChoices);
  const state = session.state;
  // A turn ends at the next user message: an undo point a rewind took meanwhile is no turn of its own.
  const next = state.checkpoints.find((checkpoint) => checkpoint.index > turn.index && checkpoint.reason === 'message');
  const afterTurn = (tracked: TrackedPath): FileState | undefined => (next === undefined ? tracked.lastWrite?.state : state.versionAt(tracked, next.index).state);
  const chosen = selectionOf(session, options.paths, what);
  let select = chosen;
  if (next !== undefined) {
    const changed = [...state.paths.values()].filter((tracked) => !sameState(state.versionAt(tracked, turn.index).state, afterTurn(tracked)!));
    select = new Set(changed.map((tracked) => tracked.storedPath).filter((stored) => chosen === undefined || chosen.has(stored)));
  }
  const label = turn.id.slice(0, 8);
  const goal = undoOnTop({ baseOf: afterTurn, readBlob: (hash) => session.readBlob(hash), onConflict, labels: { base: `after turn ${label}`, restored: `before turn ${label}` }, preview: dryRun });
  return { skipConflicts: false, select, goal };
}

function conflictChoice(options: RewindSelection, what: string): RewindConflictChoice {
  if (options.onConflict === undefined) return options.skipConflicts === true ? 'skip' : 'overwrite';
  if (!rewindConflictChoices.includes(options.onConflict)) throw invalidChoice(what, options.onConflict, rewindConflictChoices);
  if (options.skipConflicts === true && options.onConflict !== 'skip') {
    throw new RewindableError(RewindableErrorCode.INVALID_OPTIONS, `${what}: \`skipConflicts: true\` and \`onConflict: '${options.onConflict}'\` disagree; pass only \`onConflict\`.`, {
      details: { option: 'onConflict' },
    });
  }
  return options.onConflict;
}

function selectionOf(session: Session, paths: readonly string[] | undefined, what: string): Set<string> | undefined {
  return paths === undefined ? undefined : selectTrackedPaths(session.state, session.root, paths, what, true);
}

function invalidChoice(what: string, given: unknown, allowed: readonly string[]): RewindableError {
  return new RewindableError(RewindableErrorCode.INVALID_OPTIONS, `${what}: unknown \`onConflict\` ${JSON.stringify(given)}; use ${allowed.map((choice) => `'${choice}'`).join(', ')}.`, {
    details: { option: 'onConflict' },
  });
}
