import type { FunctionTool, RunContext, ToolExecuteArgument } from '@openai/agents';
import type { CheckpointManager } from '../../checkpoint-manager.js';
import type { WriteWarningHandler } from '../../tools/tool-warnings.js';
import type { PathSelector } from '../../tools/wrap.js';
import { refusalError, runTracked, selectPaths, type LoosePathSelector } from '../tracked-call.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any FunctionTool, whatever its context, parameters and result
export type AnyFunctionTool = FunctionTool<any, any, any>;

/** What the runner passes with each call (the SDK does not export its name). */
type ToolCallDetails = Parameters<FunctionTool['invoke']>[2];

/** The input a function tool's `execute` receives (`unknown` for tools with a plain JSON schema). */
export type FunctionToolInput<TOOL extends AnyFunctionTool> = TOOL extends FunctionTool<infer _Context, infer Parameters, infer _Result> ? ToolExecuteArgument<Parameters> : never;

export interface TrackFunctionToolOptions<TOOL extends AnyFunctionTool> {
  /**
   * The files a call writes, backed up before it runs: names of input fields
   * holding a path or a list of paths, or a function of the (parsed) input.
   * Relative paths resolve against the project root.
   * @default the input's `file_path`, `notebook_path` and `path` fields
   */
  paths?: PathSelector<FunctionToolInput<TOOL>>;
  /**
   * Told when a call ran but the record of what it wrote could not be stored
   * (its files were backed up before, so a rewind still restores them). The
   * model gets the call's result all the same.
   * @default a process warning (`process.emitWarning`, type `RewindableWarning`)
   */
  onWarning?: WriteWarningHandler;
}

/**
 * A function tool that backs up the files it will write before it runs and
 * records what it wrote, with the call's `callId`. The model's arguments
 * are read for the paths (JSON the tool itself then parses as usual).
 *
 * When a file cannot be backed up, the tool does not run and the model
 * gets the reason as the tool's output, as it gets any tool error. A tool
 * with an output schema (whose `errorFunction` is `null` unless it sets
 * one) throws the `RewindableError` instead, which ends the run.
 *
 * @example
 * const agent = new Agent({ name: 'Coder', tools: [trackFunctionTool(manager, saveFile, { paths: ['target'] })] });
 */
export function trackFunctionTool<TOOL extends AnyFunctionTool>(manager: CheckpointManager, tool: TOOL, options: TrackFunctionToolOptions<TOOL> = {}): TOOL {
  const selector = options.paths as LoosePathSelector | undefined;
  const invoke = async (runContext: RunContext<unknown>, input: string, details?: ToolCallDetails): Promise<unknown> => {
    const call = { tool: tool.name, toolCallId: details?.toolCall?.callId, paths: selectPaths(selector, parseArguments(input)) };
    return runTracked(manager, call, () => tool.invoke(runContext, input, details), {
      refuse: (reason, error) => {
        if (tool.errorFunction === null) throw refusalError(call, error);
        return tool.errorFunction ? tool.errorFunction(runContext, refusalError(call, error), details) : reason;
      },
      onWarning: options.onWarning,
    });
  };
  return { ...tool, invoke };
}

/** Arguments that are not JSON name no files: the tool rejects them itself, before it writes anything. */
function parseArguments(input: string): unknown {
  try {
    return JSON.parse(input) as unknown;
  } catch {
    return undefined;
  }
}
