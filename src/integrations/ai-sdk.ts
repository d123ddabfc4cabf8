/**
 * rewindable for the AI SDK (`ai` 6): checkpoint tracking for any tool or
 * tool set, and ready-made Write / Edit / NotebookEdit tools.
 *
 * @example
 * import { checkpointUserMessage, fileTools, trackTools } from 'rewindable/ai-sdk';
 *
 * await checkpointUserMessage(manager, userMessage); // when the user message arrives
 * const result = await generateText({ model, tools: { ...fileTools(manager), ...trackTools(manager, myTools) }, messages, stopWhen: stepCountIs(10) });
 */
export { trackTools, type TrackToolOptions, type TrackToolSetOptions } from './ai-sdk/track-tools.js';
export { editTool, fileTools, notebookEditTool, writeTool, type EditToolInput, type NotebookEditToolInput, type WriteToolInput } from './ai-sdk/file-tools.js';
export { checkpointIdFor, checkpointUserMessage, type CheckpointUserMessageOptions } from './user-message.js';
export type { WriteNotRecordedWarning, WriteWarningHandler } from '../tools/tool-warnings.js';
