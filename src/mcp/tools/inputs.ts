import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

/**
 * Input fields several tools share. Ids are plain strings here, not
 * `z.uuid()`: one that is not a UUID reaches the library, whose INVALID_ID
 * error names it, rather than the SDK's generic validation message.
 */
export const sessionIdInput = z
  .string()
  .optional()
  .describe("The session's UUID, from list_sessions. Default: the project's most recently active session.");

export const checkpointIdInput = z.string().describe("The checkpoint's UUID (the id of the user message it was taken for), from list_checkpoints.");

export const pathsInput = z
  .array(z.string().min(1))
  .min(1)
  .optional()
  .describe('Only these tracked files: paths relative to the project root or absolute, directories (their tracked files), or globs such as "src/**/*.ts". Default: every tracked file.');

/** Listing and previews: nothing is written, and the same call answers the same while nothing else changes. */
export const readOnlyAnnotations: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

/** Rewinds write the project's files; calling one twice does not do the same as once (each has its own undo point). */
export const destructiveAnnotations: ToolAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false };
