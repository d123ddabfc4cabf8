import type { ApplyPatchOperation, ApplyPatchResult, ApplyPatchTool, Editor, EditorInvocationContext } from '@openai/agents';
import type { CheckpointManager } from '../../checkpoint-manager.js';
import { recordCall } from '../../tools/record-call.js';
import type { WriteWarningHandler } from '../../tools/tool-warnings.js';
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
  /**
   * Told when an operation was applied but the record of what it wrote could
   * not be stored (its files were backed up before, so a rewind still
   * restores them). The model gets the operation's result all the same.
   * @default a process warning (`process.emitWarning`, type `RewindableWarning`)
   */
  onWarning?: WriteWarningHandler;
}

/**
 * An apply_patch `Editor` that backs up each file before the wrapped editor
 * creates, updates, moves or deletes it, and records what it wrote. An
 * operation whose files cannot be backed up is not applied: it fails with
 * the reason, which the model sees as the call's output.
 *
 * The SDK does not tell an editor which call it serves, so these writes are
 * recorded without a call id; `trackApplyPatchTool` records it too.
 *
 * @example
 * const tool = applyPatchTool({ editor: trackEditor(manager, new WorkspaceEditor(root)) });
 */
export function trackEditor(manager: CheckpointManager, editor: Editor, options: TrackEditorOptions = {}): Editor {
  const tool = options.tool ?? 'apply_patch';
  return trackedEditor(manager, editor, { ...options, tool }, (_operation, _context, files) => recordCall(manager, { tool, toolCallId: undefined }, files, options.onWarning));
}

/**
 * An apply_patch tool whose editor backs up each file first (see
 * `trackEditor`), recording each write with the apply_patch call's id, also
 * for a call approved in a run resumed from a serialized `RunState`.
 *
 * @example
 * const agent = new Agent({ name: 'Coder', tools: [trackApplyPatchTool(manager, applyPatchTool({ editor }))] });
 */
export function trackApplyPatchTool(manager: CheckpointManager, tool: ApplyPatchTool, options: Omit<TrackEditorOptions, 'tool'> = {}): ApplyPatchTool {
  // The editor is not told which call it serves. Right after it, the runner hands the call's output, with the call
  // id from the run state itself, to the tool's customDataExtractor: the write is recorded there. (The call id
  // needsApproval is given does not do: a call approved in a run resumed from a serialized RunState is not asked
  // again, and its operation is another object.)
  const applied = new AppliedOperations();
  return {
    ...tool,
    editor: trackedEditor(manager, tool.editor, { ...options, tool: tool.name }, async (operation, context, files) => {
      // Called by hand, outside a run: no output step follows, and no call id is known.
      if (context === undefined) await recordCall(manager, { tool: tool.name, toolCallId: undefined }, files, options.onWarning);
      else applied.add(context.runContext, operation, files);
    }),
    customDataExtractor: async (context) => {
      const files = applied.take(context.runContext, context.operation);
      if (files !== undefined) await recordCall(manager, { tool: tool.name, toolCallId: context.rawItem.callId }, files, options.onWarning);
      return tool.customDataExtractor?.(context);
    },
  };
}

type RecordApplied = (operation: ApplyPatchOperation, context: EditorInvocationContext | undefined, files: readonly string[]) => Promise<void>;

function trackedEditor(manager: CheckpointManager, editor: Editor, options: TrackEditorOptions & { tool: string }, record: RecordApplied): Editor {
  const pathsOf = options.paths ?? defaultPaths;
  const apply = <Operation extends ApplyPatchOperation>(operation: Operation, context: EditorInvocationContext | undefined, run: () => Promise<ApplyPatchResult | void>) => {
    const selected = pathsOf(operation);
    const paths = selected === undefined ? [] : typeof selected === 'string' ? [selected] : [...selected];
    const call = { tool: options.tool, toolCallId: undefined, paths };
    return runTracked<ApplyPatchResult | void>(manager, call, run, {
      refuse: (reason) => ({ status: 'failed', output: reason }),
      record: (files) => record(operation, context, files),
    });
  };
  return {
    createFile: (operation, context?: EditorInvocationContext) => apply(operation, context, () => editor.createFile(operation, context)),
    updateFile: (operation, context?: EditorInvocationContext) => apply(operation, context, () => editor.updateFile(operation, context)),
    deleteFile: (operation, context?: EditorInvocationContext) => apply(operation, context, () => editor.deleteFile(operation, context)),
  };
}

/**
 * The files of operations the editor applied whose call id is not known yet,
 * by run (one run's operations are applied one after another, runs side by
 * side) and by operation, compared by content: the runner hands the output
 * step a copy of it.
 */
class AppliedOperations {
  private readonly byRun = new WeakMap<object, Map<string, Array<readonly string[]>>>();

  add(runContext: object, operation: ApplyPatchOperation, files: readonly string[]): void {
    const pending = this.pendingOf(runContext);
    const key = JSON.stringify(operation);
    pending.set(key, [...(pending.get(key) ?? []), files]);
  }

  take(runContext: object, operation: ApplyPatchOperation): readonly string[] | undefined {
    const pending = this.pendingOf(runContext);
    const key = JSON.stringify(operation);
    const [files, ...rest] = pending.get(key) ?? [];
    if (rest.length > 0) pending.set(key, rest);
    else pending.delete(key);
    return files;
  }

  private pendingOf(run: object): Map<string, Array<readonly string[]>> {
    let pending = this.byRun.get(run);
    if (pending === undefined) {
      pending = new Map();
      this.byRun.set(run, pending);
    }
    return pending;
  }
}

function defaultPaths(operation: ApplyPatchOperation): string[] {
  return operation.type === 'update_file' && operation.moveTo !== undefined ? [operation.path, operation.moveTo] : [operation.path];
}
