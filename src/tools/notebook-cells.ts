import { randomBytes } from 'node:crypto';
import { isJsonObject, JsonNumber, type JsonObject, type JsonValue } from './notebook-json.js';
import { toolFailed } from './tool-errors.js';

/**
 * The cell operations of NotebookEdit on a parsed nbformat 4 notebook. Cells
 * are changed in place; a cell whose set of keys changes is rebuilt with its
 * keys sorted, as Jupyter writes them.
 */

export interface Notebook {
  root: JsonObject;
  cells: JsonValue[];
  /** nbformat 4.5 and later give every cell an `id`. */
  cellsHaveIds: boolean;
  /** `metadata.language_info.name`, else `metadata.kernelspec.language`, else `python`. */
  language: string;
}

export function asNotebook(root: JsonValue, filePath: string): Notebook {
  if (!isJsonObject(root) || !Array.isArray(root.cells)) {
    throw toolFailed('NotebookEdit', `${filePath} is JSON but not a Jupyter notebook (it has no "cells" list).`, { path: filePath });
  }
  const major = root.nbformat instanceof JsonNumber ? Number(root.nbformat.text) : undefined;
  if (major !== 4) {
    throw toolFailed('NotebookEdit', `${filePath} is an nbformat ${major ?? 'unknown'} notebook; only nbformat 4 is supported. Convert it with \`jupyter nbconvert --to notebook\` first.`, {
      path: filePath,
    });
  }
  const minor = root.nbformat_minor instanceof JsonNumber ? Number(root.nbformat_minor.text) : 0;
  const metadata = isJsonObject(root.metadata) ? root.metadata : {};
  const languageInfo = isJsonObject(metadata.language_info) ? metadata.language_info.name : undefined;
  const kernelLanguage = isJsonObject(metadata.kernelspec) ? metadata.kernelspec.language : undefined;
  const language = typeof languageInfo === 'string' ? languageInfo : typeof kernelLanguage === 'string' ? kernelLanguage : 'python';
  return { root, cells: root.cells, cellsHaveIds: minor >= 5, language };
}

/**
 * Index of the cell `cellId` names: the cell with that `id`, else, for the
 * `cell-N` form, the N-th cell (from 0). `allowEnd` accepts `cell-<count>`,
 * one past the last cell (Claude Code appends a cell for it).
 */
export function findCell(notebook: Notebook, cellId: string, filePath: string, allowEnd = false): number {
  const byId = notebook.cells.findIndex((cell) => isJsonObject(cell) && cell.id === cellId);
  if (byId !== -1) return byId;
  const indexForm = /^cell-(\d+)$/.exec(cellId);
  const count = notebook.cells.length;
  if (indexForm !== null) {
    const index = Number(indexForm[1]);
    if (index < count || (allowEnd && index === count)) return index;
    throw toolFailed(
      'NotebookEdit',
      `${filePath} has no cell ${cellId}: it has ${count} ${count === 1 ? 'cell' : 'cells'}${count > 0 ? ` (cell-0 to cell-${count - 1})` : ''}.`,
      { path: filePath, cellId },
    );
  }
  const ids = notebook.cells.flatMap((cell) => (isJsonObject(cell) && typeof cell.id === 'string' ? [cell.id] : []));
  throw toolFailed(
    'NotebookEdit',
    `${filePath} has no cell with id "${cellId}". ` +
      (ids.length > 0 ? `Its cell ids are: ${ids.slice(0, 20).join(', ')}${ids.length > 20 ? ' ...' : ''}.` : 'Its cells have no ids; address them as cell-0, cell-1 ...'),
    { path: filePath, cellId },
  );
}

/** The cell at `index` as an object with a `cell_type`, or a clear error. */
export function cellAt(notebook: Notebook, index: number, filePath: string): JsonObject {
  const cell = notebook.cells[index];
  if (!isJsonObject(cell) || typeof cell.cell_type !== 'string') {
    throw toolFailed('NotebookEdit', `cell-${index} of ${filePath} is malformed (it has no cell_type); fix the notebook in Jupyter first.`, { path: filePath });
  }
  return cell;
}

/** Replaces the cell's source; a code cell's outputs and execution count are reset, since they belong to the old code. */
export function replaceCellSource(cell: JsonObject, source: string, cellType: 'code' | 'markdown' | undefined): JsonObject {
  const changed = cellType !== undefined && cellType !== cell.cell_type ? convertCell(cell, cellType) : cell;
  changed.source = sourceLines(source);
  if (changed.cell_type === 'code') {
    changed.execution_count = null;
    changed.outputs = [];
  }
  return changed;
}

export function newCell(notebook: Notebook, source: string, cellType: 'code' | 'markdown'): JsonObject {
  const cell: JsonObject = { cell_type: cellType, metadata: {}, source: sourceLines(source) };
  if (notebook.cellsHaveIds) cell.id = unusedCellId(notebook);
  if (cellType === 'code') Object.assign(cell, { execution_count: null, outputs: [] });
  return sortKeys(cell);
}

/** The name a result gives a cell: its id, or its `cell-N` index form. */
export function cellName(cell: JsonObject, index: number): string {
  return typeof cell.id === 'string' ? cell.id : `cell-${index}`;
}

/**
 * Source as Jupyter stores it: a list of lines, each keeping its line break.
 * The breaks are those of Python's `str.splitlines`, which nbformat uses.
 */
export function sourceLines(source: string): string[] {
  // eslint-disable-next-line no-control-regex -- \x1c-\x1e (file, group, record separators) are line breaks to Python.
  return source.match(/[^\n\r\v\f\x1c-\x1e\x85\u2028\u2029]*(?:\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029])|[^\n\r\v\f\x1c-\x1e\x85\u2028\u2029]+$/g) ?? [];
}

/** A code cell has outputs and an execution count and no attachments; markdown the reverse (nbformat 4 schema). */
function convertCell(cell: JsonObject, cellType: 'code' | 'markdown'): JsonObject {
  const converted: JsonObject = { ...cell, cell_type: cellType };
  if (cellType === 'code') {
    delete converted.attachments;
    Object.assign(converted, { execution_count: null, outputs: [] });
  } else {
    delete converted.outputs;
    delete converted.execution_count;
  }
  return sortKeys(converted);
}

function sortKeys(object: JsonObject): JsonObject {
  return Object.fromEntries(Object.keys(object).sort().map((key) => [key, object[key]!])) as JsonObject;
}

/** Jupyter's own form: 8 hex characters, unique in the notebook. */
function unusedCellId(notebook: Notebook): string {
  const taken = new Set(notebook.cells.map((cell) => (isJsonObject(cell) ? cell.id : undefined)));
  for (;;) {
    const id = randomBytes(4).toString('hex');
    if (!taken.has(id)) return id;
  }
}
