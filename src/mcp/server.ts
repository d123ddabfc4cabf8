import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { version } from '../../package.json';
import { PreviewLog } from './preview-log.js';
import { ProjectSessions, type ProjectLocation } from './project-sessions.js';
import { registerResources } from './resources.js';
import { registerListCheckpoints } from './tools/list-checkpoints.js';
import { registerListSessions } from './tools/list-sessions.js';
import { registerPreviewRewind } from './tools/preview-rewind.js';
import { registerRevertTurn } from './tools/revert-turn.js';
import { registerRewindFiles } from './tools/rewind-files.js';
import { registerUndoRewind } from './tools/undo-rewind.js';

const instructions =
  "rewindable keeps a backup of every file an agent's tools change, per user message (a checkpoint), and rewinds them. " +
  'To undo what the agent did since a message: list_checkpoints, preview_rewind (show the user the preview), then rewind_files; ' +
  'undo_rewind takes a rewind back. revert_turn undoes one turn and keeps the later ones. Listing and previews take no lock; a ' +
  'rewind needs the session for itself and fails with SESSION_LOCKED while the agent that records it is running.';

/**
 * An MCP server for the sessions of one project. A server object serves one
 * connection: its previews (which rewind_files requires) belong to it.
 */
export function createMcpServer(location: ProjectLocation): { server: McpServer; sessions: ProjectSessions } {
  const server = new McpServer({ name: 'rewindable', title: 'rewindable', version }, { instructions, capabilities: { tools: {}, resources: {} } });
  const sessions = new ProjectSessions(location);
  const previews = new PreviewLog();
  registerListSessions(server, sessions);
  registerListCheckpoints(server, sessions);
  registerPreviewRewind(server, sessions, previews);
  registerRewindFiles(server, sessions, previews);
  registerUndoRewind(server, sessions);
  registerRevertTurn(server, sessions);
  registerResources(server, sessions);
  return { server, sessions };
}
