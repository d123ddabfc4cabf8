import type { ApplyPatchOperation, ApplyPatchResult, ApplyPatchTool, Editor, EditorInvocationContext } from '@openai/agents';
import type { CheckpointManager } from '../../checkpoint-manager.js';
import { runTracked } from '../tracked-call.js';

export interface TrackEditorOptions {
  /**
   * The files an operation writes, backed up before the editor applies it.
   * Relative paths resolve against the project root, so an editor that
   * resolves them against another directory needs this.
   * @default the operation's `path`, and `moveTo` for a move
   */
  paths?: (operation: ApplyPatchOperation) => string | readonly string[] | undefined;
  /**
   * The name recorded with each write.
   * @default "apply_patch"
   */
  tool?: string;
}

/**
 * An apply_patch `Editor` that backs up each file before the wrapped editor
 * creates, updates, moves or deletes it, and records what it wrote. An
 * operation whose files cannot be backed up is not applied: it fails with
 * the reason, which the model sees as the call's output.
 *
 * The SDK does not tell an editor which call it serves; `trackApplyPatchTool`
 * records the call id too.
 *
 * @example
 * const tool = applyPatchTool({ editor: trackEditor(manager, new WorkspaceEditor(root)) });
 */
export function trackEditor(manager: CheckpointManager, editor: Editor, options: TrackEditorOptions = {}): Editor {
  return editorWithCallIds(manager, editor, options, () => undefined);
}

/**
 * An apply_patch tool whose editor backs up each file first (see
 * `trackEditor`), recording each write with the apply_patch call's id.
 *
 * @example
 * const agent = new Agent({ name: 'Coder', tools: [trackApplyPatchTool(manager, applyPatchTool({ editor }))] });
 */
export function trackApplyPatchTool(manager: CheckpointManager, tool: ApplyPatchTool, options: Omit<TrackEditorOptions, 'tool'> = {}): ApplyPatchTool {
  // The runner asks needsApproval about each operation, with its call id, just before the editor applies that same operation object.
  const callIds = new WeakMap<ApplyPatchOperation, string>();
  return {
    ...tool,
    needsApproval: async (runContext, operation, callId) => {
      if (callId !== undefined) callIds.set(operation, callId);
      return tool.needsApproval(runContext, operation, callId);
    },
    editor: editorWithCallIds(manager, tool.editor, { ...options, tool: tool.name }, (operation) => callIds.get(operation)),
  };
}

function editorWithCallIds(manager: CheckpointManager, editor: Editor, options: TrackEditorOptions, callIdOf: (operation: ApplyPatchOperation) => string | undefined): Editor {
  const tool = options.tool ?? 'apply_patch';
  const pathsOf = options.paths ?? defaultPaths;
  const apply = <Operation extends ApplyPatchOperation>(operation: Operation, run: () => Promise<ApplyPatchResult | void>) => {
    const selected = pathsOf(operation);
    const paths = selected === undefined ? [] : typeof selected === 'string' ? [selected] : [...selected];
    return runTracked<ApplyPatchResult | void>(manager, { tool, toolCallId: callIdOf(operation), paths }, run, (reason) => ({ status: 'failed', output: reason }));
  };
  return {
    createFile: (operation, context?: EditorInvocationContext) => apply(operation, () => editor.createFile(operation, context)),
    updateFile: (operation, context?: EditorInvocationContext) => apply(operation, () => editor.updateFile(operation, context)),
    deleteFile: (operation, context?: EditorInvocationContext) => apply(operation, () => editor.deleteFile(operation, context)),
  };
}

function defaultPaths(operation: ApplyPatchOperation): string[] {
  return operation.type === 'update_file' && operation.moveTo !== undefined ? [operation.path, operation.moveTo] : [operation.path];
}
