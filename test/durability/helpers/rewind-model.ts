/**
 * The in-memory model the property test checks the library against: what
 * each path holds, which paths are tracked with their recorded versions, the
 * checkpoints, and what the tools last wrote. It predicts rewinds from the
 * behaviour contract (which state a checkpoint holds, refusals, conflicts), nothing more.
 */

export type PathState = { kind: 'file'; content: string } | { kind: 'absent' } | { kind: 'link' } | { kind: 'directory' };

export interface TrackedModel {
  /** One entry per recorded state, oldest first; the first is the backup taken before the first write. */
  versions: Array<{ checkpoint: number; state: PathState }>;
  /** What a tool (or a rewind) last wrote, for conflicts. */
  lastWrite?: PathState;
}

export interface RewindModel {
  files: Map<string, PathState>;
  /** Checkpoint ids in order, pre-rewind checkpoints included. */
  checkpoints: string[];
  tracked: Map<string, TrackedModel>;
  /** The undo checkpoint of the latest real rewind. */
  lastUndo?: string;
}

export interface PredictedRewind {
  changed: string[];
  conflicts: string[];
  /** Target state of each changed path. */
  targets: Map<string, PathState>;
}

export function sameState(a: PathState, b: PathState): boolean {
  return a.kind === b.kind && (a.kind !== 'file' || a.content === (b as { content: string }).content);
}

/** trackEdit: the first time a path is seen, its state now is backed up and attached to the latest checkpoint. */
export function track(model: RewindModel, path: string): void {
  if (model.tracked.has(path)) return;
  model.tracked.set(path, { versions: [{ checkpoint: model.checkpoints.length - 1, state: model.files.get(path)! }] });
}

/** checkpoint(): records the state of every tracked path. */
export function checkpoint(model: RewindModel, id: string): void {
  model.checkpoints.push(id);
  for (const [path, tracked] of model.tracked) tracked.versions.push({ checkpoint: model.checkpoints.length - 1, state: model.files.get(path)! });
}

/** The state a checkpoint holds, or the first backup for a path tracked later. */
function versionAt(tracked: TrackedModel, index: number): PathState {
  let chosen = tracked.versions[0]!.state;
  for (const version of tracked.versions) {
    if (version.checkpoint > index) break;
    chosen = version.state;
  }
  return chosen;
}

const restorable = (state: PathState) => state.kind === 'file' || state.kind === 'absent';

/** What rewinding to checkpoint `index` does, without doing it. */
export function predictRewind(model: RewindModel, index: number, skipConflicts: boolean): PredictedRewind {
  const prediction: PredictedRewind = { changed: [], conflicts: [], targets: new Map() };
  for (const path of [...model.tracked.keys()].sort()) {
    const tracked = model.tracked.get(path)!;
    const current = model.files.get(path)!;
    const target = versionAt(tracked, index);
    // Links and directories are left alone, and never recreated.
    if (!restorable(current) || !restorable(target) || sameState(current, target)) continue;
    const conflict = tracked.lastWrite !== undefined && !sameState(current, tracked.lastWrite);
    if (conflict) prediction.conflicts.push(path);
    if (conflict && skipConflicts) continue;
    prediction.changed.push(path);
    prediction.targets.set(path, target);
  }
  return prediction;
}

/** A real rewind: the pre-rewind checkpoint, then the changes; what it wrote is what the tools last wrote. */
export function applyRewind(model: RewindModel, prediction: PredictedRewind, undoCheckpointId: string): void {
  checkpoint(model, undoCheckpointId);
  model.lastUndo = undoCheckpointId;
  for (const [path, target] of prediction.targets) {
    model.files.set(path, target);
    model.tracked.get(path)!.lastWrite = target;
  }
}
