/**
 * rewindable for LangChain.js v1: agent middleware for `createAgent`, and a
 * tool wrapper for LangGraph's `ToolNode`.
 *
 * @example
 * import { checkpointMiddleware } from 'rewindable/langchain';
 *
 * const agent = createAgent({ model, tools, middleware: [checkpointMiddleware(manager)] });
 */
export { checkpointMiddleware, defaultFileToolNames, type CheckpointMiddlewareOptions, type ToolCallPaths } from './langchain/checkpoint-middleware.js';
export { trackStructuredTool, type StructuredToolInput, type TrackStructuredToolOptions } from './langchain/track-structured-tool.js';
export { checkpointIdFor, checkpointUserMessage, type CheckpointUserMessageOptions } from './user-message.js';
export type { WriteNotRecordedWarning, WriteWarningHandler } from '../tools/tool-warnings.js';
