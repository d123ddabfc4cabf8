import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { rewindOutputSchema } from '../output-schemas.js';
import type { ProjectSessions } from '../project-sessions.js';
import { describeRewind, toRewindOutput } from '../rewind-report.js';
import { answer, toolResult, ToolRefusal } from '../tool-result.js';
import { destructiveAnnotations, sessionIdInput } from './inputs.js';

export function registerUndoRewind(server: McpServer, sessions: ProjectSessions): void {
  server.registerTool(
    'undo_rewind',
    {
      title: 'Undo a rewind',
      description:
        'Undoes a rewind or a revert: puts every tracked file back as it was just before it, from the undoCheckpointId that ' +
        'rewind_files or revert_turn returned (list_checkpoints lists these undo points as kind "undo"). The undo is itself a rewind, ' +
        'with its own undoCheckpointId. It fails with SESSION_LOCKED, writing nothing, while another process has the session open.',
      inputSchema: z.object({
        sessionId: sessionIdInput,
        undoCheckpointId: z.string().describe('The undoCheckpointId a rewind_files or revert_turn result gave.'),
      }),
      outputSchema: rewindOutputSchema,
      annotations: destructiveAnnotations,
    },
    ({ sessionId, undoCheckpointId }) =>
      answer(async () =>
        sessions.write(sessionId, async (manager) => {
          const checkpoint = (await manager.listCheckpoints()).find((candidate) => candidate.id === undoCheckpointId.toLowerCase());
          // An unknown id goes on to the library, whose error tells an id of another session from one of none.
          if (checkpoint?.reason === 'message') {
            throw new ToolRefusal(
              'NOT_AN_UNDO_CHECKPOINT',
              `Checkpoint ${undoCheckpointId} is the checkpoint of a user message, not the undo point of a rewind: to rewind to it, call ` +
                'preview_rewind and then rewind_files. Nothing was written.',
            );
          }
          const result = await manager.rewindFiles(undoCheckpointId);
          const fields = { sessionId: manager.sessionId, checkpointId: undoCheckpointId.toLowerCase(), cwd: manager.root };
          const output = toRewindOutput(fields, result, { heading: `Undid the rewind: the files of session ${fields.sessionId} are back as at undo point ${fields.checkpointId}:` });
          return toolResult(describeRewind(output), output);
        }),
      ),
  );
}
