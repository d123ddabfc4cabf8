import { z } from 'zod';
import { invalidToolInput } from './tool-errors.js';

/**
 * Tool inputs with Claude Code's exact field names, so a model trained on
 * those tools can call these unchanged. Relative paths are allowed: they
 * resolve against the project root.
 */

function pathField() {
  return z
    .string({ error: (issue) => (issue.input === undefined ? 'is required' : 'must be a string') })
    .min(1, 'must not be empty')
    .refine((value) => !value.includes('\0'), 'must not contain a NUL byte');
}

function textField() {
  return z.string({ error: (issue) => (issue.input === undefined ? 'is required' : 'must be a string') });
}

/** `Write`: creates or overwrites a file with `content`. */
export const writeInputSchema = z.object({
  /** Path of the file to write (absolute, or relative to the project root). */
  file_path: pathField(),
  /** The file's complete new content. */
  content: textField(),
});

/** `Edit`: replaces `old_string` with `new_string` in a text file. */
export const editInputSchema = z.object({
  /** Path of the file to edit (absolute, or relative to the project root). */
  file_path: pathField(),
  /** The exact text to replace. Empty only to create a file that does not exist yet. */
  old_string: textField(),
  /** The text to put in its place. */
  new_string: textField(),
  /** Replace every occurrence instead of requiring exactly one. */
  replace_all: z.boolean({ error: 'must be true or false' }).optional().default(false),
});

/** `NotebookEdit`: replaces, inserts or deletes one cell of a Jupyter notebook. */
export const notebookEditInputSchema = z
  .object({
    /** Path of the `.ipynb` file (absolute, or relative to the project root). */
    notebook_path: pathField(),
    /** The cell to replace or delete, or to insert after: its `id`, or `cell-N` for the N-th cell (from 0). */
    cell_id: z.string({ error: 'must be a string' }).min(1, 'must not be empty').optional(),
    /** The cell's new source. */
    new_source: textField(),
    /** The cell's type: required to insert; when replacing, changes the type. */
    cell_type: z.enum(['code', 'markdown'], { error: 'must be "code" or "markdown"' }).optional(),
    /** What to do with the cell. */
    edit_mode: z.enum(['replace', 'insert', 'delete'], { error: 'must be "replace", "insert" or "delete"' }).optional().default('replace'),
  })
  .superRefine((input, context) => {
    if (input.edit_mode === 'insert' && input.cell_type === undefined) {
      context.addIssue({ code: 'custom', path: ['cell_type'], message: 'is required when edit_mode is "insert" ("code" or "markdown")' });
    }
    if (input.edit_mode !== 'insert' && input.cell_id === undefined) {
      context.addIssue({ code: 'custom', path: ['cell_id'], message: `is required when edit_mode is "${input.edit_mode}"` });
    }
  });

/** What a caller passes (optional fields may be left out). */
export type WriteInput = z.input<typeof writeInputSchema>;
export type EditInput = z.input<typeof editInputSchema>;
export type NotebookEditInput = z.input<typeof notebookEditInputSchema>;

/** Default for `maxContentBytes`: 10 MiB. */
export const defaultMaxContentBytes = 10 * 1024 * 1024;

/**
 * Validates `input` against `schema`, then every text field against the size
 * limit. Throws INVALID_TOOL_INPUT naming the first bad field.
 */
export function parseToolInput<Schema extends z.ZodType>(
  tool: string,
  schema: Schema,
  input: unknown,
  limits: { maxContentBytes: number; textFields: readonly string[] },
): z.output<Schema> {
  const parsed = schema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    if (issue.path.length === 0) throw invalidToolInput(tool, 'input', `must be an object with the tool's fields, got ${describe(input)}`);
    throw invalidToolInput(tool, issue.path.join('.'), issue.message);
  }
  const value = parsed.data as Record<string, unknown>;
  for (const field of limits.textFields) {
    const text = value[field];
    // Cheap bound first: a UTF-8 encoding takes at most 3 bytes per UTF-16 unit.
    if (typeof text !== 'string' || text.length * 3 <= limits.maxContentBytes) continue;
    const bytes = Buffer.byteLength(text, 'utf8');
    if (bytes > limits.maxContentBytes) {
      throw invalidToolInput(tool, field, `is ${bytes} bytes, over the limit of ${limits.maxContentBytes} bytes (maxContentBytes); write large files in smaller steps or raise the limit`);
    }
  }
  return parsed.data;
}

function describe(input: unknown): string {
  if (input === null) return 'null';
  if (Array.isArray(input)) return 'an array';
  return typeof input;
}
