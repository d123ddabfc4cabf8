import path from 'node:path';
import type { CheckpointManager } from '../../../src/index.js';

/**
 * What the public API says about the tool calls since a checkpoint, with
 * paths relative to the project: each file's `toolCallIds` in a dry run and
 * in a diff, and the tool calls the transcript lists for that checkpoint's
 * user message (each with the files it wrote), by call id: frameworks run
 * parallel calls side by side, so the order they first wrote in varies.
 */
export async function toolCallsSince(manager: CheckpointManager, checkpointId: string) {
  const relative = (file: string) => path.relative(manager.root, file).split(path.sep).join('/');
  const preview = await manager.rewindFiles(checkpointId, { dryRun: true });
  const diffs = await manager.diffFiles(checkpointId);
  const entry = (await manager.getTranscript()).find((message) => message.uuid === checkpointId);
  return {
    rewind: Object.fromEntries((preview.files ?? []).map((file) => [relative(file.path), file.toolCallIds])),
    diff: Object.fromEntries(diffs.flatMap((diff) => (diff.action === 'skip' ? [] : [[relative(diff.path), diff.toolCallIds]]))),
    turn: (entry?.toolCalls ?? [])
      .map((call) => ({ toolCallId: call.toolCallId, tool: call.tool, files: call.files.map(relative) }))
      .sort((a, b) => a.toolCallId.localeCompare(b.toolCallId)),
  };
}
