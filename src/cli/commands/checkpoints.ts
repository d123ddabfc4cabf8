import type { Command } from '../command.js';
import { ExitCode } from '../exit-codes.js';
import { displayPath, formatTable, formatTime, plural } from '../format.js';
import { projectOption, withManager } from '../open-manager.js';
import { checkpointsOutputSchema, type CheckpointsOutput } from '../output-schemas.js';

/** Files named in the table before the rest are summed up as "+N more". */
const filesShown = 3;

export const checkpointsCommand: Command = {
  name: 'checkpoints',
  description:
    'Lists the checkpoints of a session, oldest first: one per user message (its id is the message id), ' +
    'plus the undo points taken automatically before each rewind. FILES are the tracked files whose state ' +
    'the checkpoint holds. The session is found in the store by its id; --cwd names its project when sessions of ' +
    'that id are in several projects.',
  positionals: { required: ['SESSION'] },
  options: { cwd: projectOption },
  examples: ['rewindable checkpoints 5d3b8e0c-1a2b-4c3d-8e4f-5a6b7c8d9e0f'],
  async run(invocation) {
    const sessionId = invocation.positionals[0]!;
    const output = await withManager(invocation, sessionId, { readOnly: true, command: 'checkpoints' }, async (manager): Promise<CheckpointsOutput> => ({
      sessionId,
      cwd: manager.root,
      checkpoints: (await manager.listCheckpoints()).map((checkpoint) => ({
        id: checkpoint.id,
        createdAt: checkpoint.createdAt,
        reason: checkpoint.reason,
        files: checkpoint.files,
      })),
    }));
    const { out } = invocation;
    if (invocation.json) {
      out.json(checkpointsOutputSchema, output);
      return ExitCode.success;
    }
    out.line(`${out.style.bold(plural(output.checkpoints.length, 'checkpoint'))} in session ${output.sessionId} of ${output.cwd}`);
    if (output.checkpoints.length === 0) return ExitCode.success;
    out.line();
    out.line(
      formatTable(
        ['#', 'CHECKPOINT', 'TIME', 'KIND', 'FILES'],
        output.checkpoints.map((checkpoint, index) => [
          String(index + 1),
          checkpoint.id,
          formatTime(checkpoint.createdAt),
          checkpoint.reason === 'message' ? 'message' : 'undo point',
          describeFiles(checkpoint.files.map((file) => displayPath(file, output.cwd))),
        ]),
        out.style.bold,
        (row, column, text) => (column === 1 ? out.style.yellow(text) : column === 3 && output.checkpoints[row]!.reason !== 'message' ? out.style.dim(text) : text),
      ),
    );
    return ExitCode.success;
  },
};

function describeFiles(files: string[]): string {
  if (files.length === 0) return '-';
  const shown = files.slice(0, filesShown).join(', ');
  return files.length > filesShown ? `${shown} +${files.length - filesShown} more` : shown;
}
