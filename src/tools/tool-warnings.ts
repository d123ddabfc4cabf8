/** The call whose writes are recorded. */
export interface RecordedCall {
  /** The tool's name, recorded with each write. */
  tool: string;
  /** The framework's id of this tool call. */
  toolCallId: string | undefined;
}

/**
 * A tool call that ran, whose write rewindable could not record (the store
 * failed once the files were written). Its files were backed up before the
 * call, so a rewind still restores them; what is missing is the record that
 * tells this write from other people's edits, and its tool call id.
 */
export interface WriteNotRecordedWarning {
  code: 'write-not-recorded';
  /** What happened and what it means for a rewind. */
  message: string;
  /** The tool that ran. */
  tool: string;
  /** The framework's id of the call, when it gave one. */
  toolCallId?: string;
  /** The files whose write is not recorded (canonical absolute paths). */
  files: string[];
  /** Why the record could not be stored. */
  cause: unknown;
}

/** Told when a tool call ran but its write could not be recorded. */
export type WriteWarningHandler = (warning: WriteNotRecordedWarning) => void;

/** The warning for a call that ran, whose write to `files` could not be recorded for `cause`. */
export function writeNotRecorded(call: RecordedCall, files: readonly string[], cause: unknown): WriteNotRecordedWarning {
  const why = (cause instanceof Error ? cause.message : String(cause)).replace(/\.?$/, '.');
  return {
    code: 'write-not-recorded',
    message:
      `rewindable could not record what ${call.tool} wrote to ${files.length > 0 ? files.join(', ') : 'its files'}, so a dry run may report that write as a conflict and no rewind names its tool call: ${why} ` +
      'The call itself ran and is reported as it is; its files were backed up before it, so a rewind still restores them.',
    tool: call.tool,
    ...(call.toolCallId !== undefined ? { toolCallId: call.toolCallId } : {}),
    files: [...files],
    cause,
  };
}

/**
 * Hands the warning to `onWarning`, else to `process.emitWarning`: the call
 * ran, so its outcome must stay as it is, yet a missing record is never
 * dropped without a word.
 */
export function reportWarning(onWarning: WriteWarningHandler | undefined, warning: WriteNotRecordedWarning): void {
  if (onWarning !== undefined) onWarning(warning);
  else process.emitWarning(warning.message, { type: 'RewindableWarning', code: 'REWINDABLE_WRITE_NOT_RECORDED' });
}
