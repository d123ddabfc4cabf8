import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { RewindableError } from '../errors.js';

/** Where an error result carries its code and details for programs: the text is for the model. */
export const errorMetaKey = 'rewindable/error';

/** The error a failed tool call reports, as `_meta[errorMetaKey]`. */
export interface ToolErrorMeta {
  /** A `RewindableErrorCode`, a `ToolRefusal` code, or `UNEXPECTED` for a failure that is neither. */
  code: string;
  message: string;
  details?: Record<string, unknown>;
}

/** A tool's answer: the text the model reads, and the same facts as `structuredContent` for programs. */
export function toolResult<Structured extends Record<string, unknown>>(text: string, structured: Structured): CallToolResult & { structuredContent: Structured } {
  return { content: [{ type: 'text', text }], structuredContent: structured };
}

/**
 * A failure as a tool error (`isError: true`), never a protocol error: the
 * model reads the code and the message, which says what to do next. It has
 * no `structuredContent`, which a client would check against the tool's
 * output schema.
 */
export function toolError(error: unknown): CallToolResult {
  const meta = errorMeta(error);
  return { isError: true, content: [{ type: 'text', text: `${meta.code}: ${meta.message}` }], _meta: { [errorMetaKey]: meta } };
}

/** A call the server itself turns down, before the library is asked: its code is the server's own (see docs/mcp.md). */
export class ToolRefusal extends Error {
  constructor(
    readonly code: 'PREVIEW_REQUIRED' | 'PREVIEW_STALE' | 'NOT_AN_UNDO_CHECKPOINT',
    message: string,
  ) {
    super(message);
    this.name = 'ToolRefusal';
  }
}

export function errorMeta(error: unknown): ToolErrorMeta {
  if (error instanceof ToolRefusal) return { code: error.code, message: error.message };
  if (RewindableError.isInstance(error)) {
    const details = error.details !== undefined && Object.keys(error.details).length > 0 ? { details: { ...error.details } } : {};
    return { code: error.code, message: error.message, ...details };
  }
  return { code: 'UNEXPECTED', message: `unexpected failure: ${error instanceof Error ? error.message : String(error)}` };
}

/** Runs a tool's work, turning any failure into a tool error. */
export async function answer(work: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await work();
  } catch (error) {
    return toolError(error);
  }
}
