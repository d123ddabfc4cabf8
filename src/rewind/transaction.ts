import { randomUUID } from 'node:crypto';
import { RewindableError, RewindableErrorCode } from '../errors.js';
import type { CheckpointRecord, FileState, RewindBeginRecord, RewindEndRecord } from '../schemas.js';
import { sameState, writtenStates, type CheckpointInfo } from '../session/session-state.js';
import { now, type Session } from '../session/session.js';
import { DirectoryCache } from '../fs/directory-cache.js';
import { startWorkersAfter, startWorkersFor } from '../fs/replace-many.js';
import { applyChanges, type ApplyContext, type ApplyOutcome } from './apply.js';
import { inverseOf, type PlannedChange, type RewindPlan } from './change.js';
import { measurementsFor, readerOf, type Measurements } from './measure.js';
import { planRewind, type PlanContext } from './plan.js';
import { changedAfterInterruptedRewind } from './safety.js';
import { summarize, withMerges, type RewindFilesReady } from './result.js';
import type { Goal } from './goal.js';
import { clearOwnPendingRewind, notePendingRewind } from './pending-rewind-note.js';

/** Backups a rewind stores before its records, per early batch: small, so a large rewind stays flat in memory. */
const rewindBatchBytes = 4 * 1024 * 1024;

/**
 * A real rewind is a transaction:
 *
 * 1. plan it, backing up the current bytes of every file as they are read;
 * 2. store, durably and in one append, a pre-rewind checkpoint (the undo
 *    point) and a `rewind-begin` record naming every planned change;
 * 3. apply the changes (restores first, deletions last), reading each
 *    target's backup and counting its statistics just before its write, so
 *    that the writes of the first changes overlap this work for later ones;
 * 4. append `rewind-end`.
 *
 * If a change fails, the ones already made are rolled back to the
 * pre-rewind checkpoint before the error is thrown. If the process dies
 * between 2 and 4, the next open of the session rolls back too. Rolling back
 * rather than forward: the caller never received a result, so the files go
 * back to the state it last saw, as a database aborts a transaction that
 * did not commit.
 */
/** What a rewind may change: `select` (stored paths) limits it to some files; conflicts are overwritten unless skipped. */
export interface RewindChoice {
  skipConflicts: boolean;
  select?: ReadonlySet<string> | undefined;
  /** What the selected paths become, when not the checkpoint's state (goal.ts). */
  goal?: Goal | undefined;
}

export function runRewind(session: Session, target: CheckpointInfo, choice: RewindChoice): Promise<RewindFilesReady> {
  return withDirectories((directories) => runRewindIn(session, target, choice, directories));
}

async function runRewindIn(session: Session, target: CheckpointInfo, choice: RewindChoice, directories: DirectoryCache): Promise<RewindFilesReady> {
  startWorkersFor(() => restoresLikely(session, target, choice.select));
  const batch = session.newBlobBatch(rewindBatchBytes);
  const undoCheckpointId = randomUUID();
  const undoFiles: CheckpointRecord['files'] = [];
  const measurements = measurementsFor(session, 'rewind', choice.goal);
  const plan = await beforeAnyChange(`The rewind to message ${target.id}`, async () => {
    const planned = await planRewind(
      {
        ...planContext(session, choice, directories, measurements),
        onContent: (_tracked, observation) => session.queueBackup(observation, batch),
      },
      target.index,
    );
    choice.goal?.assertPlanned?.();
    for (const { tracked, observation } of planned.observations) {
      if (session.holdsNothingNew(tracked, observation)) continue;
      const entry = await session.noteObservation(tracked, observation, batch);
      if (entry !== undefined) undoFiles.push(entry);
    }
    // What a goal computed is stored with the backups: the session then holds every state it records as written.
    for (const change of planned.changes) {
      const computed = computedBytes(choice.goal, change);
      if (computed !== undefined && !session.isStored(computed.hash) && !batch.has(computed.hash)) await batch.add(computed);
    }
    return planned;
  });
  const rewindId = randomUUID();
  // Before anything can change: a crash from here on is found by whichever session of the project opens next.
  await notePendingRewind(session, rewindId, target.id);
  try {
    await session.append(
      [
        { type: 'checkpoint', id: undoCheckpointId, createdAt: now(), reason: 'pre-rewind', files: undoFiles },
        {
          type: 'rewind-begin',
          rewindId,
          target: target.id,
          undoCheckpointId,
          at: now(),
          plan: plan.changes.map((change) => ({
            path: change.tracked.storedPath,
            action: change.action,
            // A state no checkpoint holds is named, for the end record and for a rollback after a crash.
            ...(computedBytes(choice.goal, change) !== undefined ? { to: change.to } : {}),
          })),
        },
      ],
      batch.take(),
    );
    return withMerges(await applyAndEnd(session, target, plan, measurements, { rewindId, undoCheckpointId }, directories, choice.goal), choice.goal, false);
  } finally {
    // A rewind the log still has open (its rollback failed) keeps its note, for the next open to finish it.
    if (session.state.interruptedRewind === undefined) await clearOwnPendingRewind(session);
  }
}

/** Steps 3 and 4 of `runRewind`: the changes, then the end record, or the rollback. */
async function applyAndEnd(session: Session, target: CheckpointInfo, plan: RewindPlan, measurements: Measurements, ids: { rewindId: string; undoCheckpointId: string }, directories: DirectoryCache, goal: Goal | undefined): Promise<RewindFilesReady> {
  const { rewindId, undoCheckpointId } = ids;
  const outcome = await applyChanges(applyContext(session, directories, measurements, goal), plan.changes, plan.directoriesRemoved);
  noteWritten(outcome);
  if (outcome.failure !== undefined) {
    await rollBack(session, rewindId, outcome, measurements, describeFailure(outcome.failure), directories);
    throw new RewindableError(
      RewindableErrorCode.REWIND_FAILED,
      `The rewind to message ${target.id} failed at ${outcome.failure.path}: ${describeFailure(outcome.failure)}. ` +
        'Every file it had changed was put back as it was before the rewind.',
      { cause: outcome.failure.error, details: { path: outcome.failure.path, undoCheckpointId } },
    );
  }

  const result = summarize(outcome.applied.map((applied) => applied.change), measurements, [...plan.skipped, ...outcome.skipped], false, outcome.directoriesRemoved);
  try {
    await session.append([endRecord(session, rewindId, 'complete', result)]);
  } catch (error) {
    // Not recorded means not committed: the caller gets no result, so the files go back as after any failure.
    const reason = `its end could not be recorded (${describeFailure({ error })})`;
    await rollBack(session, rewindId, outcome, measurements, reason, directories);
    throw new RewindableError(
      RewindableErrorCode.REWIND_FAILED,
      `The rewind to message ${target.id} changed the files, but ${reason}. Every file it had changed was put back as it was before the rewind.`,
      { cause: error, details: { undoCheckpointId } },
    );
  }
  startWorkersAfter(outcome.applied.length);
  return { ...result, undoCheckpointId };
}

export function dryRunRewind(session: Session, target: CheckpointInfo, choice: RewindChoice): Promise<RewindFilesReady> {
  return withDirectories(async (directories) => {
    const measurements = measurementsFor(session, 'dry-run', choice.goal);
    const plan: RewindPlan = await beforeAnyChange(`The rewind to message ${target.id}`, async () =>
      planRewind({ ...planContext(session, choice, directories, measurements), assumed: await afterRollBack(session, directories) }, target.index),
    );
    choice.goal?.assertPlanned?.();
    return withMerges(summarize(plan.changes, measurements, plan.skipped, true, plan.directoriesRemoved), choice.goal, true);
  });
}

/**
 * Finishes a rewind a crash interrupted, by rolling its files back to its
 * pre-rewind checkpoint. Only files that hold what the rewind wrote are put
 * back: one that holds anything else was changed after the crash (by the
 * user, before reopening), and putting it back would discard that change,
 * which no checkpoint holds. Safe to repeat: if this crashes too, the next
 * open does the same again.
 */
export async function recoverInterruptedRewind(session: Session): Promise<RewindFilesReady | undefined> {
  const begin = session.state.interruptedRewind;
  if (begin === undefined) return undefined;
  const undo = session.state.checkpointsById.get(begin.undoCheckpointId);
  if (undo === undefined) return undefined;
  const measurements = measurementsFor(session, 'other');
  return withDirectories(async (directories) => {
    const plan = await beforeAnyChange(`Rolling back an interrupted rewind of session ${session.sessionId}`, () => planRollBack(session, begin, undo, directories, measurements));
    const outcome = await applyChanges(applyContext(session, directories, measurements), plan.changes);
    noteWritten(outcome);
    if (outcome.failure !== undefined) {
      throw new RewindableError(
        RewindableErrorCode.REWIND_FAILED,
        `A rewind of session ${session.sessionId} was interrupted, and rolling it back failed at ${outcome.failure.path}: ` +
          `${describeFailure(outcome.failure)}. Fix the cause and open the session again; the rollback is retried each time.`,
        { cause: outcome.failure.error },
      );
    }
    const result = summarize(outcome.applied.map((applied) => applied.change), measurements, [...plan.skipped, ...outcome.skipped], false);
    await session.append([endRecord(session, begin.rewindId, 'rolled-back', result, 'interrupted by the end of the process; rolled back when the session was reopened')]);
    return result;
  });
}

/** The plan of rolling an interrupted rewind back: only files that still hold what it wrote are put back. */
async function planRollBack(session: Session, begin: RewindBeginRecord, undo: CheckpointInfo, directories: DirectoryCache, measurements: Measurements): Promise<RewindPlan> {
  const only = new Set(begin.plan.map((entry) => entry.path));
  const plan = await planRewind({ ...planContext(session, { skipConflicts: false }, directories, measurements), only }, undo.index);
  const rewoundTo = session.state.checkpointsById.get(begin.target);
  const written = writtenStates(begin);
  const wrote = (change: PlannedChange) => written?.get(change.tracked.storedPath) ?? (rewoundTo === undefined ? undefined : session.state.versionAt(change.tracked, rewoundTo.index).state);
  const changedSince = (change: PlannedChange) => {
    const state = wrote(change);
    return state === undefined || !sameState(change.from, state);
  };
  return {
    ...plan,
    changes: plan.changes.filter((change) => !changedSince(change)),
    skipped: [...plan.skipped, ...plan.changes.filter(changedSince).map((change) => changedAfterInterruptedRewind(change.path))],
  };
}

/**
 * For a dry run or a diff of a session whose last rewind a crash
 * interrupted (a read-only view: opening it for writing rolls that rewind
 * back first): the state each file will hold once it is rolled back, so
 * that the preview is what the real rewind, after the rollback, will do.
 */
export async function afterRollBack(session: Session, shared?: DirectoryCache): Promise<Map<string, FileState> | undefined> {
  const begin = session.state.interruptedRewind;
  const undo = begin === undefined ? undefined : session.state.checkpointsById.get(begin.undoCheckpointId);
  if (begin === undefined || undo === undefined) return undefined;
  const rolledBack = async (directories: DirectoryCache) => {
    const plan = await planRollBack(session, begin, undo, directories, measurementsFor(session, 'other'));
    return new Map(plan.changes.map((change) => [change.path, change.to]));
  };
  return shared !== undefined ? rolledBack(shared) : withDirectories(rolledBack);
}

/** Runs `work` with pinned directories of its own, closed once it has ended. */
async function withDirectories<T>(work: (directories: DirectoryCache) => Promise<T>): Promise<T> {
  const directories = new DirectoryCache();
  try {
    return await work(directories);
  } finally {
    directories.close();
  }
}

async function rollBack(session: Session, rewindId: string, outcome: ApplyOutcome, measurements: Measurements, error: string, directories: DirectoryCache): Promise<void> {
  // The statistics of each inverse are those of its change, reversed; its bytes are read from the store again.
  const inverses = outcome.applied.flatMap(({ change }) => {
    const inverse = inverseOf(change);
    if (inverse !== undefined) measurements.countAsUndoing(inverse, change);
    return inverse ?? [];
  });
  const undo = await applyChanges(applyContext(session, directories, measurements), inverses.reverse());
  noteWritten(undo);
  if (undo.failure !== undefined) {
    // Leave the rewind open: the next open of the session retries the rollback.
    throw new RewindableError(
      RewindableErrorCode.REWIND_FAILED,
      `The rewind failed (${error}) and rolling it back failed too at ${undo.failure.path}: ${describeFailure(undo.failure)}. ` +
        'Close the session and open it again to finish the rollback.',
      { cause: undo.failure.error },
    );
  }
  const result = summarize(undo.applied.map((applied) => applied.change), measurements, undo.skipped, false);
  try {
    await session.append([endRecord(session, rewindId, 'rolled-back', result, error)]);
  } catch {
    // The files are back. The rewind stays open in the log, and the next open of the
    // session closes it, finding nothing left to undo.
  }
}

/**
 * Runs the part of a rewind that only reads (the plan, the pre-rewind
 * backups): a failure there changed no file, and says so in a typed error.
 */
async function beforeAnyChange<T>(what: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    // Typed errors of the store or the session stand; a project file that could not be read fails the rewind.
    if (RewindableError.isInstance(error) && error.code !== RewindableErrorCode.FILE_IO) throw error;
    throw new RewindableError(
      RewindableErrorCode.REWIND_FAILED,
      `${what} failed before changing any file: ${describeFailure({ error })}. Nothing was changed; fix the cause and try again.`,
      { cause: error },
    );
  }
}

/** Paths whose target differs from their latest recorded version: about what a rewind will write, known before its plan (one pass over the tracked paths). */
function restoresLikely(session: Session, target: CheckpointInfo, select: ReadonlySet<string> | undefined): number {
  let count = 0;
  for (const tracked of session.state.paths.values()) {
    if (select !== undefined && !select.has(tracked.storedPath)) continue;
    const wanted = session.state.versionAt(tracked, target.index).state;
    if (wanted.kind === 'file' && !sameState(wanted, session.state.latestVersion(tracked).state)) count += 1;
  }
  return count;
}

function planContext(session: Session, { skipConflicts, select, goal }: RewindChoice, directories: DirectoryCache, measurements: Measurements): PlanContext {
  return {
    state: session.state,
    readBlob: readerOf(session, goal),
    maxFileBytes: session.maxFileBytes,
    skipConflicts,
    directories,
    measurements,
    ...(select !== undefined ? { select } : {}),
    ...(goal !== undefined ? { goal } : {}),
  };
}

/** The bytes of a change's target when a goal computed them (no checkpoint holds them). */
function computedBytes(goal: Goal | undefined, change: PlannedChange): { hash: string; bytes: Buffer } | undefined {
  if (goal === undefined || change.to.kind !== 'file') return undefined;
  const bytes = goal.computed.get(change.to.sha256);
  return bytes === undefined ? undefined : { hash: change.to.sha256, bytes };
}

function applyContext(session: Session, directories: DirectoryCache, measurements: Measurements, goal?: Goal): ApplyContext {
  return {
    readBlob: readerOf(session, goal),
    measurements,
    durable: session.durable,
    maxFileBytes: session.maxFileBytes,
    directories,
    confinement: { root: session.root, ...session.state.confinement },
  };
}

/** What a rewind wrote is now the newest known content of each file. */
function noteWritten(outcome: ApplyOutcome): void {
  for (const { change, observed } of outcome.applied) {
    change.tracked.lastSeen = change.to.kind === 'file' && observed !== undefined ? { state: change.to, observed } : undefined;
  }
}

function endRecord(session: Session, rewindId: string, status: RewindEndRecord['status'], result: RewindFilesReady, error?: string): RewindEndRecord {
  return {
    type: 'rewind-end',
    rewindId,
    status,
    at: now(),
    filesChanged: (result.filesChanged ?? []).map((file) => session.storedPath(file)),
    insertions: result.insertions ?? 0,
    deletions: result.deletions ?? 0,
    skipped: (result.skipped ?? []).map((entry) => ({ path: session.storedPath(entry.path), reason: entry.reason })),
    ...(error !== undefined ? { error } : {}),
  };
}

/** The failure's message, without a final period: it is quoted inside a sentence. */
function describeFailure(failure: { error: unknown }): string {
  return (failure.error instanceof Error ? failure.error.message : String(failure.error)).replace(/\.$/, '');
}
