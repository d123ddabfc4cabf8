import type { CheckpointManager } from '../checkpoint-manager.js';
import { reportWarning, writeNotRecorded, type WriteWarningHandler } from './tool-warnings.js';

/** The call whose writes are recorded. */
export interface RecordedCall {
  /** The tool's name, recorded with each write. */
  tool: string;
  /** The framework's id of this tool call. */
  toolCallId: string | undefined;
}

/**
 * Records what a call that has run wrote to each of its files, with the tool
 * and call id. Never rejects: the files whose record could not be stored
 * are one warning (`onWarning`), since the call's outcome is already what it
 * is, and its files were backed up before it ran.
 */
export async function recordCall(manager: CheckpointManager, call: RecordedCall, files: readonly string[], onWarning: WriteWarningHandler | undefined): Promise<void> {
  const details = { tool: call.tool, ...(call.toolCallId !== undefined ? { toolCallId: call.toolCallId } : {}) };
  const notRecorded: string[] = [];
  let cause: unknown;
  for (const file of files) {
    try {
      await manager.recordWrite(file, details);
    } catch (error) {
      notRecorded.push(file);
      cause ??= error;
    }
  }
  if (notRecorded.length > 0) reportWarning(onWarning, writeNotRecorded(call, notRecorded, cause));
}
