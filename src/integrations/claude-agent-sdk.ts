/**
 * rewindable for the Claude Agent SDK: hooks that checkpoint every user
 * prompt and back up every file Claude's Write, Edit and NotebookEdit tools
 * change (subagents included) before it changes.
 *
 * @example
 * import { withCheckpoints } from 'rewindable/claude-agent-sdk';
 *
 * for await (const message of query({ prompt, options: withCheckpoints(manager, { cwd, permissionMode: 'acceptEdits' }) })) { ... }
 */
export {
  createCheckpointHooks,
  withCheckpoints,
  type CheckpointEvent,
  type CheckpointHooks,
  type CheckpointHooksOptions,
  type CheckpointWarning,
  type PromptNotMatchedWarning,
} from './claude-agent-sdk/checkpoint-hooks.js';
export { mergeHooks, type HookMap } from './claude-agent-sdk/merge-hooks.js';
export { checkpointIdFor, checkpointUserMessage, type CheckpointUserMessageOptions } from './user-message.js';
export type { WriteNotRecordedWarning, WriteWarningHandler } from '../tools/tool-warnings.js';
