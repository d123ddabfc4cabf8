import { RewindableError, RewindableErrorCode } from '../errors.js';

/** Input that does not match a tool's schema: the message names the field, so an agent can fix its call. */
export function invalidToolInput(tool: string, field: string, problem: string): RewindableError {
  return new RewindableError(RewindableErrorCode.INVALID_TOOL_INPUT, `Invalid ${tool} input: ${field} ${problem}.`, { details: { tool, field } });
}

/** A tool that could not do what it was asked; the file was left as it was. */
export function toolFailed(tool: string, message: string, details: Record<string, unknown> = {}, cause?: unknown): RewindableError {
  return new RewindableError(RewindableErrorCode.TOOL_FAILED, `${tool} failed: ${message}`, { details: { tool, ...details }, cause });
}

/**
 * Unexpected filesystem failures (permissions, disk full) become TOOL_FAILED
 * with the cause attached; rewindable's own typed errors pass through.
 */
export function asToolError(tool: string, filePath: string, error: unknown): unknown {
  if (RewindableError.isInstance(error)) return error;
  const reason = error instanceof Error ? error.message : String(error);
  return toolFailed(tool, `could not write ${filePath}: ${reason}. The file was left as it was.`, { path: filePath }, error);
}
