import type { Refusal } from '../refusal.js';
import type { FileState, RegularFileState, RewindAction } from '../schemas.js';
import type { DirectoryCache } from '../fs/directory-cache.js';
import { asLastSeen, observePath, unchangedSinceLastSeen, type ObservedPath } from '../session/observe-path.js';
import { sameState, type SessionState, type TrackedPath } from '../session/session-state.js';
import type { BlobRead } from '../store/session-log.js';
import { mapConcurrently } from '../util/concurrency.js';
import { plannedRemovals } from './created-directories.js';
import { lineStats, type LineStats } from './line-stats.js';
import type { LineStatsCache } from './stats-cache.js';

/**
 * Planning a rewind: for every tracked path, what the target checkpoint says
 * it should be (SPEC 5.1), what it is now, and what the rewind would do about
 * it, with exact line statistics (5.2) and every safety refusal (5.4). The dry
 * run is this plan and nothing more; the real run applies it.
 */

/** Why a path is left alone (see refusal.ts). */
export type SkipReason = Refusal;

export interface SkippedPath {
  path: string;
  reason: SkipReason;
  /** A sentence for people: what was found and why nothing was written. */
  message: string;
}

export type TargetState = { kind: 'absent' } | RegularFileState;
/** What may be replaced: a regular file or nothing, or, for paths of the capture scope, a link (removed, never followed). */
export type CurrentState = TargetState | { kind: 'symlink' };

export interface PlannedChange {
  path: string;
  tracked: TrackedPath;
  action: RewindAction;
  target: TargetState;
  /** What the plan saw on disk; the write is made only while this still holds. */
  current: CurrentState;
  insertions: number;
  deletions: number;
  binary: boolean;
  /** The diff was too costly; the file is listed with 0/0. */
  statsSkipped: boolean;
  /** Changed by someone other than the tracked tools since they last wrote it. */
  conflict: boolean;
  /**
   * Whether the target's backup was found readable and the statistics
   * counted; a real rewind leaves both to `measureChange` when it applies
   * the change (see `PlanContext.measureWhenApplied`).
   */
  measured: boolean;
  /**
   * The current bytes the plan read, kept for `measureChange`; `on-disk`
   * when it did not read them (see `PlanContext.measureWhenApplied`).
   */
  currentBytes?: Buffer | 'on-disk' | undefined;
  /** The target's bytes as `measureChange` read them (hash-checked), for the write that follows. */
  targetBytes?: Buffer | undefined;
}

export interface RewindPlan {
  changes: PlannedChange[];
  skipped: SkippedPath[];
  /**
   * Tracked paths with their state right now, in the order first tracked, for
   * the pre-rewind checkpoint to record. Left out: paths found still as last
   * seen when that is also their latest recorded state. They have nothing to
   * record, and on a large capture scope they are nearly all the paths.
   */
  observations: Array<{ tracked: TrackedPath; observation: ObservedPath }>;
  /** Directories the session created that the deletions leave empty, deepest first (see created-directories.ts). */
  directoriesRemoved: string[];
}

export interface PlanContext {
  state: SessionState;
  /** Pinned directories shared by the files of this rewind. */
  directories?: DirectoryCache;
  /**
   * Real runs: read each target's backup and count the statistics only when
   * the change is applied (`measureChange`), so that the plan is logged and
   * the first writes start sooner, while later changes are measured. The
   * current bytes this needs are kept from planning while `keepBytes` lasts;
   * past it, changes are measured during planning, as in a dry run. A file
   * whose stat signature vouches for the content last seen, content that
   * `stored` says the store holds already (so the undo point needs no copy),
   * is not read here at all: applying reads it (`on-disk`).
   */
  measureWhenApplied?: { keepBytes: number; stored(sha256: string): boolean };
  readBlob(hash: string): Promise<BlobRead>;
  /** Dry runs: where the counts made here are kept for the rewind that may follow (see `recallStats`). */
  keepCounts?: LineStatsCache;
  maxFileBytes: number;
  /** Leave files with conflicts alone instead of overwriting them. */
  skipConflicts: boolean;
  /** Plan only these paths (as stored in the log); default: every tracked path. */
  only?: ReadonlySet<string>;
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
  const outcomes = new Array<PathOutcome | undefined>(tracked.length);
  const unsettled: number[] = [];
  tracked.forEach((path, index) => {
    if (!unchanged[index]! || context.assumed?.has(path.path) === true || !isSettled(path, context.state.versionAt(path, targetIndex).state)) unsettled.push(index);
  });
  // Changes and skips are reported (and applied) in path order; only these need sorting, not the whole scope.
  unsettled.sort((a, b) => (tracked[a]!.path < tracked[b]!.path ? -1 : tracked[a]!.path > tracked[b]!.path ? 1 : 0));
  const concurrency = planConcurrency(context, unsettled.map((index) => tracked[index]!), targetIndex);
  const planned = await mapConcurrently(unsettled, concurrency, (index) => planPath(context, tracked[index]!, targetIndex, unchanged[index]!));
  unsettled.forEach((index, at) => (outcomes[index] = planned[at]!));
  const plan: RewindPlan = { changes: [], skipped: [], observations: [], directoriesRemoved: [] };
  tracked.forEach((path, index) => {
    const outcome = outcomes[index];
    if (outcome !== undefined) plan.observations.push({ tracked: path, observation: outcome.observation });
    else if (!sameState(path.lastSeen!.state, context.state.latestVersion(path).state)) plan.observations.push({ tracked: path, observation: asLastSeen(path.lastSeen!) });
  });
  for (const outcome of planned) {
    if (outcome.change !== undefined) plan.changes.push(outcome.change);
    if (outcome.skipped !== undefined) plan.skipped.push(outcome.skipped);
  }
  if (context.only === undefined) plan.skipped.push(...[...context.state.refusedPaths].map(([absolute, reason]) => refuseStoredPath(absolute, reason)));
  if (context.directories !== undefined) plan.directoriesRemoved = plannedRemovals(context.state, targetIndex, plan.changes, context.directories);
  return plan;
}

/** A path a record names that is never acted on (`SessionState.refusedPaths`): reported by every rewind, never touched. */
export function refuseStoredPath(absolute: string, reason: 'outside-project' | 'invalid-path'): SkippedPath {
  if (reason === 'invalid-path') {
    return leftAlone(absolute, reason, 'the session log names it, but no file can have that name (a NUL byte, or a name over 255 bytes), so it is never read or written; the log was altered or damaged');
  }
  return leftAlone(
    absolute,
    reason,
    'the session log names it, but it is outside the project root and the extra roots (or inside the store), so it is never read or written; ' +
      'the log was altered or comes from elsewhere, unless the path is in an extra root this session is no longer opened with',
  );
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
  const target = context.state.versionAt(tracked, targetIndex).state;
  const assumed = context.assumed?.get(tracked.path);
  if (assumed !== undefined) return planFrom(context, tracked, target, assumed);
  let observation: ObservedPath = knownUnchanged
    ? asLastSeen(tracked.lastSeen!)
    : observePath(tracked.path, tracked.lastSeen, { maxBytes: context.maxFileBytes, read: 'if-changed', directories: context.directories, glanced: context.directories !== undefined });
  let action = actionFor(observation.state, target, tracked);
  const later = context.measureWhenApplied;
  // The diff and the backup need the current bytes, which a matching stat signature let us skip (and a real
  // run whose store holds them reads them only when it applies the change).
  const readLater = observation.state.kind === 'file' && later !== undefined && later.stored(observation.state.sha256);
  if (observation.content === undefined && observation.state.kind === 'file' && action !== undefined && action !== 'chmod' && !readLater) {
    observation = observePath(tracked.path, undefined, { maxBytes: context.maxFileBytes, read: 'always', directories: context.directories });
    action = actionFor(observation.state, target, tracked);
  }
  if (context.onContent !== undefined) await context.onContent(tracked, observation);
  const content = observation.content;
  delete observation.content; // the plan outlives this step; keep memory flat on large rewinds
  const skip = (reason: SkipReason, detail: string): PathOutcome => ({ observation, skipped: leftAlone(tracked.path, reason, detail) });

  const refusal = refuseCurrent(observation, tracked);
  if (refusal !== undefined) return skip(refusal.reason, refusal.message);
  if (target.kind !== 'file' && target.kind !== 'absent') return skip('target-not-restorable', describeUnrestorable(target));
  if (action === undefined) return { observation };
  const current = observation.state as CurrentState;

  const conflict = tracked.lastWrite !== undefined && !sameState(observation.state, tracked.lastWrite.state);
  if (conflict && context.skipConflicts) return skip('conflict', 'it changed since the tracked tools last wrote it, and conflicts are skipped');
  const change: PlannedChange = { path: tracked.path, tracked, action, target, current, insertions: 0, deletions: 0, binary: false, statsSkipped: false, conflict, measured: false };
  if (later !== undefined && (content?.length ?? 0) <= later.keepBytes) {
    later.keepBytes -= content?.length ?? 0;
    change.currentBytes = current.kind === 'file' && content === undefined && action !== 'chmod' ? 'on-disk' : content;
    return { observation, change };
  }
  const skipped = await measureChange(context, change, content);
  return skipped !== undefined ? { observation, skipped } : { observation, change };
}

/** A dry run's plan for a path taken to hold `assumed` (see `PlanContext.assumed`): its bytes come from the store. */
async function planFrom(context: PlanContext, tracked: TrackedPath, target: FileState, assumed: FileState): Promise<PathOutcome> {
  const observation: ObservedPath = { state: assumed };
  if (target.kind !== 'file' && target.kind !== 'absent') return { observation, skipped: leftAlone(tracked.path, 'target-not-restorable', describeUnrestorable(target)) };
  if (assumed.kind !== 'file' && assumed.kind !== 'absent') return { observation };
  const action = actionFor(assumed, target, tracked);
  if (action === undefined) return { observation };
  let content: Buffer | undefined;
  if (assumed.kind === 'file') {
    const read = await context.readBlob(assumed.sha256);
    if (!read.ok) return { observation, skipped: leftAlone(tracked.path, 'backup-unreadable', read.reason) };
    content = read.bytes;
  }
  if (context.onContent !== undefined) await context.onContent(tracked, { state: assumed, content });
  const conflict = tracked.lastWrite !== undefined && !sameState(assumed, tracked.lastWrite.state);
  if (conflict && context.skipConflicts) return { observation, skipped: leftAlone(tracked.path, 'conflict', 'it changed since the tracked tools last wrote it, and conflicts are skipped') };
  const change: PlannedChange = { path: tracked.path, tracked, action, target, current: assumed, insertions: 0, deletions: 0, binary: false, statsSkipped: false, conflict, measured: false };
  const skipped = await measureChange(context, change, content);
  return skipped !== undefined ? { observation, skipped } : { observation, change };
}

/**
 * Reads the target's backup of a planned change (a missing or damaged one
 * leaves the path alone: `backup-unreadable`) and counts its exact line
 * statistics against the current bytes (`current`: none for a file that
 * does not exist). The target's bytes stay on the change for its write when `keepTarget`.
 */
export async function measureChange(
  context: Pick<PlanContext, 'readBlob' | 'keepCounts'>,
  change: PlannedChange,
  current: Buffer | undefined,
  keepTarget = false,
): Promise<SkippedPath | undefined> {
  change.currentBytes = undefined;
  let targetBytes: Buffer | undefined;
  if (change.target.kind === 'file') {
    const read = await context.readBlob(change.target.sha256);
    if (!read.ok) return leftAlone(change.path, 'backup-unreadable', read.reason);
    targetBytes = read.bytes;
  }
  if (change.action !== 'chmod') {
    const stats = countChange(change, current, targetBytes);
    const sides = sidesOf(change);
    if (sides !== undefined) context.keepCounts?.set(sides.from, sides.to, stats);
    if (keepTarget) change.targetBytes = targetBytes;
  }
  change.measured = true;
  return undefined;
}

/** Counts the statistics of `change` from the bytes on both sides (`undefined`: no file there). */
export function countChange(change: PlannedChange, current: Uint8Array | undefined, target: Uint8Array | undefined): LineStats {
  const stats = lineStats(current, target);
  setStats(change, stats);
  change.measured = true;
  return stats;
}

/**
 * Takes the statistics of `change` from the counts a dry run kept, if they
 * hold them (the same contents, either way round): then its current bytes
 * need not be read for them. The target's backup is read all the same when
 * the change writes it.
 */
export function recallStats(cache: LineStatsCache | undefined, change: PlannedChange): boolean {
  const sides = change.action === 'chmod' ? undefined : sidesOf(change);
  const stats = sides === undefined ? undefined : cache?.get(sides.from, sides.to);
  if (stats === undefined) return false;
  setStats(change, stats);
  change.currentBytes = undefined;
  change.measured = true;
  return true;
}

/** The contents on both sides of a change as the statistics cache names them; none when the current entry is a link. */
function sidesOf(change: PlannedChange): { from: string; to: string } | undefined {
  if (change.current.kind === 'symlink') return undefined;
  return { from: change.current.kind === 'file' ? change.current.sha256 : 'absent', to: change.target.kind === 'file' ? change.target.sha256 : 'absent' };
}

function setStats(change: PlannedChange, stats: LineStats): void {
  change.insertions = stats.insertions;
  change.deletions = stats.deletions;
  change.binary = stats.binary;
  change.statsSkipped = stats.skipped;
}

/** A path a rewind does not touch, and why (`detail` completes "<path> was left alone: ..."). */
export function leftAlone(filePath: string, reason: SkipReason, detail: string): SkippedPath {
  return { path: filePath, reason, message: `${filePath} was left alone: ${detail}.` };
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

/**
 * SPEC 5.4: what is on disk now may not be written through or over. One
 * exception, from the capture issue: in the capture scope, a link that
 * replaced a file is itself replaced (never followed), since undoing shell
 * changes is the point of capturing them.
 */
function refuseCurrent(observation: ObservedPath, tracked: TrackedPath): { reason: SkipReason; message: string } | undefined {
  const state = observation.state;
  switch (state.kind) {
    case 'symlink':
      if (tracked.captured === true) return undefined;
      return { reason: 'symlink', message: 'it is now a symbolic link; links are never written through' };
    case 'not-regular':
      return { reason: 'not-regular', message: `it is now a ${state.fileType}, not a regular file` };
    case 'unsafe-parent':
      return { reason: 'parent-changed', message: observation.reason ?? 'its parent directory changed' };
    case 'too-large':
      return { reason: 'too-large', message: `it is now ${state.size} bytes, over the backup size cap, so it could not be backed up first` };
    case 'file':
      if (observation.stat !== undefined && observation.stat.nlink > 1n) {
        return { reason: 'hard-link', message: `it has ${observation.stat.nlink} hard links; writing it would change the other names too` };
      }
      return undefined;
    case 'absent':
      return undefined;
  }
}

function describeUnrestorable(target: Exclude<FileState, TargetState>): string {
  switch (target.kind) {
    case 'symlink':
      return 'at that checkpoint it was a symbolic link, and links are never recreated';
    case 'not-regular':
      return `at that checkpoint it was a ${target.fileType}, which is never recreated`;
    case 'unsafe-parent':
      return 'at that checkpoint its parent path went through a link, so no backup was taken';
    case 'too-large':
      return `at that checkpoint it was ${target.size} bytes, over the backup size cap, so no backup was taken`;
  }
}
