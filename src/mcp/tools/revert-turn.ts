import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { rewindOutputSchema } from '../output-schemas.js';
import type { ProjectSessions } from '../project-sessions.js';
import { readyOrThrow } from '../../rewind/result.js';
import { describeRewind, toRewindOutput } from '../rewind-report.js';
import { answer, toolResult } from '../tool-result.js';
import { checkpointIdInput, destructiveAnnotations, pathsInput, sessionIdInput } from './inputs.js';

export function registerRevertTurn(server: McpServer, sessions: ProjectSessions): void {
  server.registerTool(
    'revert_turn',
    {
      title: 'Revert one turn',
      description:
        'Undoes the file changes of one turn, the one that began with the user message checkpointId, and keeps every change made ' +
        "after it, as git revert does: each file the turn changed goes back to its state before the turn with the later changes " +
        "merged in. A file whose later changes overlap the turn's conflicts: onConflict skip (default) leaves it alone and lists it, " +
        'markers writes the merge with conflict markers, overwrite puts back its version from before the turn. Call it with dryRun: ' +
        'true first and show the user the result (dry runs write nothing and work while the session is in use). A real revert returns ' +
        'an undoCheckpointId for undo_rewind, and fails with SESSION_LOCKED, writing nothing, while another process has the session open.',
      inputSchema: z.object({
        sessionId: sessionIdInput,
        checkpointId: checkpointIdInput,
        paths: pathsInput,
        dryRun: z.boolean().optional().describe('Only report what the revert would do. Default: false.'),
        onConflict: z.enum(['skip', 'markers', 'overwrite']).optional().describe('Default: skip.'),
      }),
      outputSchema: rewindOutputSchema,
      annotations: destructiveAnnotations,
    },
    ({ sessionId, checkpointId, paths, dryRun, onConflict }) =>
      answer(async () => {
        const preview = dryRun === true;
        const options = { dryRun: preview, onConflict: onConflict ?? 'skip', ...(paths !== undefined ? { paths } : {}) } as const;
        const open = preview ? sessions.read.bind(sessions) : sessions.write.bind(sessions);
        return open(sessionId, async (manager) => {
          const result = readyOrThrow(await manager.revertTurn(checkpointId, options));
          const fields = { sessionId: manager.sessionId, checkpointId: checkpointId.toLowerCase(), cwd: manager.root };
          const turn = `the turn of checkpoint ${fields.checkpointId} in session ${fields.sessionId}`;
          const wording = preview
            ? { heading: `Preview (nothing written) of a revert of ${turn}:`, next: 'Show the user this preview; to apply it, call revert_turn again without dryRun.' }
            : { heading: `Reverted the file changes of ${turn}:` };
          const output = toRewindOutput(fields, result, wording);
          return toolResult(describeRewind(output), output);
        });
      }),
  );
}
