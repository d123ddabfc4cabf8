import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { rewindOutputSchema } from '../output-schemas.js';
import { fingerprintOf, type PreviewLog } from '../preview-log.js';
import { readyOrThrow } from '../../rewind/result.js';
import type { ProjectSessions } from '../project-sessions.js';
import { describeRewind, toRewindOutput } from '../rewind-report.js';
import { answer, toolResult, ToolRefusal } from '../tool-result.js';
import { checkpointIdInput, destructiveAnnotations, pathsInput, sessionIdInput } from './inputs.js';

export function registerRewindFiles(server: McpServer, sessions: ProjectSessions, previews: PreviewLog): void {
  server.registerTool(
    'rewind_files',
    {
      title: 'Rewind files to a checkpoint',
      description:
        'Puts the tracked files back as they were at a checkpoint (before its user message): files the agent created are deleted, ' +
        'changed or deleted ones restored; links and hard-linked files are left alone and listed. It REFUSES (PREVIEW_REQUIRED) unless ' +
        'preview_rewind was called for the same checkpoint in this connection first: show the preview to the user before rewinding; ' +
        'it refuses (PREVIEW_STALE) if the files changed since, and then needs a new preview. ' +
        'The result lists what changed and an undoCheckpointId: undo_rewind with it puts everything back as it was just before. It ' +
        'fails with SESSION_LOCKED, writing nothing, while another process (such as a running agent) has the session open. onConflict, ' +
        'for a file changed by someone other than the agent since the agent last wrote it: overwrite (default) discards that edit, ' +
        "skip leaves the file alone, merge undoes only the agent's changes and keeps the other edit (a conflicting merge is left " +
        'alone), markers writes a conflicting merge with conflict markers.',
      inputSchema: z.object({
        sessionId: sessionIdInput,
        checkpointId: checkpointIdInput,
        paths: pathsInput,
        onConflict: z.enum(['overwrite', 'skip', 'merge', 'markers']).optional().describe('Default: overwrite.'),
      }),
      outputSchema: rewindOutputSchema,
      annotations: destructiveAnnotations,
    },
    ({ sessionId, checkpointId, paths, onConflict }) =>
      answer(async () => {
        const session = await sessions.sessionId(sessionId);
        // Checked before the session is opened for writing: a refused call takes no lock and writes nothing.
        const shown = previews.shown(session, checkpointId, paths);
        if (shown === undefined) {
          throw new ToolRefusal(
            'PREVIEW_REQUIRED',
            `No preview of a rewind of session ${session} to checkpoint ${checkpointId}${paths !== undefined ? ' with these paths' : ''} was made in this connection. ` +
              'Call preview_rewind with this checkpointId (and the same paths) first, show the user what it would change, then call rewind_files again. Nothing was written.',
          );
        }
        return sessions.write(session, async (manager) => {
          const selection = paths !== undefined ? { paths } : {};
          // The files may have changed since the preview: the rewind goes ahead only if it still does what was shown.
          const now = readyOrThrow(await manager.rewindFiles(checkpointId, { dryRun: true, ...selection }));
          if (fingerprintOf(now) !== shown) {
            previews.use(manager.sessionId, checkpointId, paths);
            throw new ToolRefusal(
              'PREVIEW_STALE',
              `The files changed since the preview of checkpoint ${checkpointId}: the rewind would no longer do what it showed. Call preview_rewind again and show the user the new preview. Nothing was written.`,
            );
          }
          const result = await manager.rewindFiles(checkpointId, { onConflict: onConflict ?? 'overwrite', ...selection });
          previews.use(manager.sessionId, checkpointId, paths);
          const fields = { sessionId: manager.sessionId, checkpointId: checkpointId.toLowerCase(), cwd: manager.root };
          const output = toRewindOutput(fields, result, { heading: `Rewound the files of session ${fields.sessionId} to checkpoint ${fields.checkpointId}:` });
          return toolResult(describeRewind(output), output);
        });
      }),
  );
}
