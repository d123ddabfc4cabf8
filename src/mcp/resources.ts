import { ResourceTemplate, type McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ErrorCode, McpError, type ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import type { FileSkipDiff } from '../diff/diff-files.js';
import { gitQuotedPath } from '../text/git-patch.js';
import type { ProjectSessions } from './project-sessions.js';
import { checkpointsUri, checkpointsUriTemplate, diffUriTemplate, sessionsUri } from './resource-uris.js';
import { errorMeta } from './tool-result.js';
import { checkpointsOutput } from './tools/list-checkpoints.js';
import { sessionsOutput } from './tools/list-sessions.js';

/** The JSON-RPC error code the MCP specification gives a resource that does not exist. */
const resourceNotFound = -32002;
const notFoundCodes = new Set(['SESSION_NOT_FOUND', 'CHECKPOINT_NOT_FOUND', 'CHECKPOINT_IN_OTHER_SESSION', 'INVALID_ID']);

/**
 * The same facts as the listing tools, as resources a client can attach:
 * the sessions, one session's checkpoints, and the whole patch of a rewind
 * to a checkpoint (which preview_rewind cuts short).
 */
export function registerResources(server: McpServer, sessions: ProjectSessions): void {
  server.registerResource(
    'sessions',
    sessionsUri,
    { title: 'Sessions of the project', description: 'The rewindable sessions of this project, most recently active first (JSON, as list_sessions).', mimeType: 'application/json' },
    (uri) => read(uri, async () => json(uri, await sessionsOutput(sessions))),
  );
  server.registerResource(
    'checkpoints',
    new ResourceTemplate(checkpointsUriTemplate, {
      list: async () => ({
        resources: (await sessionsOutput(sessions)).sessions.map((session) => ({
          uri: checkpointsUri(session.sessionId),
          name: `checkpoints of ${session.sessionId}`,
          mimeType: 'application/json',
        })),
      }),
    }),
    { title: 'Checkpoints of a session', description: 'The checkpoints of one session, oldest first, with prompts and files (JSON, as list_checkpoints).', mimeType: 'application/json' },
    (uri, { sessionId }) => read(uri, async () => json(uri, await checkpointsOutput(sessions, single(sessionId)))),
  );
  server.registerResource(
    'diff',
    new ResourceTemplate(diffUriTemplate, { list: undefined }),
    {
      title: 'Diff of a rewind',
      description: 'The unified diff, from the files now (a/) to the files at the checkpoint (b/), of a rewind to that checkpoint; git apply applies it.',
      mimeType: 'text/x-diff',
    },
    (uri, { sessionId, checkpointId }) =>
      read(uri, async () => {
        // Binary files as GIT binary patches, as `rewindable diff --binary` writes them: git apply applies the whole document.
        const diffs = await sessions.read(single(sessionId), (manager) => manager.diffFiles(single(checkpointId), { binary: true }));
        const text = diffs.flatMap((diff) => (diff.action === 'skip' ? [leftAlone(diff)] : diff.patch !== undefined ? [diff.patch] : [])).join('');
        return { contents: [{ uri: uri.href, mimeType: 'text/x-diff', text }] };
      }),
  );
}

/**
 * A comment line for a file the rewind leaves alone, on one line whatever its name holds: a line break in a name
 * could otherwise start a line git apply would read as part of the patch.
 */
function leftAlone(diff: FileSkipDiff): string {
  return `# left alone: ${gitQuotedPath(diff.path)}: ${diff.message.replace(/[\r\n]+/g, ' ')}\n`;
}

function json(uri: URL, value: unknown): ReadResourceResult {
  return { contents: [{ uri: uri.href, mimeType: 'application/json', text: `${JSON.stringify(value, null, 2)}\n` }] };
}

/** A template variable is a string, or a list for an exploded one: ours are single ids. */
function single(value: string | string[] | undefined): string {
  return Array.isArray(value) ? (value[0] ?? '') : (value ?? '');
}

/** A resource read that fails is a protocol error: its data carries rewindable's code, as a tool error's _meta does. */
async function read(uri: URL, work: () => Promise<ReadResourceResult>): Promise<ReadResourceResult> {
  try {
    return await work();
  } catch (error) {
    const meta = errorMeta(error);
    throw new McpError(notFoundCodes.has(meta.code) ? resourceNotFound : ErrorCode.InternalError, `${meta.code}: ${meta.message}`, { ...meta, uri: uri.href });
  }
}
