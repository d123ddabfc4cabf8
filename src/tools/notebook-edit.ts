import path from 'node:path';
import type { ToolManager } from './manager-port.js';
import { notebookEditInputSchema, parseToolInput, type NotebookEditInput } from './input-schemas.js';
import { asNotebook, cellAt, cellName, findCell, newCell, replaceCellSource } from './notebook-cells.js';
import { parseJson, stringifyJson, type JsonObject, type JsonValue } from './notebook-json.js';
import { withPathLock } from './path-lock.js';
import { dominantLineEnding } from './replace-text.js';
import { openTargetFile } from './target-file.js';
import { decodeTextFile, encodeTextFile } from './text-file.js';
import { maxContentBytesOf, type ToolCallContext } from './tool-context.js';
import { invalidToolInput, toolFailed } from './tool-errors.js';
import { writeTracked } from './tracked-write.js';

export interface NotebookEditResult {
  /** Canonical absolute path of the notebook. */
  notebookPath: string;
  editMode: 'replace' | 'insert' | 'delete';
  /** The cell replaced, inserted or deleted: its `id`, or `cell-N` in a notebook without ids. */
  cellId: string;
  /** Its type (`raw` cells can be replaced or deleted too). */
  cellType: string;
  /** The notebook's kernel language (`python` when it does not say). */
  language: string;
  /** Cells in the notebook after the edit. */
  cellCount: number;
  /** One line for the agent: what was done. */
  message: string;
}

/**
 * The `NotebookEdit` tool on an nbformat 4 notebook (`.ipynb`), after backing
 * it up:
 * - `replace` (default): sets the source of the cell `cell_id` names (a code
 *   cell's outputs and execution count are cleared; `cell_type` changes its type);
 * - `insert`: adds a `cell_type` cell after `cell_id`, or first when it is absent;
 * - `delete`: removes the cell.
 *
 * Cells are named by `id`, or as `cell-N` (N-th cell from 0) in notebooks
 * without ids. New cells get an id when the notebook's nbformat is 4.5 or
 * later. The file is written as Jupyter writes it (1-space indented JSON,
 * trailing newline, sources as lists of lines) and everything the edit did
 * not touch keeps its exact text.
 *
 * @example
 * await editNotebook(manager, { notebook_path: 'analysis.ipynb', cell_id: 'cell-2', new_source: 'df.describe()' });
 * await editNotebook(manager, { notebook_path: 'analysis.ipynb', edit_mode: 'insert', cell_type: 'markdown', new_source: '## Results' });
 */
export async function editNotebook(manager: ToolManager, input: NotebookEditInput, context: ToolCallContext = {}): Promise<NotebookEditResult> {
  const maxContentBytes = maxContentBytesOf(context);
  const edit = parseToolInput('NotebookEdit', notebookEditInputSchema, input, { maxContentBytes, textFields: ['new_source'] });
  if (path.extname(edit.notebook_path).toLowerCase() !== '.ipynb') {
    throw invalidToolInput('NotebookEdit', 'notebook_path', 'must name a Jupyter notebook (a .ipynb file); use Edit for other files');
  }
  const notebookPath = manager.resolvePath(edit.notebook_path);
  const shownPath = edit.notebook_path;
  return withPathLock(manager, notebookPath, async () => {
    const target = openTargetFile('NotebookEdit', notebookPath, maxContentBytes);
    try {
      if (target.existing === undefined) {
        throw toolFailed('NotebookEdit', `${shownPath} does not exist. Create the notebook with Write first.`, { path: notebookPath });
      }
      const file = decodeTextFile('NotebookEdit', shownPath, target.existing.bytes);
      let root: JsonValue;
      try {
        root = parseJson(file.text);
      } catch (error) {
        throw toolFailed('NotebookEdit', `${shownPath} is not valid JSON (${(error as Error).message}), so it cannot be edited as a notebook.`, { path: notebookPath }, error);
      }
      const notebook = asNotebook(root, shownPath);
      let editMode = edit.edit_mode;
      let index: number;
      let cell: JsonObject;
      if (editMode === 'insert') {
        index = edit.cell_id === undefined ? 0 : findCell(notebook, edit.cell_id, shownPath) + 1;
      } else {
        index = findCell(notebook, edit.cell_id!, shownPath, editMode === 'replace');
        if (index === notebook.cells.length) editMode = 'insert'; // `cell-<count>`: append, as Claude Code does
      }
      if (editMode === 'insert') {
        cell = newCell(notebook, edit.new_source, edit.cell_type ?? 'code');
        notebook.cells.splice(index, 0, cell);
      } else if (editMode === 'delete') {
        cell = cellAt(notebook, index, shownPath);
        notebook.cells.splice(index, 1);
      } else {
        cell = replaceCellSource(cellAt(notebook, index, shownPath), edit.new_source, edit.cell_type);
        notebook.cells[index] = cell;
      }
      const ending = dominantLineEnding(file.text);
      const json = `${stringifyJson(notebook.root)}\n`;
      const bytes = encodeTextFile({ text: ending === '\n' ? json : json.replaceAll('\n', '\r\n'), byteOrderMark: file.byteOrderMark });
      await writeTracked(manager, { tool: 'NotebookEdit', target, bytes, toolCallId: context.toolCallId, onWarning: context.onWarning });
      const cellId = cellName(cell, index);
      const cellType = String(cell.cell_type);
      const done = editMode === 'insert' ? 'Inserted' : editMode === 'delete' ? 'Deleted' : 'Replaced';
      return {
        notebookPath,
        editMode,
        cellId,
        cellType,
        language: notebook.language,
        cellCount: notebook.cells.length,
        message: `${done} ${cellType} cell ${cellId} in ${shownPath} (${notebook.cells.length} cells now).`,
      };
    } finally {
      target.close();
    }
  });
}
