import type { ToolManager } from './manager-port.js';
import { reportWarning, writeNotRecorded, type RecordedCall, type WriteWarningHandler } from './tool-warnings.js';

export type { RecordedCall } from './tool-warnings.js';

/**
 * Records what a call that has run wrote to each of its files, with the tool
 * and call id. Never rejects: the files whose record could not be stored
 * are one warning (`onWarning`), since the call's outcome is already what it
 * is, and its files were backed up before it ran.
 */
export async function recordCall(manager: ToolManager, call: RecordedCall, files: readonly string[], onWarning: WriteWarningHandler | undefined): Promise<void> {
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
