import { fileIoError, RewindableError, RewindableErrorCode } from '../errors.js';
import { inspectPath } from '../fs/inspect-path.js';
import type { FileState, LogRecord, TrackRecord } from '../schemas.js';
import { sha256 } from '../hash.js';
import { now } from './clock.js';
import type { ObservedPath } from '../fs/inspect-path.js';
import { observePath } from './observe-path.js';
import { writeRecord } from './record-write.js';
import type { Session } from './session.js';

/** A write a tool is about to make (its bytes, and the exact mode it sets), recorded with the backup taken for it. */
export interface IntendedWrite {
  content: Uint8Array;
  mode: number;
  tool?: string | undefined;
  toolCallId?: string | undefined;
}

/**
 * The first backup of a path in the session: its exact bytes and mode (or
 * that it does not exist), attached to the current checkpoint. Nothing to do
 * for a path the session already tracks.
 *
 * With `intended`, a first backup goes out in one append with the record of
 * the write it is taken for, made right after: one log write instead of two
 * on a tool's first edit of a file. Returns whether that write was recorded.
 * Should the write then fail, the record names bytes the file never held,
 * which only ever flags the file as changed by someone else (a conflict)
 * while it holds its backed-up bytes, which no rewind needs to change.
 */
export async function trackFirstBackup(session: Session, absolute: string, asGiven: string, alreadyRead?: ObservedPath, intended?: IntendedWrite): Promise<boolean> {
  const checkpoint = session.state.latestCheckpoint;
  if (checkpoint === undefined) {
    throw new RewindableError(
      RewindableErrorCode.NO_CHECKPOINT,
      `trackEdit(${JSON.stringify(asGiven)}) was called before any checkpoint. Call checkpoint(userMessageId) when the user message arrives, before tools run.`,
    );
  }
  const tracked = session.state.paths.get(absolute);
  if (tracked !== undefined) {
    assertStillWritable(asGiven, absolute, session.state.latestVersion(tracked).state, session.maxFileBytes, alreadyRead === undefined);
    return false;
  }
  // A caller that just read the file through its pinned directory (a built-in tool) hands its reading over.
  const observation = alreadyRead ?? observePath(absolute, undefined, { maxBytes: session.maxFileBytes, read: 'always' });
  if (observation.state.kind === 'file' && observation.state.size > session.maxFileBytes) {
    assertTrackable(asGiven, { kind: 'too-large', size: observation.state.size }, session.maxFileBytes, undefined);
  }
  assertTrackable(asGiven, observation.state, session.maxFileBytes, observation.reason);
  // One blob at most: no batch to collect it in.
  const backup = session.backupOf(observation);
  const record: TrackRecord = {
    type: 'track',
    checkpointId: checkpoint.id,
    path: session.storedPath(absolute),
    state: observation.state,
    ...(observation.observed ? { observed: observation.observed } : {}),
    ...(observation.state.kind === 'absent' && observation.missingParents !== undefined ? { missingParents: observation.missingParents } : {}),
    at: now(),
  };
  const records: LogRecord[] = [record];
  const blobs = backup === undefined ? [] : [backup];
  if (intended !== undefined) {
    const written: FileState = { kind: 'file', sha256: sha256(intended.content), size: intended.content.length, mode: intended.mode };
    records.push(writeRecord(record.path, written, intended, undefined, true));
    // What the tool is about to write is kept too, as every recorded write's bytes are (record-write.ts).
    if (!session.isStored(written.sha256) && written.sha256 !== backup?.hash) blobs.push({ hash: written.sha256, bytes: Buffer.from(intended.content.buffer, intended.content.byteOffset, intended.content.byteLength) });
  }
  await session.append(records, blobs);
  return intended !== undefined;
}

/**
 * A tracked path needs no new backup, but a write to it may still be unsafe:
 * when the latest checkpoint holds no bytes of it (it was over the cap, a
 * link, not a regular file, behind a moved directory) and something is there
 * now, a write would lose what it holds for good; and a caller that writes by itself (`trackEdit`,
 * not a built-in tool, which refuses links on its own) must not write through
 * a link or a moved directory that appeared since.
 */
function assertStillWritable(filePath: string, absolute: string, latest: FileState, maxFileBytes: number, checkNow: boolean): void {
  // Gone since (a link the user deleted, say): a write now creates the file and loses nothing.
  if (latest.kind !== 'file' && latest.kind !== 'absent' && !isAbsentNow(absolute)) {
    const what =
      latest.kind === 'too-large'
        ? `was ${latest.size} bytes, over the backup size cap of ${maxFileBytes} bytes,`
        : latest.kind === 'symlink'
          ? 'was a symbolic link'
          : latest.kind === 'not-regular'
            ? `was a ${latest.fileType}`
            : 'was behind a moved directory or a link';
    throw new RewindableError(
      latest.kind === 'too-large' ? RewindableErrorCode.FILE_TOO_LARGE : latest.kind === 'not-regular' ? RewindableErrorCode.NOT_A_REGULAR_FILE : RewindableErrorCode.PATH_IS_LINK,
      `${filePath} ${what} at the latest checkpoint, so that checkpoint holds no backup of it, and a write now would lose its content for good. ` +
        (latest.kind === 'too-large' ? 'Raise maxFileBytes and take a new checkpoint to change it.' : 'Take a new checkpoint once it is a regular file again.'),
      { details: { path: filePath } },
    );
  }
  if (!checkNow) return;
  const now = unreadStateOf(absolute);
  // A file's size is no reason to refuse here: the cap of 0 below made every file with content `too-large`.
  if (now.state.kind !== 'too-large') assertTrackable(filePath, now.state, maxFileBytes, now.reason);
}

function isAbsentNow(absolute: string): boolean {
  return unreadStateOf(absolute).state.kind === 'absent';
}

/** What is at `absolute` now, its bytes left unread: with a size cap of 0, any file with content is `too-large` before it is read. */
function unreadStateOf(absolute: string): ObservedPath {
  try {
    return inspectPath(absolute, { maxBytes: 0 });
  } catch (error) {
    throw fileIoError('check', absolute, error);
  }
}

/** trackEdit refuses what a checkpoint could never restore: links, special files, files over the size cap. */
function assertTrackable(filePath: string, state: FileState, maxFileBytes: number, reason: string | undefined): void {
  switch (state.kind) {
    case 'file':
    case 'absent':
      return;
    case 'symlink':
      throw new RewindableError(
        RewindableErrorCode.PATH_IS_LINK,
        `${filePath} is a symbolic link. rewindable never reads or writes through links; edit the file it points to by its own path.`,
      );
    case 'unsafe-parent':
      throw new RewindableError(RewindableErrorCode.PATH_IS_LINK, `${filePath} cannot be tracked: ${reason ?? 'its parent path changed while it was checked'}.`);
    case 'not-regular':
      throw new RewindableError(RewindableErrorCode.NOT_A_REGULAR_FILE, `${filePath} is a ${state.fileType}, not a regular file; only regular files can be tracked.`);
    case 'too-large':
      throw new RewindableError(
        RewindableErrorCode.FILE_TOO_LARGE,
        `${filePath} is ${state.size} bytes, over the backup size cap of ${maxFileBytes} bytes. Raise maxFileBytes to track it.`,
      );
  }
}
