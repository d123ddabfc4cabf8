import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import type { ProjectSessions } from '../project-sessions.js';
import { sessionsOutputSchema, type SessionsOutput } from '../output-schemas.js';
import { answer, toolResult } from '../tool-result.js';
import { readOnlyAnnotations } from './inputs.js';

/** The most recently active sessions a list gives: a project's sessions pile up, and a model's context does not. */
export const sessionsPerReport = 50;

/** The project's sessions, as `list_sessions` and the `rewindable://sessions` resource give them. */
export async function sessionsOutput(sessions: ProjectSessions): Promise<SessionsOutput> {
  const survey = await sessions.survey();
  return {
    cwd: survey.root,
    store: sessions.location.storeDir,
    sessionsLeftOut: Math.max(0, survey.sessions.length - sessionsPerReport),
    sessions: survey.sessions.slice(0, sessionsPerReport).map((session) => ({
      sessionId: session.sessionId,
      createdAt: session.createdAt,
      lastActivity: session.lastActivity,
      checkpoints: session.checkpoints,
      trackedFiles: session.trackedFiles,
      ...(session.firstPrompt !== undefined ? { firstPrompt: session.firstPrompt } : {}),
      ...(session.damaged !== undefined ? { damaged: session.damaged } : {}),
      ...(session.interruptedRewind !== undefined ? { interruptedRewind: session.interruptedRewind } : {}),
    })),
  };
}

export function registerListSessions(server: McpServer, sessions: ProjectSessions): void {
  server.registerTool(
    'list_sessions',
    {
      title: 'List sessions',
      description:
        "Lists the rewindable sessions of this project (one per agent conversation), the most recently active first, with their " +
        'numbers of checkpoints and tracked files. The other tools default to the first one. Reads only; the session may be in use.',
      inputSchema: z.object({}),
      outputSchema: sessionsOutputSchema,
      annotations: readOnlyAnnotations,
    },
    () =>
      answer(async () => {
        const output = await sessionsOutput(sessions);
        const lines = output.sessions.map(
          (session) =>
            `- ${session.sessionId}: ${session.damaged !== undefined ? `damaged (${session.damaged.code})` : `${session.checkpoints} checkpoint(s), ${session.trackedFiles} tracked file(s)`}, ` +
            `last active ${session.lastActivity}${session.firstPrompt !== undefined ? `, first prompt: ${JSON.stringify(session.firstPrompt)}` : ''}`,
        );
        const older = output.sessionsLeftOut > 0 ? [`(and ${output.sessionsLeftOut} older session(s), left out)`] : [];
        const text = output.sessions.length === 0 ? `No sessions of ${output.cwd} in the store ${output.store}.` : [`Sessions of ${output.cwd}, most recent first:`, ...lines, ...older].join('\n');
        return toolResult(text, output);
      }),
  );
}
