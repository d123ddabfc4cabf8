import { trackedWritePortOf, type ToolManager, type TrackedWritePort } from './manager-port.js';
import { RewindableError, RewindableErrorCode } from '../errors.js';
import { prepareAtomicWrite, type PreparedWrite } from '../fs/atomic-write.js';
import type { TargetFile } from './target-file.js';
import { asToolError, toolFailed } from './tool-errors.js';
import { reportWarning, writeNotRecorded, type WriteWarningHandler } from './tool-warnings.js';

export interface TrackedWrite {
  tool: string;
  target: TargetFile;
  bytes: Uint8Array;
  toolCallId: string | undefined;
  onWarning: WriteWarningHandler | undefined;
}

/**
 * Backs the file up, then replaces it atomically, then records what was
 * written.
 *
 * The backup (`trackEdit`) and the writing of the new content to a temporary
 * file next to the target run at the same time, so a tracked write costs
 * little more than an untracked one; the rename that makes the new content
 * visible waits for the backup, so the file never changes without a durable
 * pre-image. If tracking fails, the temporary file is removed and the target
 * was never touched. A first backup of an existing file carries the record
 * of the write in the same log append; otherwise it is recorded after, and a
 * failure to record it then is a warning (`onWarning`), not the tool's: the
 * file is written and was backed up first.
 *
 * A temporary file left by a process killed in between is swept when the
 * session is next opened, from the directories of its tracked paths. In a
 * directory that holds none yet, the log would name nothing there until the
 * backup is stored, so the temporary file is written after it: only the
 * first write into each such directory pays for the two one after the other.
 */
export async function writeTracked(manager: ToolManager, request: TrackedWrite): Promise<void> {
  const { tool, target, bytes } = request;
  const port = trackedWritePortOf(manager);
  if (bytes.length > manager.maxFileBytes) {
    // A file over the cap cannot be backed up, so no rewind could restore or remove it: never create one.
    throw new RewindableError(
      RewindableErrorCode.FILE_TOO_LARGE,
      `${target.path} was not written: ${tool}'s new content is ${bytes.length} bytes, over the backup size cap of ${manager.maxFileBytes} bytes ` +
        '(maxFileBytes), so no rewind could undo it. Write it in smaller files, or raise maxFileBytes.',
      { details: { tool, path: target.path } },
    );
  }
  const durable = manager.durability === 'full';
  let directory = target.directory;
  let tracking: Promise<boolean>;
  if (directory === undefined) {
    // New directories are only created once the backup is taken, so a refused track leaves none behind.
    await port.trackRead(target.path, target.found);
    directory = createDirectories(tool, target);
    tracking = Promise.resolve(false);
  } else {
    // An existing file keeps its mode, so the write is known in full now: a first backup is recorded with it.
    const intended = target.existing === undefined ? undefined : { content: bytes, mode: target.existing.mode, tool, toolCallId: request.toolCallId };
    tracking = port.trackRead(target.path, target.found, intended);
    tracking.catch(() => {}); // awaited below; this only keeps an early failure from being unhandled meanwhile
    if (!(await port.sweepsOnReopen(directory.path))) await tracking;
  }
  let prepared: PreparedWrite;
  try {
    prepared = await prepareAtomicWrite(directory, target.name, bytes, target.existing?.mode ?? 'umask', durable);
  } catch (error) {
    await tracking.catch(() => {});
    throw asToolError(tool, target.path, error);
  }
  let writeRecorded: boolean;
  try {
    writeRecorded = await tracking;
  } catch (error) {
    prepared.discard();
    throw error;
  }
  let stillThere: boolean;
  try {
    stillThere = directory.isStillAtPath();
  } catch (error) {
    prepared.discard();
    throw asToolError(tool, target.path, error);
  }
  if (!stillThere) {
    prepared.discard();
    throw new RewindableError(
      RewindableErrorCode.PATH_IS_LINK,
      `${target.path} was not written: its parent directory was replaced or moved while ${tool} ran. Nothing was changed.`,
      { details: { tool, path: target.path } },
    );
  }
  try {
    prepared.commit();
  } catch (error) {
    throw asToolError(tool, target.path, error);
  }
  if (durable) {
    try {
      await directory.flush();
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw toolFailed(tool, `${target.path} was written, but its directory could not be flushed to disk (${reason}); the change may not survive a power cut.`, { path: target.path }, error);
    }
  }
  if (!writeRecorded) await recordWritten(port, request);
}

async function recordWritten(port: TrackedWritePort, { tool, target, bytes, toolCallId, onWarning }: TrackedWrite): Promise<void> {
  try {
    await port.recordResolvedWrite(target.path, { tool, content: bytes, ...(toolCallId !== undefined ? { toolCallId } : {}) });
  } catch (error) {
    reportWarning(onWarning, writeNotRecorded({ tool, toolCallId }, [target.path], error));
  }
}

function createDirectories(tool: string, target: TargetFile) {
  try {
    return target.createParentDirectories();
  } catch (error) {
    throw asToolError(tool, target.path, error);
  }
}
