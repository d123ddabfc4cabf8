import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { rewindOutputSchema } from '../output-schemas.js';
import type { PreviewLog } from '../preview-log.js';
import type { ProjectSessions } from '../project-sessions.js';
import { diffUri } from '../resource-uris.js';
import { readyOrThrow } from '../../rewind/result.js';
import { describeRewind, toRewindOutput } from '../rewind-report.js';
import { answer, toolResult } from '../tool-result.js';
import { checkpointIdInput, pathsInput, readOnlyAnnotations, sessionIdInput } from './inputs.js';

export function registerPreviewRewind(server: McpServer, sessions: ProjectSessions, previews: PreviewLog): void {
  server.registerTool(
    'preview_rewind',
    {
      title: 'Preview a rewind',
      description:
        'Dry run of rewind_files: shows what rewinding the files to a checkpoint would do, without writing anything. Per file: the ' +
        'action (restore, recreate, delete, chmod), the lines put back (+) and removed (-), whether someone other than the agent ' +
        'changed it since (a conflict: the rewind would discard that edit), and a unified diff from the file now to the file at the ' +
        'checkpoint (cut short when long; the diff resource has all of it). Files a rewind refuses to touch (links, hard links, moved ' +
        'directories) are listed with the reason. rewind_files needs this preview of the same checkpoint first. Reads only.',
      inputSchema: z.object({ sessionId: sessionIdInput, checkpointId: checkpointIdInput, paths: pathsInput }),
      outputSchema: rewindOutputSchema,
      annotations: readOnlyAnnotations,
    },
    ({ sessionId, checkpointId, paths }) =>
      answer(async () =>
        sessions.read(sessionId, async (manager) => {
          const selection = paths !== undefined ? { paths } : {};
          const preview = readyOrThrow(await manager.rewindFiles(checkpointId, { dryRun: true, ...selection }));
          const diffs = preview.files.length > 0 ? await manager.diffFiles(checkpointId, selection) : [];
          const fields = { sessionId: manager.sessionId, checkpointId: checkpointId.toLowerCase(), cwd: manager.root };
          const wording = {
            heading: `Preview (nothing written) of a rewind of session ${fields.sessionId} to checkpoint ${fields.checkpointId}:`,
            next: 'Show the user this preview; to apply it, call rewind_files with the same checkpointId (and paths).',
          };
          const output = toRewindOutput(fields, preview, wording, diffs);
          previews.add(manager.sessionId, checkpointId, paths, preview);
          return toolResult(describeRewind(output, diffUri(output.sessionId, output.checkpointId)), output);
        }),
      ),
  );
}
