import { ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { createMiddleware } from 'langchain';
import type { CheckpointManager } from '../../checkpoint-manager.js';
import type { WriteWarningHandler } from '../../tools/tool-warnings.js';
import { runTracked, selectPaths, type LoosePathSelector } from '../tracked-call.js';
import { checkpointUserMessage } from '../user-message.js';

/** Tools that write files under their usual names: Claude Code's, and the `write_file` / `edit_file` of LangChain's deep agents. */
export const defaultFileToolNames = ['Write', 'Edit', 'NotebookEdit', 'write_file', 'edit_file'] as const;

/** How a tool's call names the files it writes: input fields holding paths, or a function of the call's arguments. */
export type ToolCallPaths = readonly string[] | ((args: Record<string, unknown>) => string | readonly string[] | undefined);

export interface CheckpointMiddlewareOptions {
  /**
   * The tools that write files: their names (paths are then read from the
   * arguments' `file_path`, `notebook_path` and `path`), or, by name, where
   * their paths are. Calls of other tools pass through untouched; a read-only
   * tool should not be listed, or a rewind would also undo other people's
   * later edits to the files it read.
   * @default ['Write', 'Edit', 'NotebookEdit', 'write_file', 'edit_file']
   */
  tools?: readonly string[] | Record<string, ToolCallPaths>;
  /**
   * Take the checkpoint when the agent starts, keyed by the id of the last
   * human message (the turn's user message; LangGraph gives every message
   * an id). Turn it off to take checkpoints yourself with
   * `checkpointUserMessage`.
   * @default true
   */
  checkpoint?: boolean;
  /**
   * Told when a call ran but the record of what it wrote could not be stored
   * (its files were backed up before, so a rewind still restores them). The
   * model gets the call's result all the same.
   * @default a process warning (`process.emitWarning`, type `RewindableWarning`)
   */
  onWarning?: WriteWarningHandler;
}

/**
 * LangChain agent middleware (`createAgent`): when the agent starts, the
 * user message gets its checkpoint; before each call of a file tool, the
 * files it names are backed up, and once it has run, what it wrote is
 * recorded with the tool call's id. A call whose files cannot be backed up
 * does not run: the model gets an error ToolMessage with the reason.
 *
 * @example
 * const agent = createAgent({ model, tools, middleware: [checkpointMiddleware(manager)] });
 * const result = await agent.invoke({ messages: [new HumanMessage({ id: messageId, content: text })] });
 * await manager.rewindFiles(checkpointIdFor(messageId));
 */
export function checkpointMiddleware(manager: CheckpointManager, options: CheckpointMiddlewareOptions = {}) {
  const tools = toolPaths(options.tools ?? defaultFileToolNames);
  return createMiddleware({
    name: 'RewindableCheckpoints',
    beforeAgent: async (state) => {
      if (options.checkpoint === false) return;
      const message = state.messages.findLast((candidate: BaseMessage) => candidate.type === 'human');
      // A failed checkpoint stops the run: its tool calls would be refused anyway, or backed up into the wrong turn.
      if (message !== undefined) await checkpointUserMessage(manager, { role: 'user', content: message.text }, { id: message.id });
    },
    wrapToolCall: async (request, handler) => {
      const { toolCall } = request;
      if (!tools.has(toolCall.name)) return handler(request);
      const call = { tool: toolCall.name, toolCallId: toolCall.id, paths: selectPaths(tools.get(toolCall.name), toolCall.args) };
      return runTracked(manager, call, () => handler(request), {
        refuse: (reason) => new ToolMessage({ content: reason, tool_call_id: toolCall.id ?? '', name: toolCall.name, status: 'error' }),
        onWarning: options.onWarning,
      });
    },
  });
}

function toolPaths(tools: readonly string[] | Record<string, ToolCallPaths>): Map<string, LoosePathSelector | undefined> {
  if (isNameList(tools)) return new Map(tools.map((name) => [name, undefined]));
  return new Map(Object.entries(tools) as Array<[string, LoosePathSelector]>);
}

function isNameList(tools: readonly string[] | Record<string, ToolCallPaths>): tools is readonly string[] {
  return Array.isArray(tools);
}
