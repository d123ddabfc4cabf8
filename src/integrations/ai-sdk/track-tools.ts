import type { InferToolInput, Tool, ToolExecutionOptions, ToolSet } from 'ai';
import type { CheckpointManager } from '../../checkpoint-manager.js';
import type { WriteWarningHandler } from '../../tools/tool-warnings.js';
import type { PathSelector } from '../../tools/wrap.js';
import { runTracked, selectPaths, streamTracked, type LoosePathSelector, type TrackedCall } from '../tracked-call.js';
import { tracksItself } from './self-tracking.js';

export interface TrackToolOptions<TOOL extends Tool> {
  /**
   * The files a call writes, backed up before `execute` runs: names of input
   * fields that hold a path or a list of paths, or a function of the input.
   * Relative paths resolve against the project root.
   * @default the input's `file_path`, `notebook_path` and `path` fields
   */
  paths?: PathSelector<InferToolInput<TOOL>>;
  /**
   * The tool's name, recorded with each write.
   * @default the tool's `title`, else `"tool"`
   */
  name?: string;
  /**
   * Told when a call ran but the record of what it wrote could not be stored
   * (its files were backed up before, so a rewind still restores them). The
   * model gets the call's result all the same.
   * @default a process warning (`process.emitWarning`, type `RewindableWarning`)
   */
  onWarning?: WriteWarningHandler;
}

export interface TrackToolSetOptions<TOOLS extends ToolSet> {
  /**
   * For each tool of the set (by its key): the files a call writes, as for a
   * single tool. Each tool's key is recorded as its name.
   * @default for every tool, the input's `file_path`, `notebook_path` and `path` fields
   */
  paths?: { [NAME in keyof TOOLS]?: PathSelector<InferToolInput<TOOLS[NAME]>> };
  /**
   * Told when a call ran but the record of what it wrote could not be stored
   * (its files were backed up before, so a rewind still restores them). The
   * model gets the call's result all the same.
   * @default a process warning (`process.emitWarning`, type `RewindableWarning`)
   */
  onWarning?: WriteWarningHandler;
}

/**
 * Adds checkpoint tracking to AI SDK tools: before a tool's `execute` runs,
 * the files its input names are backed up into the current checkpoint; once
 * it has run, what it wrote is recorded with the tool call's id. Takes one
 * tool or a whole tool set and returns the same shape, with the same types.
 * A call that ran is reported as it ran, also when its write could not be
 * recorded (`onWarning` is told).
 *
 * If a file cannot be backed up (outside the project, a link, no checkpoint
 * yet ...), `execute` does not run and the call fails with a
 * `RewindableError`; the AI SDK hands its message to the model as the tool's
 * error. Tools without `execute` and the tools of `fileTools()` (which track
 * themselves) are returned unchanged. A streaming tool (`async function*`) is
 * tracked before its first value and recorded after its last.
 *
 * @example
 * const tools = trackTools(manager, { writeConfig, runFormatter }, { paths: { writeConfig: ['target'] } });
 * const result = await generateText({ model, tools, prompt, stopWhen: stepCountIs(10) });
 */
export function trackTools<TOOLS extends ToolSet>(manager: CheckpointManager, tools: TOOLS, options?: TrackToolSetOptions<TOOLS>): TOOLS;
export function trackTools<TOOL extends Tool>(manager: CheckpointManager, tool: TOOL, options?: TrackToolOptions<TOOL>): TOOL;
export function trackTools(manager: CheckpointManager, tools: Tool | ToolSet, options: { paths?: unknown; name?: string; onWarning?: WriteWarningHandler } = {}): Tool | ToolSet {
  const { onWarning } = options;
  if (isTool(tools)) return trackTool(manager, tools, options.name ?? tools.title ?? 'tool', options.paths as LoosePathSelector | undefined, onWarning);
  const selectors = (options.paths ?? {}) as Record<string, LoosePathSelector | undefined>;
  return Object.fromEntries(Object.entries(tools).map(([name, tool]) => [name, trackTool(manager, tool, name, selectors[name], onWarning)]));
}

function trackTool(manager: CheckpointManager, tool: Tool, name: string, selector: LoosePathSelector | undefined, onWarning: WriteWarningHandler | undefined): Tool {
  const execute = tool.execute as ((input: unknown, options: ToolExecutionOptions) => unknown) | undefined;
  if (execute === undefined || tracksItself(tool)) return tool;
  const callOf = (input: unknown, options: ToolExecutionOptions | undefined): TrackedCall => ({
    tool: name,
    toolCallId: options?.toolCallId,
    paths: selectPaths(selector, input),
  });
  // The AI SDK streams a tool whose execute returns an async iterable, so a generator must stay a generator.
  const tracked = isAsyncGeneratorFunction(execute)
    ? function (this: unknown, input: unknown, options: ToolExecutionOptions) {
        return streamTracked(manager, callOf(input, options), () => execute.call(this, input, options) as AsyncIterable<unknown>, onWarning);
      }
    : function (this: unknown, input: unknown, options: ToolExecutionOptions) {
        return runTracked(manager, callOf(input, options), () => execute.call(this, input, options), { onWarning });
      };
  return { ...tool, execute: tracked } as Tool;
}

/** A tool has an input schema; a tool set is a record of tools (one of which may be named `inputSchema`). */
function isTool(value: Tool | ToolSet): value is Tool {
  const schema = (value as { inputSchema?: unknown }).inputSchema;
  if (typeof schema === 'function') return true;
  return typeof schema === 'object' && schema !== null && !('inputSchema' in schema);
}

function isAsyncGeneratorFunction(value: unknown): boolean {
  return Object.prototype.toString.call(value) === '[object AsyncGeneratorFunction]';
}
