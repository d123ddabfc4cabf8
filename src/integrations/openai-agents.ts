/**
 * rewindable for OpenAI Agents JS (`@openai/agents`): function tools and
 * apply_patch editors that back up each file before they change it.
 *
 * @example
 * import { checkpointUserMessage, trackFunctionTool } from 'rewindable/openai-agents';
 *
 * const agent = new Agent({ name: 'Coder', tools: [trackFunctionTool(manager, writeFileTool)] });
 * await checkpointUserMessage(manager, input, { id: messageId }); // when the user message arrives
 * const result = await run(agent, input);
 */
export { trackFunctionTool, type AnyFunctionTool, type FunctionToolInput, type TrackFunctionToolOptions } from './openai-agents/track-function-tool.js';
export { trackApplyPatchTool, trackEditor, type TrackEditorOptions } from './openai-agents/track-editor.js';
export { checkpointIdFor, checkpointUserMessage, type CheckpointUserMessageOptions } from './user-message.js';
export type { WriteNotRecordedWarning, WriteWarningHandler } from '../tools/tool-warnings.js';
