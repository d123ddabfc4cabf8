import type { CheckpointManager } from '../../../src/index.js';
import type { FileSet } from './crash-scenario.js';

/**
 * The tool calls the tool crash test kills: each tool's first write into a
 * directory the session tracks nothing in yet (`fresh/` and `other/` exist,
 * `made/deep/` does not), then a second write next to one of them.
 */

const notebook = (source: string) => `${JSON.stringify({ cells: [{ cell_type: 'code', id: 'cell-1', metadata: {}, source, outputs: [], execution_count: null }], metadata: {}, nbformat: 4, nbformat_minor: 5 }, null, 1)}\n`;

export const toolCrashFiles: FileSet = {
  'fresh/untracked.txt': 'a file no tool touches\n',
  'other/existing.txt': 'old line\n',
  'notebooks/book.ipynb': notebook('print(1)'),
};

export async function toolCrashCalls(manager: CheckpointManager): Promise<void> {
  await manager.tools.write({ file_path: 'fresh/new.txt', content: 'written\n' });
  await manager.tools.edit({ file_path: 'other/existing.txt', old_string: 'old line', new_string: 'edited line' });
  await manager.tools.notebookEdit({ notebook_path: 'notebooks/book.ipynb', cell_id: 'cell-1', new_source: 'print(2)' });
  await manager.tools.write({ file_path: 'made/deep/created.txt', content: 'created\n' });
  await manager.tools.write({ file_path: 'fresh/second.txt', content: 'second\n' });
}
