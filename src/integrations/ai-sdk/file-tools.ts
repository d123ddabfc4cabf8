import type { Tool } from 'ai';
import type { z } from 'zod';
import type { CheckpointManager } from '../../checkpoint-manager.js';
import { RewindableError, RewindableErrorCode } from '../../errors.js';
import { createTools, editInputSchema, notebookEditInputSchema, writeInputSchema } from '../../tools/index.js';
import type { EditResult, NotebookEditResult, ToolCallContext, ToolOptions, WriteResult } from '../../tools/index.js';
import { refusalError } from '../tracked-call.js';
import { markTracksItself } from './self-tracking.js';

/** What `execute` receives: the schemas' output, defaults filled in. */
export type WriteToolInput = z.output<typeof writeInputSchema>;
export type EditToolInput = z.output<typeof editInputSchema>;
export type NotebookEditToolInput = z.output<typeof notebookEditInputSchema>;

/** The model reads the tool's one-line message; the full result (line counts, patch) stays in the output for the UI. */
const messageForModel = ({ output }: { output: { message: string } }) => ({ type: 'text' as const, value: output.message });

/** The built-in tools' own failures: input that does not fit, text not found, a write that could not be made. */
const toolFailures: ReadonlySet<string> = new Set([RewindableErrorCode.INVALID_TOOL_INPUT, RewindableErrorCode.TOOL_FAILED]);

/**
 * An `execute` for a built-in tool. The tool backs its file up itself (from
 * the bytes it reads to edit), so any error of its other than its own
 * failures means the file could not be resolved or backed up, and nothing
 * was written: the model reads it as the refusal every adapter gives. (A
 * write it made whose record then failed is not an error: the tool returns
 * its result and tells `onWarning`.)
 */
function executeRefusing<Input, Result>(tool: string, pathOf: (input: Input) => string, run: (input: Input, context: ToolCallContext) => Promise<Result>) {
  return markTracksItself(async (input: Input, { toolCallId }: { toolCallId: string }): Promise<Result> => {
    try {
      return await run(input, { toolCallId });
    } catch (error) {
      if (RewindableError.isInstance(error) && toolFailures.has(error.code)) throw error;
      throw refusalError({ tool, paths: [pathOf(input)] }, error);
    }
  });
}

/**
 * An AI SDK tool for rewindable's `Write` (Claude Code's input: `file_path`,
 * `content`), backing the file up before it writes and recording the call's
 * id with the write.
 *
 * @example
 * const result = await generateText({ model, tools: { Write: writeTool(manager) }, prompt, stopWhen: stepCountIs(5) });
 */
export function writeTool(manager: CheckpointManager, options: ToolOptions = {}): Tool<WriteToolInput, WriteResult> {
  const tools = createTools(manager, options);
  return {
    description:
      'Create a file, or replace the whole content of an existing one. file_path is absolute or relative to the project root; missing parent directories are created. Prefer Edit to change part of an existing file.',
    inputSchema: writeInputSchema,
    execute: executeRefusing('Write', (input: WriteToolInput) => input.file_path, tools.write),
    toModelOutput: messageForModel,
  };
}

/**
 * An AI SDK tool for rewindable's `Edit` (`file_path`, `old_string`,
 * `new_string`, `replace_all`): exact string replacement that keeps line
 * endings and byte order marks, after backing the file up.
 *
 * @example
 * const tools = { Edit: editTool(manager) };
 */
export function editTool(manager: CheckpointManager, options: ToolOptions = {}): Tool<EditToolInput, EditResult> {
  const tools = createTools(manager, options);
  return {
    description:
      'Replace text in a file: old_string must match the file exactly (whitespace included) and only once, unless replace_all is true. An empty old_string creates a file that does not exist yet.',
    inputSchema: editInputSchema,
    execute: executeRefusing('Edit', (input: EditToolInput) => input.file_path, tools.edit),
    toModelOutput: messageForModel,
  };
}

/**
 * An AI SDK tool for rewindable's `NotebookEdit` (`notebook_path`,
 * `cell_id`, `new_source`, `cell_type`, `edit_mode`) on Jupyter notebooks,
 * after backing the notebook up.
 *
 * @example
 * const tools = { NotebookEdit: notebookEditTool(manager) };
 */
export function notebookEditTool(manager: CheckpointManager, options: ToolOptions = {}): Tool<NotebookEditToolInput, NotebookEditResult> {
  const tools = createTools(manager, options);
  return {
    description:
      'Change one cell of a Jupyter notebook (.ipynb): replace its source (default), insert a new cell after cell_id (first when cell_id is absent; cell_type required), or delete it. Cells are named by id, or cell-N for the N-th cell from 0.',
    inputSchema: notebookEditInputSchema,
    execute: executeRefusing('NotebookEdit', (input: NotebookEditToolInput) => input.notebook_path, tools.notebookEdit),
    toModelOutput: messageForModel,
  };
}

/**
 * The three file tools under the names models know from Claude Code:
 * `Write`, `Edit` and `NotebookEdit`. `options.onWarning` is told of a
 * write whose record could not be stored (the model gets the tool's result).
 *
 * @example
 * await checkpointUserMessage(manager, userMessage);
 * const result = await generateText({ model, tools: fileTools(manager), messages, stopWhen: stepCountIs(10) });
 */
export function fileTools(manager: CheckpointManager, options: ToolOptions = {}) {
  return { Write: writeTool(manager, options), Edit: editTool(manager, options), NotebookEdit: notebookEditTool(manager, options) };
}
