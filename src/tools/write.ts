import type { ToolManager } from './manager-port.js';
import { describeLineCounts, describeLines, summarizeChange, type ChangeSummary } from './change-summary.js';
import { parseToolInput, writeInputSchema, type WriteInput } from './input-schemas.js';
import { withPathLock } from './path-lock.js';
import { openTargetFile } from './target-file.js';
import { maxContentBytesOf, type ToolCallContext } from './tool-context.js';
import { writeTracked } from './tracked-write.js';

export interface WriteResult extends ChangeSummary {
  /** `create`: the file did not exist. `update`: it was overwritten. */
  type: 'create' | 'update';
  /** Canonical absolute path of the file. */
  filePath: string;
  /** One line for the agent: what was done. */
  message: string;
}

/**
 * The `Write` tool: creates `file_path` with `content`, or overwrites it,
 * after backing it up. Missing parent directories (inside the project) are
 * created. `content` is written exactly as given (UTF-8, no byte order mark,
 * line endings untouched). An existing file keeps its mode; a new file gets
 * the mode any new file gets (0o666 minus the process umask).
 *
 * @example
 * await manager.checkpoint(userMessage.uuid);
 * const result = await writeFile(manager, { file_path: 'src/hello.ts', content: 'export {};\n' });
 * // result.type === 'create'
 */
export async function writeFile(manager: ToolManager, input: WriteInput, context: ToolCallContext = {}): Promise<WriteResult> {
  const maxContentBytes = maxContentBytesOf(context);
  const { file_path, content } = parseToolInput('Write', writeInputSchema, input, { maxContentBytes, textFields: ['content'] });
  const filePath = manager.resolvePath(file_path);
  return withPathLock(manager, filePath, async () => {
    const target = openTargetFile('Write', filePath, maxContentBytes);
    try {
      const bytes = Buffer.from(content, 'utf8');
      await writeTracked(manager, { tool: 'Write', target, bytes, toolCallId: context.toolCallId, onWarning: context.onWarning });
      const summary = summarizeChange(filePath, target.existing && { bytes: target.existing.bytes }, { bytes, text: content });
      const type = target.existing === undefined ? 'create' : 'update';
      const message =
        type === 'create' ? `Created ${file_path} (${describeLines(summary.linesAdded)}).` : `Updated ${file_path} (${describeLineCounts(summary)}).`;
      return { type, filePath, message, ...summary };
    } finally {
      target.close();
    }
  });
}
