import type { DirectoryCache } from '../fs/directory-cache.js';
import type { FileState, RewindAction } from '../schemas.js';
import type { ObservedPath } from '../fs/inspect-path.js';
import { asLastSeen, observePath, unchangedSinceLastSeen } from '../session/observe-path.js';
import { sameState, type SessionState, type TrackedPath } from '../session/session-state.js';
import type { BlobRead } from '../store/session-log.js';
import { mapConcurrently } from '../util/concurrency.js';
import type { CurrentState, PlannedChange, RewindPlan, TargetState } from './change.js';
import { plannedRemovals } from './created-directories.js';
import type { Measurements } from './measure.js';
import type { Goal, GoalOutcome } from './goal.js';
import { refusalOf, storedPathRefusal, unreadableBackup, type SkippedPath } from './safety.js';

/**
 * Planning a rewind: for every tracked path, what the target checkpoint says
 * it should be, what it is now, and what the rewind would do about it
 * (change.ts), or why it leaves the path alone (safety.ts). Each change is
 * handed to `measurements` (measure.ts) with the bytes read for it. The dry
 * run is this plan and nothing more; the real run applies it.
 */

export interface PlanContext {
  state: SessionState;
  /** Pinned directories shared by the files of this rewind. */
  directories?: DirectoryCache;
  /** Counts each change's statistics, now or as it is applied, and says which files need not be read here. */
  measurements: Measurements;
  readBlob(hash: string): Promise<BlobRead>;
  maxFileBytes: number;
  /** Leave files with conflicts alone instead of overwriting them. */
  skipConflicts: boolean;
  /** Plan only these paths (as stored in the log); default: every tracked path. */
  only?: ReadonlySet<string>;
  /**
   * A selective rewind: only these paths (as stored in the log) may change.
   * Every other tracked path is still looked at, and left alone uncounted, so
   * that the undo point records it as it is now.
   */
  select?: ReadonlySet<string>;
  /** What the selected paths become, when not simply the checkpoint's state (a revert, a merge, some hunks). */
  goal?: Goal;
  /**
   * Dry runs only: paths (absolute) taken to hold this state instead of what
   * is on disk, as they will when the rewind runs: a rewind a crash
   * interrupted is rolled back first, when the session is opened for writing.
   */
  assumed?: ReadonlyMap<string, FileState>;
  /** Called with the bytes of each path as they are now, before anything is written (real runs back them up). */
  onContent?: (tracked: TrackedPath, observation: ObservedPath) => Promise<void>;
}

export async function planRewind(context: PlanContext, targetIndex: number): Promise<RewindPlan> {
  const tracked = [...context.state.paths.values()].filter((path) => context.only === undefined || context.only.has(path.storedPath));
  // Which paths are still what was last seen, in one batch: on a large capture scope nearly all are.
  // (A plan with no directory cache, the diff's, wants every file's bytes and looks at each closely.)
  const unchanged = context.directories === undefined ? tracked.map(() => false) : await unchangedSinceLastSeen(tracked, context.directories);
  // Most paths of a large scope are unchanged and already at their target: settled here, with nothing to read or write.
  const unsettled: number[] = [];
  tracked.forEach((path, index) => {
    if (!unchanged[index]! || context.assumed?.has(path.path) === true || (isSelected(context, path) && (context.goal !== undefined || !isSettled(path, context.state.versionAt(path, targetIndex).state)))) unsettled.push(index);
  });
  // Changes and skips are reported (and applied) in path order; only these need sorting, not the whole scope.
  unsettled.sort((a, b) => (tracked[a]!.path < tracked[b]!.path ? -1 : tracked[a]!.path > tracked[b]!.path ? 1 : 0));
  const concurrency = planConcurrency(context, unsettled.map((index) => tracked[index]!), targetIndex);
  const planned = await mapConcurrently(unsettled, concurrency, (index) => planPath(context, tracked[index]!, targetIndex, unchanged[index]!));
  const outcomes = new Map(unsettled.map((index, at) => [index, planned[at]!]));
  const observations: Array<{ tracked: TrackedPath; observation: ObservedPath }> = [];
  tracked.forEach((path, index) => {
    const outcome = outcomes.get(index);
    if (outcome !== undefined) observations.push({ tracked: path, observation: outcome.observation });
    else if (!sameState(path.lastSeen!.state, context.state.latestVersion(path).state)) observations.push({ tracked: path, observation: asLastSeen(path.lastSeen!) });
  });
  const changes: PlannedChange[] = [];
  const skipped: SkippedPath[] = [];
  for (const outcome of planned) {
    if (outcome.change !== undefined) changes.push(outcome.change);
    if (outcome.skipped !== undefined) skipped.push(outcome.skipped);
  }
  if (context.only === undefined && context.select === undefined) skipped.push(...[...context.state.refusedPaths].map(([absolute, reason]) => storedPathRefusal(absolute, reason)));
  const directoriesRemoved = context.directories === undefined ? [] : plannedRemovals(context.state, targetIndex, changes, context.directories);
  return { changes, skipped, observations, directoriesRemoved };
}

/**
 * Paths planned at once. Each one in flight holds its current and its target
 * bytes (and the backup being compressed): with large files, two at a time
 * keep a rewind of thousands of them within a flat memory budget. Only the
 * paths still to plan count (settled ones hold no bytes), so a large scope
 * with few changes is not looked through again.
 */
function planConcurrency(context: PlanContext, tracked: readonly TrackedPath[], targetIndex: number): number {
  const largeFileBytes = 256 * 1024;
  const isLarge = (state: FileState) => state.kind === 'file' && state.size >= largeFileBytes;
  // The target, and the latest known content as a guide to what is there now.
  const hasLarge = tracked.some((path) => isLarge(context.state.versionAt(path, targetIndex).state) || isLarge(context.state.latestVersion(path).state));
  return hasLarge ? 2 : 4;
}

interface PathOutcome {
  observation: ObservedPath;
  change?: PlannedChange;
  skipped?: SkippedPath;
}

/** A path unchanged since last seen (one link, a regular file) whose target is what it holds: nothing to do. */
function isSettled(tracked: TrackedPath, target: FileState): boolean {
  return (target.kind === 'file' || target.kind === 'absent') && sameState(tracked.lastSeen!.state, target);
}

async function planPath(context: PlanContext, tracked: TrackedPath, targetIndex: number, knownUnchanged: boolean): Promise<PathOutcome> {
  if (!isSelected(context, tracked)) return observeOnly(context, tracked);
  const checkpoint = context.state.versionAt(tracked, targetIndex).state;
  const assumed = context.assumed?.get(tracked.path);
  if (assumed !== undefined) return planFrom(context, tracked, checkpoint, assumed);
  let observation: ObservedPath = knownUnchanged
    ? asLastSeen(tracked.lastSeen!)
    : observePath(tracked.path, tracked.lastSeen, { maxBytes: context.maxFileBytes, read: 'if-changed', directories: context.directories, glanced: context.directories !== undefined });
  // The statistics and the backup need the current bytes, which a matching stat signature let us skip; so may a goal.
  const state = observation.state;
  if (observation.content === undefined && state.kind === 'file') {
    const action = actionFor(state, checkpoint, tracked);
    const forStatistics = action !== undefined && action !== 'chmod' && !context.measurements.readsLater(state);
    if (forStatistics || context.goal?.needsBytes(tracked, state, checkpoint) === true) {
      observation = observePath(tracked.path, undefined, { maxBytes: context.maxFileBytes, read: 'always', directories: context.directories });
    }
  }
  if (context.onContent !== undefined) await context.onContent(tracked, observation);
  const content = observation.content;
  const goal = await goalOf(context, tracked, observation, checkpoint);
  delete observation.content; // the plan outlives this step; keep memory flat on large rewinds
  if (goal.kind === 'left-alone') return { observation, skipped: goal.skipped };
  return decide(context, tracked, observation, goal.state, actionFor(observation.state, goal.state, tracked), content);
}

/** The state the path should become: the checkpoint's, unless a goal says otherwise. */
function goalOf(context: PlanContext, tracked: TrackedPath, observation: ObservedPath, checkpoint: FileState): GoalOutcome | Promise<GoalOutcome> {
  return context.goal === undefined ? { kind: 'target', state: checkpoint } : context.goal.resolve(tracked, observation, checkpoint);
}

function isSelected(context: PlanContext, tracked: TrackedPath): boolean {
  return context.select === undefined || context.select.has(tracked.storedPath);
}

/** A path a selective rewind leaves out: its state now, for the undo point, and nothing else. */
async function observeOnly(context: PlanContext, tracked: TrackedPath): Promise<PathOutcome> {
  const assumed = context.assumed?.get(tracked.path);
  if (assumed !== undefined) return { observation: { state: assumed } };
  const observation = observePath(tracked.path, tracked.lastSeen, { maxBytes: context.maxFileBytes, read: 'if-changed', directories: context.directories, glanced: context.directories !== undefined });
  if (context.onContent !== undefined) await context.onContent(tracked, observation);
  delete observation.content;
  return { observation };
}

/** A dry run's plan for a path taken to hold `assumed` (see `PlanContext.assumed`): its bytes come from the store. */
async function planFrom(context: PlanContext, tracked: TrackedPath, checkpoint: FileState, assumed: FileState): Promise<PathOutcome> {
  const observation: ObservedPath = { state: assumed };
  let content: Buffer | undefined;
  if (assumed.kind === 'file' && (actionFor(assumed, checkpoint, tracked) !== undefined || context.goal !== undefined)) {
    const read = await context.readBlob(assumed.sha256);
    if (!read.ok) return { observation, skipped: unreadableBackup(tracked.path, read.reason) };
    content = read.bytes;
  }
  const goal = await goalOf(context, tracked, { state: assumed, content }, checkpoint);
  if (goal.kind === 'left-alone') return { observation, skipped: goal.skipped };
  const action = actionFor(assumed, goal.state, tracked);
  if (action !== undefined && context.onContent !== undefined) await context.onContent(tracked, { state: assumed, content });
  return decide(context, tracked, observation, goal.state, action, content);
}

/** The change (measured, or kept to be measured when applied) or the refusal for a path found as `observation`. */
function decide(context: PlanContext, tracked: TrackedPath, observation: ObservedPath, target: FileState, action: RewindAction | undefined, content: Buffer | undefined): PathOutcome | Promise<PathOutcome> {
  // A merge keeps the other writer's edit, so its change discards nothing.
  const merged = context.goal?.merges.has(tracked.path) === true && context.goal.computed.has(target.kind === 'file' ? target.sha256 : '');
  const conflict = !merged && tracked.lastWrite !== undefined && !sameState(observation.state, tracked.lastWrite.state);
  const skipped = refusalOf({ path: tracked.path, found: observation, captured: tracked.captured === true, target, action, conflict, skipConflicts: context.skipConflicts });
  if (skipped !== undefined) return { observation, skipped };
  if (action === undefined) return { observation };
  // An action and no refusal: `actionFor` and `refusalOf` leave only these kinds on either side.
  const change: PlannedChange = { path: tracked.path, tracked, action, from: observation.state as CurrentState, to: target as TargetState, conflict };
  if (context.measurements.keep(change, content)) return { observation, change };
  return context.measurements.measure(change, content).then((measured) => (measured.kind === 'refused' ? { observation, skipped: measured.skipped } : { observation, change }));
}

/** What turns `current` into `target`, or undefined when nothing needs doing (or nothing may be done). */
function actionFor(current: FileState, target: FileState, tracked: TrackedPath): RewindAction | undefined {
  // A shell replaced a captured file by a link: the link is removed or replaced (rename never follows it).
  if (current.kind === 'symlink' && tracked.captured === true) {
    if (target.kind === 'absent') return 'delete';
    if (target.kind === 'file') return 'recreate';
  }
  if (current.kind !== 'file' && current.kind !== 'absent') return undefined;
  if (target.kind !== 'file' && target.kind !== 'absent') return undefined;
  if (sameState(current, target)) return undefined;
  if (target.kind === 'absent') return 'delete';
  if (current.kind === 'absent') return 'recreate';
  return current.sha256 === target.sha256 ? 'chmod' : 'restore';
}
