import type { ToolManager } from './manager-port.js';
import { describeLineCounts, describeLines, summarizeChange, type ChangeSummary } from './change-summary.js';
import { editInputSchema, parseToolInput, type EditInput } from './input-schemas.js';
import { withPathLock } from './path-lock.js';
import { replaceText } from './replace-text.js';
import { openTargetFile } from './target-file.js';
import { decodeTextFile, encodeTextFile, type TextContent } from './text-file.js';
import { maxContentBytesOf, type ToolCallContext } from './tool-context.js';
import { invalidToolInput, toolFailed } from './tool-errors.js';
import { writeTracked } from './tracked-write.js';

export interface EditResult extends ChangeSummary {
  /** `create`: an empty `old_string` created the file. `update`: text was replaced. */
  type: 'create' | 'update';
  /** Canonical absolute path of the file. */
  filePath: string;
  /** How many occurrences of `old_string` were replaced (0 when the file was created). */
  replacements: number;
  /** One line for the agent: what was done. */
  message: string;
}

/**
 * The `Edit` tool: replaces the one occurrence of `old_string` in
 * `file_path` with `new_string` (every occurrence with `replace_all`), after
 * backing the file up.
 *
 * - Line endings are kept: in a CRLF file, `\n` in the strings matches and is
 *   written as `\r\n` (see `replaceText`); a UTF-8 byte order mark is kept.
 * - Binary files and files that are not UTF-8 are refused, never mangled.
 * - An empty `old_string` creates a file that does not exist (with its
 *   directories), as Claude Code does; on an existing file it is an error.
 * - Fails with `TOOL_FAILED` when the file is missing, `old_string` is not
 *   found, or is found more than once without `replace_all` (saying how many
 *   times); the file is left as it was.
 *
 * @example
 * const result = await editFile(manager, { file_path: 'src/app.ts', old_string: 'port = 80', new_string: 'port = 8080' });
 * console.log(result.message); // "Updated src/app.ts: 1 replacement (+1 -1 lines)."
 */
export async function editFile(manager: ToolManager, input: EditInput, context: ToolCallContext = {}): Promise<EditResult> {
  const maxContentBytes = maxContentBytesOf(context);
  const edit = parseToolInput('Edit', editInputSchema, input, { maxContentBytes, textFields: ['old_string', 'new_string'] });
  if (edit.old_string === edit.new_string) {
    throw invalidToolInput('Edit', 'new_string', 'is the same as old_string, so there is nothing to change');
  }
  const filePath = manager.resolvePath(edit.file_path);
  return withPathLock(manager, filePath, async () => {
    const target = openTargetFile('Edit', filePath, maxContentBytes);
    try {
      let before: TextContent | undefined;
      let after: TextContent;
      let replacements = 0;
      if (target.existing === undefined) {
        if (edit.old_string !== '') {
          throw toolFailed('Edit', `${edit.file_path} does not exist. To create it, use Write (or Edit with an empty old_string).`, { path: filePath });
        }
        after = { text: edit.new_string, byteOrderMark: false };
      } else {
        if (edit.old_string === '') {
          throw toolFailed(
            'Edit',
            `old_string is empty, but ${edit.file_path} already exists. Give the exact text to replace, or use Write to replace the whole file.`,
            { path: filePath },
          );
        }
        before = decodeTextFile('Edit', edit.file_path, target.existing.bytes);
        const replaced = replaceText(before.text, edit.old_string, edit.new_string, edit.replace_all, edit.file_path);
        after = { text: replaced.text, byteOrderMark: before.byteOrderMark };
        replacements = replaced.count;
      }
      const bytes = encodeTextFile(after);
      await writeTracked(manager, { tool: 'Edit', target, bytes, toolCallId: context.toolCallId, onWarning: context.onWarning });
      const mark = after.byteOrderMark ? '\ufeff' : '';
      const summary = summarizeChange(filePath, before && { bytes: target.existing!.bytes, text: mark + before.text }, { bytes, text: mark + after.text });
      const type = target.existing === undefined ? 'create' : 'update';
      const message =
        type === 'create'
          ? `Created ${edit.file_path} (${describeLines(summary.linesAdded)}).`
          : `Updated ${edit.file_path}: ${replacements} ${replacements === 1 ? 'replacement' : 'replacements'} (${describeLineCounts(summary)}).`;
      return { type, filePath, replacements, message, ...summary };
    } finally {
      target.close();
    }
  });
}
