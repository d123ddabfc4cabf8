import type { Command, Invocation } from '../command.js';
import { ExitCode } from '../exit-codes.js';
import { kindOf } from '../find-session.js';
import { displayPath, firstLine, formatTable, formatTime, plural, shorten } from '../format.js';
import { projectOption, resolveSession, withManager } from '../open-manager.js';
import { checkpointsOutputSchema, type CheckpointsOutput } from '../output-schemas.js';

/** Files named in the table before the rest are summed up as "+N more". */
const filesShown = 3;
/** The prompt column's width when the output is no terminal, whose width would say. */
const promptWidthOffTerminal = 60;

export const checkpointsCommand: Command = {
  name: 'checkpoints',
  description:
    'Lists the checkpoints of a session, oldest first: one per user message (its id is the message id), ' +
    'plus the undo points taken automatically before each rewind (KIND "undo point"). FILES are the tracked files whose state ' +
    'the checkpoint holds; PROMPT is the first line of the user message, when the harness recorded it, shortened to fit. SESSION is a session id ' +
    'or its first 4 characters or more. The session is found in the store by its id; --cwd names its project when sessions of ' +
    'that id are in several projects.',
  positionals: { required: ['SESSION'] },
  options: { cwd: projectOption },
  examples: ['rewindable checkpoints 5d3b8e0c-1a2b-4c3d-8e4f-5a6b7c8d9e0f', 'rewindable checkpoints 5d3b'],
  async run(invocation) {
    const found = await resolveSession(invocation, invocation.positionals[0]!, 'checkpoints');
    const output = await withManager(invocation, found, { readOnly: true, command: 'checkpoints' }, async (manager): Promise<CheckpointsOutput> => ({
      sessionId: manager.sessionId,
      cwd: manager.root,
      checkpoints: (await manager.listCheckpoints()).map((checkpoint) => {
        const prompt = checkpoint.prompt !== undefined ? firstLine(checkpoint.prompt) : '';
        return {
          id: checkpoint.id,
          createdAt: checkpoint.createdAt,
          reason: checkpoint.reason,
          kind: checkpoint.reason === 'message' ? 'message' : 'undo',
          ...(prompt !== '' ? { prompt } : {}),
          files: checkpoint.files,
        };
      }),
    }));
    const { out } = invocation;
    if (invocation.json) {
      out.json(checkpointsOutputSchema, output);
      return ExitCode.success;
    }
    out.line(`${out.style.bold(plural(output.checkpoints.length, 'checkpoint'))} in session ${output.sessionId} of ${output.cwd}`);
    if (output.checkpoints.length === 0) return ExitCode.success;
    out.line();
    out.line(table(invocation, output));
    return ExitCode.success;
  },
};

function table(invocation: Invocation, output: CheckpointsOutput): string {
  const { out } = invocation;
  const rows = output.checkpoints.map((checkpoint, index) => [
    String(index + 1),
    checkpoint.id,
    formatTime(checkpoint.createdAt),
    kindOf(checkpoint.reason),
    describeFiles(checkpoint.files.map((file) => displayPath(file, output.cwd))),
  ]);
  const header = ['#', 'CHECKPOINT', 'TIME', 'KIND', 'PROMPT', 'FILES'];
  const used = header.reduce((sum, title, column) => (column === 4 ? sum : sum + Math.max(title.length, ...rows.map((row) => row[column > 4 ? column - 1 : column]!.length)) + 2), 0);
  const columns = (invocation.terminal.stdout as { columns?: number }).columns;
  const width = invocation.terminal.stdout.isTTY === true && columns !== undefined ? Math.max(20, columns - used) : promptWidthOffTerminal;
  output.checkpoints.forEach((checkpoint, index) => {
    // An undo point has no message of its own: it holds the files as they were just before a rewind wrote.
    rows[index]!.splice(4, 0, checkpoint.reason === 'message' ? shorten(checkpoint.prompt ?? '-', width) : '(before a rewind)');
  });
  return formatTable(header, rows, out.style.bold, (row, column, text) =>
    column === 1 ? out.style.yellow(text) : (column === 3 || column === 4) && output.checkpoints[row]!.reason !== 'message' ? out.style.dim(text) : text,
  );
}

function describeFiles(files: string[]): string {
  if (files.length === 0) return '-';
  const shown = files.slice(0, filesShown).join(', ');
  return files.length > filesShown ? `${shown} +${files.length - filesShown} more` : shown;
}
