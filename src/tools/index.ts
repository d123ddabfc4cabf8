import type { ToolManager } from './manager-port.js';
import { editFile, type EditResult } from './edit.js';
import type { EditInput, NotebookEditInput, WriteInput } from './input-schemas.js';
import { editNotebook, type NotebookEditResult } from './notebook-edit.js';
import type { ToolCallContext, ToolOptions } from './tool-context.js';
import { trackTool, type ToolExecutor, type TrackToolOptions } from './wrap.js';
import { writeFile, type WriteResult } from './write.js';

export { editFile, type EditResult } from './edit.js';
export { editNotebook, type NotebookEditResult } from './notebook-edit.js';
export { writeFile, type WriteResult } from './write.js';
export { trackTool, type PathField, type PathSelector, type ToolExecutor, type TrackToolOptions } from './wrap.js';
export type { ChangeSummary } from './change-summary.js';
export type { ToolManager } from './manager-port.js';
export type { ToolCallContext, ToolOptions } from './tool-context.js';
export type { WriteNotRecordedWarning, WriteWarningHandler } from './tool-warnings.js';
export {
  defaultMaxContentBytes,
  editInputSchema,
  notebookEditInputSchema,
  writeInputSchema,
  type EditInput,
  type NotebookEditInput,
  type WriteInput,
} from './input-schemas.js';

/** The built-in tools and the wrapper, bound to one manager (`manager.tools`). */
export interface ManagerTools {
  /** The `Write` tool (see `writeFile`). */
  write(input: WriteInput, context?: ToolCallContext): Promise<WriteResult>;
  /** The `Edit` tool (see `editFile`). */
  edit(input: EditInput, context?: ToolCallContext): Promise<EditResult>;
  /** The `NotebookEdit` tool (see `editNotebook`). */
  notebookEdit(input: NotebookEditInput, context?: ToolCallContext): Promise<NotebookEditResult>;
  /** Tracks the files a custom executor writes (see `trackTool`). */
  wrap<Executor extends ToolExecutor>(executor: Executor, options: TrackToolOptions<Executor>): Executor;
}

/**
 * Binds the tools to `manager`; `defaults` apply to every call (a call's
 * own context wins). `manager.tools` is `createTools(manager)`.
 *
 * @example
 * const tools = createTools(manager, { maxContentBytes: 1024 * 1024 });
 * await tools.edit({ file_path: 'README.md', old_string: 'v1', new_string: 'v2' }, { toolCallId: call.id });
 */
export function createTools(manager: ToolManager, defaults: ToolOptions = {}): ManagerTools {
  const withDefaults = (context: ToolCallContext = {}): ToolCallContext => ({
    ...context,
    maxContentBytes: context.maxContentBytes ?? defaults.maxContentBytes,
    onWarning: context.onWarning ?? defaults.onWarning,
  });
  return {
    write: (input, context) => writeFile(manager, input, withDefaults(context)),
    edit: (input, context) => editFile(manager, input, withDefaults(context)),
    notebookEdit: (input, context) => editNotebook(manager, input, withDefaults(context)),
    wrap: (executor, options) => trackTool(manager, executor, { ...options, onWarning: options.onWarning ?? defaults.onWarning }),
  };
}
