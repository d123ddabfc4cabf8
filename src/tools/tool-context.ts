import { defaultMaxContentBytes } from './input-schemas.js';
import type { WriteWarningHandler } from './tool-warnings.js';

/** Settings of the built-in tools. */
export interface ToolOptions {
  /**
   * Largest text a tool accepts in one input field (`content`, `old_string`,
   * `new_string`, `new_source`) and largest file Edit and NotebookEdit read,
   * in bytes of UTF-8. Larger input fails with `INVALID_TOOL_INPUT` naming the
   * field.
   * @default 10485760 (10 MiB)
   */
  maxContentBytes?: number;
  /**
   * Told when a tool wrote its file but the record of that write could not
   * be stored (the file was backed up before, so a rewind still restores
   * it). The tool's result is returned all the same.
   * @default a process warning (`process.emitWarning`, type `RewindableWarning`)
   */
  onWarning?: WriteWarningHandler;
}

/** Per-call context of a built-in tool. */
export interface ToolCallContext extends ToolOptions {
  /** The framework's id of this tool call, recorded with the write (see `recordWrite`). */
  toolCallId?: string;
}

export function maxContentBytesOf(context: ToolCallContext): number {
  return context.maxContentBytes ?? defaultMaxContentBytes;
}
