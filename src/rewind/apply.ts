import fs from 'node:fs';
import path from 'node:path';
import { pinParentDirectory, writeFileAtomically } from '../fs/atomic-write.js';
import type { DirectoryCache } from '../fs/directory-cache.js';
import { flushDirectory } from '../fs/flush.js';
import { inspectEntry } from '../fs/inspect-path.js';
import { noFollow, type PinnedDirectory } from '../fs/pinned-directory.js';
import { errorOf, ReplaceMany, type ExpectedEntry, type Refusal, type ReplaceJob } from '../fs/replace-many.js';
import { isUnchangedSince, observe, trustedSignature, wallClockNs } from '../fs/stat-signature.js';
import type { Observation, RewindAction } from '../schemas.js';
import { isConfined, type PathScope } from '../paths.js';
import { sameState } from '../session/session-state.js';
import { type BlobRead } from '../store/session-log.js';
import { sha256 } from '../hash.js';
import { removeEmptyDirectories } from './created-directories.js';
import type { LineStatsCache } from './stats-cache.js';
import { countChange, leftAlone, measureChange, recallStats, refuseStoredPath, type PlannedChange, type SkippedPath, type TargetState } from './plan.js';

/**
 * Applying a plan. Each file is replaced atomically (or removed), and only
 * after checking, through its pinned parent directory, that it is still what
 * the plan saw: a file changed in between is left alone, and a link or moved
 * directory that appeared in between is never written through. Restores run
 * before deletions; if any change fails, the rest are not started and the
 * caller rolls back what was done.
 */

const noBytes = new Uint8Array(0);

export interface ApplyContext {
  readBlob(hash: string): Promise<BlobRead>;
  /** Counts a dry run of the session kept (see `recallStats`). */
  keptCounts?: LineStatsCache;
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

/**
 * Applies `changes`; then, when all were made, removes the directories of
 * `emptyDirectories` (the plan's `directoriesRemoved`) that the deletions
 * left empty.
 */
export async function applyChanges(context: ApplyContext, changes: readonly PlannedChange[], emptyDirectories: readonly string[] = []): Promise<ApplyOutcome> {
  const outcome: ApplyOutcome = { applied: [], skipped: [], directoriesRemoved: [] };
  // Plans only hold tracked paths, which were confined when loaded; a write outside the roots is refused all the same.
  const outside = changes.filter((change) => !isConfined(change.path, context.confinement));
  if (outside.length > 0) {
    outcome.skipped.push(...outside.map((change) => refuseStoredPath(change.path, 'outside-project')));
    changes = changes.filter((change) => !outside.includes(change));
  }
  const touchedDirectories = new Set<string>();
  const applied = (result: AppliedChange) => {
    outcome.applied.push(result);
    touchedDirectories.add(path.dirname(result.change.path));
  };
  // Deletions last: if a restore fails, nothing has been deleted yet.
  await applySideBySide(context, outcome, applied, changes.filter((change) => change.action !== 'delete'), 'writes');
  if (outcome.failure === undefined) await applySideBySide(context, outcome, applied, changes.filter((change) => change.action === 'delete'), 'removals');
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
async function applySideBySide(
  context: ApplyContext,
  outcome: ApplyOutcome,
  applied: (result: AppliedChange) => void,
  changes: readonly PlannedChange[],
  kind: 'writes' | 'removals',
): Promise<void> {
  const sent: PlannedChange[] = [];
  /** Changes counted once their job sends back the bytes it replaced (by index in `sent`), with their target's bytes. */
  const countAfter = new Map<number, Buffer | undefined>();
  const jobs = new ReplaceMany(changes.length, kind, (index, result) => {
    if (!countAfter.has(index)) return;
    const target = countAfter.get(index);
    countAfter.delete(index);
    if (result.status === 'written' || result.status === 'removed') countChange(sent[index]!, result.previous, target);
  });
  for (const change of changes) {
    if (jobs.stopped) break;
    try {
      const prepared = await prepareChange(context, change);
      if ('job' in prepared) {
        if (prepared.job.returnPrevious === true) countAfter.set(sent.length, prepared.countWith);
        sent.push(change);
        await jobs.add(prepared.job);
      } else if ('skipped' in prepared) outcome.skipped.push(prepared.skipped);
      else applied(prepared);
    } catch (error) {
      outcome.failure = { path: change.path, error };
      break;
    }
  }
  for (const [index, result] of (await jobs.finish()).entries()) {
    const change = sent[index]!;
    if (result.status === 'written') applied({ change, observed: result.signature === undefined ? undefined : { sig: result.signature, atNs: result.atNs } });
    else if (result.status === 'removed') applied({ change });
    else if (result.status === 'refused') outcome.skipped.push(refusal(change, result.reason).skipped);
    else if (result.status === 'failed') outcome.failure ??= { path: change.path, error: errorOf(result) };
  }
}

/**
 * The change that undoes `change` (used to roll back), or undefined when it
 * cannot be undone: a link that was removed is never recreated.
 */
export function inverseOf(change: PlannedChange): PlannedChange | undefined {
  if (change.current.kind === 'symlink') return undefined;
  const inverse: Record<RewindAction, RewindAction> = { restore: 'restore', chmod: 'chmod', recreate: 'delete', delete: 'recreate' };
  // Its statistics are those of the change, reversed; its bytes are read from the store again (the ones the
  // plan kept belong to the forward change).
  return {
    ...change,
    action: inverse[change.action],
    target: change.current,
    current: change.target,
    insertions: change.deletions,
    deletions: change.insertions,
    measured: true,
    currentBytes: undefined,
    targetBytes: undefined,
  };
}

/**
 * A file write or removal to hand to `ReplaceMany` (which checks the file and
 * makes the change), or, for what it does not handle (a mode change, a link
 * to remove), the change applied here.
 */
async function prepareChange(context: ApplyContext, change: PlannedChange): Promise<{ job: ReplaceJob; countWith?: Buffer | undefined } | AppliedChange | { skipped: SkippedPath }> {
  const removal = change.action === 'delete';
  if ((!removal && change.target.kind !== 'file') || change.action === 'chmod' || change.current.kind === 'symlink') return applyChange(context, change);
  // Current bytes the plan did not read (the store holds them) are needed for the statistics only. The job
  // reads them anyway to check the file when its signature is too fresh to vouch for it, so it sends them
  // back and the change is counted then, instead of this thread reading the file first.
  let countInJob = false;
  if (change.currentBytes === 'on-disk' && !change.measured && !recallStats(context.keptCounts, change)) {
    const directory = pinnedParent(context, change, 'unless-job-checks');
    if ('skipped' in directory) return directory;
    countInJob = directory.handlePath() !== undefined;
  }
  // A removal has no bytes to write, but its statistics are counted all the same.
  const bytes = await targetBytesOf(context, change, countInJob);
  if (typeof bytes === 'object' && 'skipped' in bytes) return bytes;
  const directory = pinnedParent(context, change, 'unless-job-checks');
  if (typeof directory === 'object' && 'skipped' in directory) return directory;
  const handle = directory.handlePath();
  if (handle === undefined) return applyIn(context, change, bytes, directory);
  const lastSeen = change.tracked.lastSeen;
  const expected: ExpectedEntry =
    change.current.kind === 'absent'
      ? { kind: 'absent' }
      : {
          kind: 'file',
          sha256: change.current.sha256,
          mode: change.current.mode,
          trustedSignature: lastSeen !== undefined && sameState(lastSeen.state, change.current) ? trustedSignature(lastSeen.observed) : undefined,
        };
  return {
    job: {
      directoryHandle: handle,
      directoryPath: directory.path,
      name: path.basename(change.path),
      expected,
      ...(change.target.kind === 'file' ? { bytes: bytes!, mode: change.target.mode } : { bytes: noBytes, mode: 0, remove: true }),
      durable: context.durable,
      maxBytes: context.maxFileBytes,
      ...(countInJob ? { returnPrevious: true } : {}),
    },
    ...(countInJob ? { countWith: bytes } : {}),
  };
}

async function applyChange(context: ApplyContext, change: PlannedChange): Promise<AppliedChange | { skipped: SkippedPath }> {
  const bytes = await targetBytesOf(context, change);
  if (typeof bytes === 'object' && 'skipped' in bytes) return bytes;
  const directory = pinnedParent(context, change);
  if (typeof directory === 'object' && 'skipped' in directory) return directory;
  return applyIn(context, change, bytes, directory);
}

/** Applies `change` here, given its target bytes (none for a deletion or a chmod) and its pinned directory. */
async function applyIn(context: ApplyContext, change: PlannedChange, bytes: Buffer | undefined, directory: PinnedDirectory): Promise<AppliedChange | { skipped: SkippedPath }> {
  const name = path.basename(change.path);
  const found = inspectAsPlanned(context, directory, name, change, false);
  if (typeof found === 'string') return refusal(change, found);
  const writtenAtNs = wallClockNs();
  if (change.action === 'delete') {
    // Removes a name, not a file's content: a hard link of an outside file renamed here since the check
    // loses this name and nothing else.
    fs.unlinkSync(directory.entry(name));
    return { change };
  }
  if (change.action === 'chmod') {
    const changed = changeMode(directory.entry(name), (change.target as Extract<TargetState, { kind: 'file' }>).mode, found.stat!);
    if (changed !== true) return refusal(change, changed);
  } else {
    await writeFileAtomically(directory, name, bytes!, (change.target as Extract<TargetState, { kind: 'file' }>).mode, context.durable);
  }
  return { change, observed: signatureOfWritten(directory.entry(name), writtenAtNs) };
}

/**
 * The bytes to write (undefined when nothing is written), or why the path is
 * left alone. A change the plan left unmeasured is measured first; either way
 * the change lets go of the bytes, which a large rewind cannot hold for all.
 */
async function targetBytesOf(context: ApplyContext, change: PlannedChange, countInJob = false): Promise<Buffer | undefined | { skipped: SkippedPath }> {
  if (countInJob) change.currentBytes = undefined;
  else if (!change.measured && !recallStats(context.keptCounts, change)) {
    const current = change.currentBytes === 'on-disk' ? currentBytesOnDisk(context, change) : change.currentBytes;
    if (typeof current === 'object' && 'skipped' in current) return current;
    const skipped = await measureChange({ readBlob: context.readBlob }, change, current, true);
    if (skipped !== undefined) return { skipped };
  }
  const kept = change.targetBytes;
  change.targetBytes = undefined;
  if (change.target.kind !== 'file' || change.action === 'chmod' || kept !== undefined) return kept;
  const read = await context.readBlob(change.target.sha256);
  return read.ok ? read.bytes : skip(change, 'backup-unreadable', read.reason);
}

/**
 * The current bytes of a file the plan did not read (the store holds them),
 * for the statistics, read now and checked to be what the plan saw.
 */
function currentBytesOnDisk(context: ApplyContext, change: PlannedChange): Buffer | { skipped: SkippedPath } {
  change.currentBytes = undefined;
  // The write that follows checks the directory again, right before it is made.
  const directory = pinnedParent(context, change, 'unless-job-checks');
  if ('skipped' in directory) return directory;
  const found = inspectAsPlanned(context, directory, path.basename(change.path), change, true);
  if (typeof found === 'string') return refusal(change, found);
  return found.content!;
}

/**
 * The change's directory, pinned (created first for a file to recreate), or
 * why the path is left alone. It is checked to be still at its path, except
 * (`unless-job-checks`) when it has a handle path: then the write goes to a
 * `ReplaceMany` job, which checks that itself right before writing.
 */
function pinnedParent(context: ApplyContext, change: PlannedChange, check: 'always' | 'unless-job-checks' = 'always'): PinnedDirectory | { skipped: SkippedPath } {
  const parent = path.dirname(change.path);
  let directory = context.directories.open(parent);
  if (directory === 'missing' && change.action === 'recreate') {
    // Create the missing directories, each inside the pinned level above; later files find them pinned.
    context.directories.forget(parent);
    const created = pinParentDirectory(change.path, true);
    if (typeof created === 'object') created.close();
    directory = context.directories.open(parent);
  }
  if (typeof directory === 'string') return refusal(change, 'parent-changed', directory === 'missing' ? 'its directory is gone' : undefined);
  const jobChecks = check === 'unless-job-checks' && directory.handlePath() !== undefined;
  return jobChecks || directory.isStillAtPath() ? directory : refusal(change, 'parent-changed');
}

function skip(change: PlannedChange, reason: SkippedPath['reason'], detail: string): { skipped: SkippedPath } {
  return { skipped: leftAlone(change.path, reason, detail) };
}

/** A path found, just before its write, not to be what the plan saw. */
function refusal(change: PlannedChange, found: Refusal, detail?: string): { skipped: SkippedPath } {
  switch (found) {
    case 'changed':
    case 'changed-during-rewind':
      return skip(change, 'changed-during-rewind', 'it changed while the rewind was running');
    case 'parent-changed':
      return skip(change, 'parent-changed', detail ?? 'its parent directory changed since the plan was made');
    case 'symlink':
      return skip(change, 'symlink', 'it became a symbolic link while the rewind was running; links are never written through');
    case 'hard-link':
      return skip(change, 'hard-link', 'it gained a hard link while the rewind was running');
    case 'not-regular':
      return skip(change, 'not-regular', 'it stopped being a regular file while the rewind was running');
  }
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

/**
 * chmod without following a link, of the very file the check saw (`seen`):
 * through a handle opened with no-follow, whose file must still be that one
 * (same device and inode) and have no other name. The open goes by name, so
 * a hard link of an outside file renamed over the entry after the check would
 * otherwise be what it opens. Returns why not when it is not that file. A
 * file whose mode forbids opening it for reading is opened with O_PATH on
 * Linux (no read access needed, and still no-follow); elsewhere it is
 * chmodded by name right after a fresh check, the one place a link swapped in
 * between could be followed.
 */
function changeMode(entry: string, mode: number, seen: fs.BigIntStats): true | Refusal {
  let fd: number;
  try {
    fd = fs.openSync(entry, fs.constants.O_RDONLY | noFollow | (fs.constants.O_NONBLOCK ?? 0));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') return 'symlink';
    if (code === 'ENOENT') return 'changed';
    if (code !== 'EACCES') throw error;
    return changeModeWithoutReading(entry, mode, seen);
  }
  try {
    const opened = sameFileAs(fs.fstatSync(fd, { bigint: true }), seen);
    if (opened !== true) return opened;
    fs.fchmodSync(fd, mode);
    return true;
  } finally {
    closeQuietly(fd);
  }
}

/** O_PATH has this value on every Linux architecture Node runs on. */
const pathOnly = process.platform === 'linux' && fs.existsSync('/proc/self/fd') ? 0o10000000 : undefined;

function changeModeWithoutReading(entry: string, mode: number, seen: fs.BigIntStats): true | Refusal {
  if (pathOnly === undefined) {
    const found = sameFileAs(fs.lstatSync(entry, { bigint: true }), seen);
    if (found !== true) return found;
    fs.chmodSync(entry, mode);
    return true;
  }
  let fd: number;
  try {
    fd = fs.openSync(entry, pathOnly | noFollow);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'changed';
    throw error;
  }
  try {
    // With O_PATH and no-follow a link is opened itself, and found here not to be a regular file.
    const opened = sameFileAs(fs.fstatSync(fd, { bigint: true }), seen);
    if (opened !== true) return opened;
    // fchmod refuses O_PATH handles; the /proc name of the handle reaches the very file it holds.
    fs.chmodSync(`/proc/self/fd/${fd}`, mode);
    return true;
  } finally {
    closeQuietly(fd);
  }
}

/** True when `found` (an opened handle's stat) is the regular file `seen`, with no other name; otherwise why not. */
function sameFileAs(found: fs.BigIntStats, seen: fs.BigIntStats): true | Refusal {
  if (found.isSymbolicLink()) return 'symlink';
  if (!found.isFile()) return 'not-regular';
  if (found.dev !== seen.dev || found.ino !== seen.ino) return 'changed';
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

/**
 * Whether the entry is still what the plan saw: read and hashed unless its
 * stat signature vouches for it. With `wantContent` a file is read either
 * way, and its bytes come back (`content`). A file comes back with the stat
 * it was checked by (`stat`), which names the file that passed the check.
 */
function inspectAsPlanned(context: ApplyContext, directory: PinnedDirectory, name: string, change: PlannedChange, wantContent: boolean): { content?: Buffer; stat?: fs.BigIntStats } | Refusal {
  const lastSeen = change.tracked.lastSeen;
  const vouched = (stat: fs.BigIntStats) => change.current.kind === 'file' && isUnchangedSince(lastSeen?.observed, stat) && sameState(lastSeen!.state, change.current);
  const inspection = inspectEntry(directory, name, { maxBytes: context.maxFileBytes, read: (stat) => wantContent || !vouched(stat) });
  switch (inspection.kind) {
    case 'symlink':
      return change.current.kind === 'symlink' ? {} : 'symlink';
    case 'not-regular':
      return 'not-regular';
    case 'absent':
      return change.current.kind === 'absent' ? {} : 'changed';
    case 'too-large':
    case 'unsafe-parent':
      return 'changed';
    case 'file': {
      if (inspection.stat.nlink > 1n) return 'hard-link';
      if (change.current.kind !== 'file') return 'changed';
      const { content, stat } = inspection;
      if (content === undefined || vouched(stat)) return { content, stat };
      const mode = Number(stat.mode & 0o7777n);
      return sha256(content) === change.current.sha256 && mode === change.current.mode ? { content, stat } : 'changed';
    }
  }
}
