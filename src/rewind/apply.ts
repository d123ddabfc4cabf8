import fs from 'node:fs';
import path from 'node:path';
import { writeFileAtomically } from '../fs/atomic-write.js';
import type { DirectoryCache } from '../fs/directory-cache.js';
import { flushDirectory } from '../fs/flush.js';
import { checkEntry, type EntryRefusal, type ExpectedEntry } from '../fs/entry.js';
import { noFollow, pinCreatingParents, type PinnedDirectory } from '../fs/pinned-directory.js';
import { errorOf, ReplaceMany, type ReplaceJob } from '../fs/replace-many.js';
import { observe, trustedSignature, wallClockNs } from '../fs/stat-signature.js';
import type { Observation } from '../schemas.js';
import type { PathScope } from '../paths.js';
import { sameState } from '../session/session-state.js';
import { type BlobRead } from '../store/session-log.js';
import type { PlannedChange } from './change.js';
import { removeEmptyDirectories } from './created-directories.js';
import type { Measurements } from './measure.js';
import { changedSincePlanned, outsideRoots, unreadableBackup, type SkippedPath } from './safety.js';

/**
 * Applying a plan. Each file is replaced atomically (or removed), and only
 * after checking, through its pinned parent directory, that it is still what
 * the plan saw: a file changed in between is left alone, and a link or moved
 * directory that appeared in between is never written through. Restores run
 * before deletions; if any change fails, the rest are not started and the
 * caller rolls back what was done. A change not yet measured is measured
 * just before its write (see measure.ts for where its bytes come from).
 */

const noBytes = new Uint8Array(0);

export interface ApplyContext {
  readBlob(hash: string): Promise<BlobRead>;
  /** The statistics of the changes: those the plan left to be counted are counted here. */
  measurements: Measurements;
  durable: boolean;
  maxFileBytes: number;
  /** Pinned directories shared with the plan; every write re-checks its directory is still in place. */
  directories: DirectoryCache;
  /** Where writes may go (`isConfined`): checked again here, whatever the plan says. */
  confinement: Pick<PathScope, 'root' | 'extraRoots' | 'storeDirectory'>;
}

export interface AppliedChange {
  change: PlannedChange;
  /** Stat signature of the file as written (absent for deletions). */
  observed?: Observation;
}

export interface ApplyOutcome {
  applied: AppliedChange[];
  skipped: SkippedPath[];
  /** Directories the session created that were removed once empty (see created-directories.ts). */
  directoriesRemoved: string[];
  failure?: { path: string; error: unknown };
}

/** What one change came to: a job for `ReplaceMany`, a change made here, or a path left alone. */
type Step =
  | { kind: 'job'; job: ReplaceJob }
  | { kind: 'applied'; applied: AppliedChange }
  | { kind: 'skipped'; skipped: SkippedPath };
type Skipped = Extract<Step, { kind: 'skipped' }>;
type TargetBytes = { kind: 'bytes'; target: Buffer | undefined; countInJob: boolean };

/**
 * Applies `changes`; then, when all were made, removes the directories of
 * `emptyDirectories` (the plan's `directoriesRemoved`) that the deletions
 * left empty.
 */
export async function applyChanges(context: ApplyContext, changes: readonly PlannedChange[], emptyDirectories: readonly string[] = []): Promise<ApplyOutcome> {
  const outcome: ApplyOutcome = { applied: [], skipped: [], directoriesRemoved: [] };
  const confined = changes.filter((change) => {
    const refused = outsideRoots(change.path, context.confinement);
    if (refused !== undefined) outcome.skipped.push(refused);
    return refused === undefined;
  });
  const touchedDirectories = new Set<string>();
  const applied = (result: AppliedChange) => {
    outcome.applied.push(result);
    touchedDirectories.add(path.dirname(result.change.path));
  };
  // Deletions last: if a restore fails, nothing has been deleted yet.
  await applySideBySide(context, outcome, applied, confined.filter((change) => change.action !== 'delete'), 'writes');
  if (outcome.failure === undefined) await applySideBySide(context, outcome, applied, confined.filter((change) => change.action === 'delete'), 'removals');
  if (context.durable) {
    for (const directory of touchedDirectories) {
      try {
        const pinned = context.directories.open(directory);
        if (typeof pinned === 'string') await flushDirectory(directory);
        else await pinned.flush();
      } catch (error) {
        outcome.failure ??= { path: directory, error };
      }
    }
  }
  // After the deletions are durable: a directory is never gone while a file the rewind removed from it may come back.
  if (outcome.failure === undefined && emptyDirectories.length > 0) {
    try {
      outcome.directoriesRemoved = await removeEmptyDirectories(context.directories, emptyDirectories, context.durable);
    } catch (error) {
      outcome.failure = { path: path.dirname(emptyDirectories[0]!), error };
    }
  }
  return outcome;
}

/**
 * Applies `changes` side by side (replace-many.ts), each still checked and
 * made on its own; what `ReplaceMany` does not handle is applied here. Stops
 * at the first failure, which `outcome` records.
 */
async function applySideBySide(context: ApplyContext, outcome: ApplyOutcome, applied: (result: AppliedChange) => void, changes: readonly PlannedChange[], kind: 'writes' | 'removals'): Promise<void> {
  const sent: PlannedChange[] = [];
  const jobs = new ReplaceMany(changes.length, kind, (index, result) => {
    // The statistics of a job asked to count them (`countLines`), counted where it read the file.
    if ((result.status === 'written' || result.status === 'removed') && result.stats !== undefined) context.measurements.counted(sent[index]!, result.stats);
  });
  for (const change of changes) {
    if (jobs.stopped) break;
    try {
      const step = await prepareChange(context, change);
      if (step.kind === 'job') {
        sent.push(change);
        await jobs.add(step.job);
      } else if (step.kind === 'skipped') outcome.skipped.push(step.skipped);
      else applied(step.applied);
    } catch (error) {
      outcome.failure = { path: change.path, error };
      break;
    }
  }
  for (const [index, result] of (await jobs.finish()).entries()) {
    const change = sent[index]!;
    if (result.status === 'written') applied({ change, observed: result.signature === undefined ? undefined : { sig: result.signature, atNs: result.atNs } });
    else if (result.status === 'removed') applied({ change });
    else if (result.status === 'refused') outcome.skipped.push(changedSincePlanned(change.path, result.reason));
    else if (result.status === 'failed') outcome.failure ??= { path: change.path, error: errorOf(result) };
  }
}

/**
 * Makes `change` here, or hands it to `ReplaceMany` (which checks the file
 * and makes the change) when it is a file write or removal in a directory
 * pinned by handle. A mode change, or a link to remove, is always made here.
 */
async function prepareChange(context: ApplyContext, change: PlannedChange): Promise<Step> {
  const forJob = change.action !== 'chmod' && change.from.kind !== 'symlink';
  const bytes = await bytesFor(context, change, forJob);
  if (bytes.kind === 'skipped') return bytes;
  const directory = pinnedParent(context, change);
  if (directory.kind === 'skipped') return directory;
  const handle = forJob ? directory.pinned.handlePath() : undefined;
  if (handle === undefined || change.from.kind === 'symlink') return applyIn(context, change, bytes.target, directory.pinned);
  const job: ReplaceJob = {
    directoryHandle: handle,
    directoryPath: directory.pinned.path,
    name: path.basename(change.path),
    expected: expectedBy(change),
    ...(change.to.kind === 'file' ? { bytes: bytes.target!, mode: change.to.mode } : { bytes: noBytes, mode: 0, remove: true }),
    durable: context.durable,
    maxBytes: context.maxFileBytes,
    ...(bytes.countInJob ? { countLines: true } : {}),
  };
  return { kind: 'job', job };
}

/** Applies `change` here, given its target's bytes (none for a deletion or a chmod) and its pinned directory. */
async function applyIn(context: ApplyContext, change: PlannedChange, bytes: Buffer | undefined, directory: PinnedDirectory): Promise<Step> {
  const name = path.basename(change.path);
  const found = checkEntry(directory, name, expectedBy(change), { maxBytes: context.maxFileBytes });
  if (typeof found === 'string') return refused(change, found);
  const writtenAtNs = wallClockNs();
  if (change.action === 'delete') {
    // Removes a name, not a file's content: a hard link of an outside file renamed here since the check
    // loses this name and nothing else.
    fs.unlinkSync(directory.entry(name));
    return { kind: 'applied', applied: { change } };
  }
  const mode = change.to.kind === 'file' ? change.to.mode : 0;
  if (change.action === 'chmod') {
    const changed = changeMode(directory.entry(name), mode, found.stat!);
    if (changed !== true) return refused(change, changed);
  } else {
    await writeFileAtomically(directory, name, bytes!, mode, context.durable);
  }
  return { kind: 'applied', applied: { change, observed: signatureOfWritten(directory.entry(name), writtenAtNs) } };
}

/**
 * The target's bytes to write (none for a deletion or a mode change), the
 * change measured first if it is not yet: from the current bytes the plan
 * kept, or from the file read now, or, when `jobMayCount` and the write goes
 * to a `ReplaceMany` job, by that job, which reads the file for its check
 * (`countInJob`).
 */
async function bytesFor(context: ApplyContext, change: PlannedChange, jobMayCount: boolean): Promise<TargetBytes | Skipped> {
  const pending = context.measurements.pending(change);
  let countInJob = false;
  if (pending.kind !== 'counted') {
    let current = pending.kind === 'kept' ? pending.current : undefined;
    if (pending.kind === 'on-disk') {
      // The write that follows checks the directory again, right before it is made.
      const directory = pinnedParent(context, change);
      if (directory.kind === 'skipped') return directory;
      countInJob = jobMayCount && directory.pinned.handlePath() !== undefined;
      const found = countInJob ? {} : checkEntry(directory.pinned, path.basename(change.path), expectedBy(change), { maxBytes: context.maxFileBytes, read: true });
      if (typeof found === 'string') return refused(change, found);
      current = found.content;
    }
    if (!countInJob) {
      const measured = await context.measurements.measure(change, current);
      return measured.kind === 'refused' ? { kind: 'skipped', skipped: measured.skipped } : { kind: 'bytes', target: measured.target, countInJob };
    }
  }
  if (change.to.kind !== 'file' || change.action === 'chmod') return { kind: 'bytes', target: undefined, countInJob };
  const read = await context.readBlob(change.to.sha256);
  return read.ok ? { kind: 'bytes', target: read.bytes, countInJob } : { kind: 'skipped', skipped: unreadableBackup(change.path, read.reason) };
}

/**
 * The change's directory, pinned (created first for a file to recreate), or
 * why the path is left alone. Whether it is still at its path is checked
 * right before each write, by `checkEntry` here or in the `ReplaceMany` job.
 */
function pinnedParent(context: ApplyContext, change: PlannedChange): { kind: 'pinned'; pinned: PinnedDirectory } | Skipped {
  const parent = path.dirname(change.path);
  let directory = context.directories.open(parent);
  if (directory === 'missing' && change.action === 'recreate') {
    // Create the missing directories, each inside the pinned level above; later files find them pinned.
    context.directories.forget(parent);
    const created = pinCreatingParents(change.path);
    if (typeof created === 'object') created.close();
    directory = context.directories.open(parent);
  }
  if (typeof directory === 'string') return refused(change, 'parent-changed', directory === 'missing' ? 'its directory is gone' : undefined);
  return { kind: 'pinned', pinned: directory };
}

function refused(change: PlannedChange, found: EntryRefusal, detail?: string): Skipped {
  return { kind: 'skipped', skipped: changedSincePlanned(change.path, found, detail) };
}

/**
 * The stat signature of a file just written, which lets the next check skip
 * reading it. Only a shortcut: the write is done, so a failed lstat must not
 * turn it into a failure the rollback would not know to undo.
 */
function signatureOfWritten(entry: string, writtenAtNs: bigint): Observation | undefined {
  try {
    return observe(fs.lstatSync(entry, { bigint: true }), writtenAtNs);
  } catch {
    return undefined;
  }
}

/** O_PATH has this value on every Linux architecture Node runs on. */
const pathOnly = process.platform === 'linux' && fs.existsSync('/proc/self/fd') ? 0o10000000 : undefined;

/**
 * chmod without following a link, of the very file the check saw (`seen`):
 * through a handle opened with no-follow, whose file must still be that one
 * (same device and inode) and have no other name. The open goes by name, so
 * a hard link of an outside file renamed over the entry after the check would
 * otherwise be what it opens. Returns why not when it is not that file. On
 * Linux the handle is an O_PATH one (no read access needed, whatever the
 * file's mode), changed through its /proc name since fchmod refuses such
 * handles. Elsewhere it is opened for reading, and a file whose mode forbids
 * that is chmodded by name right after a fresh check, the one place a link
 * swapped in between could be followed.
 */
function changeMode(entry: string, mode: number, seen: fs.BigIntStats): true | EntryRefusal {
  let fd: number;
  try {
    fd = fs.openSync(entry, (pathOnly ?? fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0)) | noFollow);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') return 'symlink';
    if (code === 'ENOENT') return 'changed-during-rewind';
    if (code !== 'EACCES' || pathOnly !== undefined) throw error;
    const found = sameFileAs(fs.lstatSync(entry, { bigint: true }), seen);
    if (found === true) fs.chmodSync(entry, mode);
    return found;
  }
  try {
    // With O_PATH and no-follow a link is opened itself, and found here not to be a regular file.
    const opened = sameFileAs(fs.fstatSync(fd, { bigint: true }), seen);
    if (opened !== true) return opened;
    if (pathOnly !== undefined) fs.chmodSync(`/proc/self/fd/${fd}`, mode);
    else fs.fchmodSync(fd, mode);
    return true;
  } finally {
    closeQuietly(fd);
  }
}

/** True when `found` (an opened handle's stat) is the regular file `seen`, with no other name; otherwise why not. */
function sameFileAs(found: fs.BigIntStats, seen: fs.BigIntStats): true | EntryRefusal {
  if (found.isSymbolicLink()) return 'symlink';
  if (!found.isFile()) return 'not-regular';
  if (found.dev !== seen.dev || found.ino !== seen.ino) return 'changed-during-rewind';
  return found.nlink === 1n ? true : 'hard-link';
}

/** Closes a read-only handle; its close failing cannot lose data, and must not turn a done change into a failed one. */
function closeQuietly(fd: number): void {
  try {
    fs.closeSync(fd);
  } catch {
    // Nothing to lose.
  }
}

/** What the entry must still be for `change` to go ahead: what the plan saw, vouched for by its stat signature when the racy rule allows. */
function expectedBy(change: PlannedChange): ExpectedEntry {
  if (change.from.kind !== 'file') return { kind: change.from.kind };
  const lastSeen = change.tracked.lastSeen;
  const vouched = lastSeen !== undefined && sameState(lastSeen.state, change.from);
  return { kind: 'file', sha256: change.from.sha256, mode: change.from.mode, trustedSignature: vouched ? trustedSignature(lastSeen.observed) : undefined };
}
