import type { CallbackManagerForToolRun } from '@langchain/core/callbacks/manager';
import type { StructuredTool, ToolRunnableConfig } from '@langchain/core/tools';
import type { CheckpointManager } from '../../checkpoint-manager.js';
import type { WriteWarningHandler } from '../../tools/tool-warnings.js';
import type { PathSelector } from '../../tools/wrap.js';
import { runTracked, selectPaths, type LoosePathSelector } from '../tracked-call.js';

/** The input a tool's function receives: its schema's output. */
export type StructuredToolInput<TOOL extends StructuredTool> = TOOL extends StructuredTool<infer _Schema, infer Input> ? Input : never;

export interface TrackStructuredToolOptions<TOOL extends StructuredTool> {
  /**
   * The files a call writes, backed up before it runs: names of input fields
   * holding a path or a list of paths, or a function of the (parsed) input.
   * Relative paths resolve against the project root.
   * @default the input's `file_path`, `notebook_path` and `path` fields
   */
  paths?: PathSelector<StructuredToolInput<TOOL>>;
  /**
   * Told when a call ran but the record of what it wrote could not be stored
   * (its files were backed up before, so a rewind still restores them). The
   * model gets the call's result all the same.
   * @default a process warning (`process.emitWarning`, type `RewindableWarning`)
   */
  onWarning?: WriteWarningHandler;
}

type ToolCall = (input: unknown, runManager?: CallbackManagerForToolRun, config?: ToolRunnableConfig) => Promise<unknown>;

/**
 * A LangChain tool that backs up the files it will write before it runs and
 * records what it wrote, with the tool call's id: for LangGraph's
 * `ToolNode`, or any place tools are called without the agent middleware.
 * The result is the same tool (same class, name, schema and behaviour); if a
 * file cannot be backed up, the call fails with a `RewindableError` before
 * the tool runs, which `ToolNode` hands to the model as an error message.
 *
 * @example
 * const toolNode = new ToolNode([trackStructuredTool(manager, writeFileTool, { paths: ['target'] })]);
 */
export function trackStructuredTool<TOOL extends StructuredTool>(manager: CheckpointManager, tool: TOOL, options: TrackStructuredToolOptions<TOOL> = {}): TOOL {
  const selector = options.paths as LoosePathSelector | undefined;
  const original = (tool as unknown as { _call: ToolCall })._call;
  // Inherits everything from the tool and overrides only the step that runs it, after the input was parsed.
  const tracked = Object.create(tool) as TOOL & { _call: ToolCall };
  tracked._call = function (this: TOOL, input, runManager, config) {
    const call = { tool: tool.name, toolCallId: config?.toolCall?.id, paths: selectPaths(selector, input) };
    return runTracked(manager, call, () => original.call(this, input, runManager, config), { onWarning: options.onWarning });
  };
  return tracked;
}
