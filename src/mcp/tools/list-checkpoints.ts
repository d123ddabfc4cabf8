import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { checkpointsOutputSchema, type CheckpointsOutput } from '../output-schemas.js';
import type { ProjectSessions } from '../project-sessions.js';
import { answer, toolResult } from '../tool-result.js';
import { readOnlyAnnotations, sessionIdInput } from './inputs.js';

/** Characters of a prompt a listing carries: a pasted file in a prompt would otherwise fill the model's context. */
export const promptCharacters = 2000;
/** Files listed per checkpoint, for the same reason: a session may track thousands. */
export const filesPerCheckpoint = 100;

/** A session's checkpoints, as `list_checkpoints` and the checkpoints resource give them. */
export async function checkpointsOutput(sessions: ProjectSessions, sessionId: string | undefined): Promise<CheckpointsOutput> {
  return sessions.read(sessionId, async (manager) => ({
    sessionId: manager.sessionId,
    cwd: manager.root,
    checkpoints: (await manager.listCheckpoints()).map((checkpoint) => {
      const prompt = checkpoint.prompt !== undefined ? [...checkpoint.prompt] : undefined;
      const shown = prompt !== undefined && prompt.length > 0 ? { prompt: prompt.slice(0, promptCharacters).join('') } : {};
      return {
        id: checkpoint.id,
        createdAt: checkpoint.createdAt,
        kind: checkpoint.reason === 'message' ? 'message' : 'undo',
        ...shown,
        ...(prompt !== undefined && prompt.length > promptCharacters ? { promptTruncated: true } : {}),
        files: checkpoint.files.slice(0, filesPerCheckpoint),
        filesLeftOut: Math.max(0, checkpoint.files.length - filesPerCheckpoint),
      };
    }),
  }));
}

export function registerListCheckpoints(server: McpServer, sessions: ProjectSessions): void {
  server.registerTool(
    'list_checkpoints',
    {
      title: 'List checkpoints',
      description:
        'Lists the checkpoints of a session, oldest first. A checkpoint is taken when a user message arrives, before the agent acts ' +
        "on it; its id is that message's id, and rewinding to it puts the files back as they were before that message. Each comes " +
        'with the prompt text (when the harness recorded it), its time and the tracked files it holds. Checkpoints of kind "undo" are ' +
        'the undo points taken before each rewind. Reads only; the session may be in use.',
      inputSchema: z.object({ sessionId: sessionIdInput }),
      outputSchema: checkpointsOutputSchema,
      annotations: readOnlyAnnotations,
    },
    ({ sessionId }) =>
      answer(async () => {
        const output = await checkpointsOutput(sessions, sessionId);
        const lines = output.checkpoints.map((checkpoint, index) => {
          const what = checkpoint.kind === 'undo' ? '(undo point, before a rewind)' : checkpoint.prompt !== undefined ? JSON.stringify(checkpoint.prompt) : '(no prompt recorded)';
          return `${index + 1}. ${checkpoint.id} at ${checkpoint.createdAt}: ${what}; files: ${checkpoint.files.length === 0 ? 'none' : checkpoint.files.join(', ')}${checkpoint.filesLeftOut > 0 ? ` and ${checkpoint.filesLeftOut} more` : ''}`;
        });
        return toolResult([`${output.checkpoints.length} checkpoint(s) in session ${output.sessionId} of ${output.cwd}, oldest first:`, ...lines].join('\n'), output);
      }),
  );
}
