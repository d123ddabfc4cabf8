import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { editNotebook } from '../../src/tools/index.js';
import { failsWithoutChanges, toolSession } from './tool-session.js';

/** Notebooks written by nbformat itself (see test/fixtures/notebooks/generate.py), and nbformat's own results of the same edits. */
const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/notebooks');
const fixture = (name: string) => fs.readFileSync(path.join(fixtures, name));
const parsed = (bytes: Buffer) => JSON.parse(bytes.toString()) as { nbformat_minor: number; cells: Array<Record<string, unknown>> };

async function notebookSession() {
  return toolSession({ 'analysis.ipynb': fixture('analysis.ipynb'), 'legacy.ipynb': fixture('legacy-4.4.ipynb') });
}

describe('NotebookEdit { notebook_path, cell_id, new_source, cell_type, edit_mode }', () => {
  it('replaces a code cell: source as lines, outputs and execution count cleared, byte for byte what Jupyter saves', async () => {
    const { project, manager, turn } = await notebookSession();
    const result = await manager.tools.notebookEdit({
      notebook_path: 'analysis.ipynb',
      cell_id: '9c0d1e2f',
      new_source: "df = pd.read_csv('sales.csv', parse_dates=['day'])\ndf.tail(3)\n",
    });

    expect(project.read('analysis.ipynb').toString()).toBe(fixture('analysis.replace-9c0d1e2f.ipynb').toString());
    expect(result).toEqual({
      notebookPath: project.file('analysis.ipynb'),
      editMode: 'replace',
      cellId: '9c0d1e2f',
      cellType: 'code',
      language: 'python',
      cellCount: 7,
      message: 'Replaced code cell 9c0d1e2f in analysis.ipynb (7 cells now).',
    });
    await manager.rewindFiles(turn);
    expect(project.read('analysis.ipynb').equals(fixture('analysis.ipynb'))).toBe(true);
  });

  it('deletes a cell, leaving every other byte (images, floats, non-ASCII text) as it was', async () => {
    const { project, manager } = await notebookSession();
    const result = await editNotebook(manager, { notebook_path: 'analysis.ipynb', cell_id: '1c2d3e4f', new_source: '', edit_mode: 'delete' });
    expect(project.read('analysis.ipynb').toString()).toBe(fixture('analysis.delete-1c2d3e4f.ipynb').toString());
    expect(result).toMatchObject({ editMode: 'delete', cellId: '1c2d3e4f', cellType: 'code', cellCount: 6 });
  });

  it('inserts after a cell named cell-N in a notebook without ids (nbformat 4.4), giving the new cell no id', async () => {
    const { project, manager } = await notebookSession();
    const result = await manager.tools.notebookEdit({
      notebook_path: 'legacy.ipynb',
      cell_id: 'cell-2',
      edit_mode: 'insert',
      cell_type: 'markdown',
      new_source: '## Sum of x\nComputed below.',
    });
    expect(project.read('legacy.ipynb').toString()).toBe(fixture('legacy-4.4.insert-after-cell-2.ipynb').toString());
    expect(result).toMatchObject({ editMode: 'insert', cellId: 'cell-3', cellType: 'markdown', cellCount: 5 });
  });

  it('changes a cell type on replace (code to markdown drops outputs and execution count)', async () => {
    const { project, manager } = await notebookSession();
    await manager.tools.notebookEdit({ notebook_path: 'legacy.ipynb', cell_id: 'cell-1', cell_type: 'markdown', new_source: 'Was code, now *markdown*.' });
    expect(project.read('legacy.ipynb').toString()).toBe(fixture('legacy-4.4.cell-1-to-markdown.ipynb').toString());
  });

  it('changes markdown to code with empty outputs and no execution count', async () => {
    const { project, manager } = await notebookSession();
    await manager.tools.notebookEdit({ notebook_path: 'analysis.ipynb', cell_id: 'a1b2c3d4', cell_type: 'code', new_source: 'print(1)' });
    const cell = parsed(project.read('analysis.ipynb')).cells[0]!;
    expect(cell).toEqual({ cell_type: 'code', execution_count: null, id: 'a1b2c3d4', metadata: {}, outputs: [], source: ['print(1)'] });
    expect(Object.keys(cell)).toEqual(['cell_type', 'execution_count', 'id', 'metadata', 'outputs', 'source']); // sorted, as Jupyter writes keys
  });

  it('inserts at the start when cell_id is absent; in nbformat 4.5 the new cell gets a fresh Jupyter-style id', async () => {
    const { project, manager } = await notebookSession();
    const result = await manager.tools.notebookEdit({ notebook_path: 'analysis.ipynb', edit_mode: 'insert', cell_type: 'code', new_source: '%load_ext autoreload\n%autoreload 2' });
    const notebook = parsed(project.read('analysis.ipynb'));
    expect(notebook.cells).toHaveLength(8);
    const first = notebook.cells[0]!;
    expect(first).toEqual({ cell_type: 'code', execution_count: null, id: result.cellId, metadata: {}, outputs: [], source: ['%load_ext autoreload\n', '%autoreload 2'] });
    expect(result.cellId).toMatch(/^[0-9a-f]{8}$/);
    expect(new Set(notebook.cells.map((cell) => cell.id)).size).toBe(8);
    expect(project.read('analysis.ipynb').toString().endsWith('}\n')).toBe(true);
  });

  it('addresses cells by cell-N in a notebook with ids too, and appends for cell-<count> on replace', async () => {
    const { project, manager } = await notebookSession();
    await manager.tools.notebookEdit({ notebook_path: 'analysis.ipynb', cell_id: 'cell-6', new_source: '## The end' });
    const appended = await manager.tools.notebookEdit({ notebook_path: 'legacy.ipynb', cell_id: 'cell-4', new_source: 'x.mean()' });
    expect(parsed(project.read('analysis.ipynb')).cells[6]).toMatchObject({ id: '5a6b7c8d', cell_type: 'markdown', source: ['## The end'] });
    expect(appended).toMatchObject({ editMode: 'insert', cellId: 'cell-4', cellType: 'code', cellCount: 5 });
    expect(parsed(project.read('legacy.ipynb')).cells[4]).toEqual({ cell_type: 'code', execution_count: null, metadata: {}, outputs: [], source: ['x.mean()'] });
  });

  it('splits source into lines where Jupyter does (\\n, \\r\\n, \\r ...), keeping each break', async () => {
    const { project, manager } = await notebookSession();
    await manager.tools.notebookEdit({ notebook_path: 'legacy.ipynb', cell_id: 'cell-0', new_source: 'a\nb\r\nc\rd\n\n' });
    expect(parsed(project.read('legacy.ipynb')).cells[0]!.source).toEqual(['a\n', 'b\r\n', 'c\r', 'd\n', '\n']);
    await manager.tools.notebookEdit({ notebook_path: 'legacy.ipynb', cell_id: 'cell-0', new_source: '' });
    expect(parsed(project.read('legacy.ipynb')).cells[0]!.source).toEqual([]);
  });

  it('keeps CRLF line breaks and a byte order mark of the notebook file', async () => {
    const crlf = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(fixture('legacy-4.4.ipynb').toString().replaceAll('\n', '\r\n'))]);
    const { project, manager } = await toolSession({ 'win.ipynb': crlf });
    await manager.tools.notebookEdit({ notebook_path: 'win.ipynb', cell_id: 'cell-1', cell_type: 'markdown', new_source: 'Was code, now *markdown*.' });
    const expected = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(fixture('legacy-4.4.cell-1-to-markdown.ipynb').toString().replaceAll('\n', '\r\n'))]);
    expect(project.read('win.ipynb').equals(expected)).toBe(true);
  });
});

describe('NotebookEdit failures leave the notebook as it was', () => {
  it('a missing cell id lists the ids there are; a cell-N past the end says how many cells there are', async () => {
    const { project, manager } = await notebookSession();
    const missingId = await failsWithoutChanges(project, () => manager.tools.notebookEdit({ notebook_path: 'analysis.ipynb', cell_id: 'deadbeef', new_source: 'x' }));
    expect(missingId).toMatchObject({ code: 'TOOL_FAILED', message: expect.stringContaining('has no cell with id "deadbeef". Its cell ids are: a1b2c3d4, 5e6f7a8b') });
    const pastEnd = await failsWithoutChanges(project, () => manager.tools.notebookEdit({ notebook_path: 'legacy.ipynb', cell_id: 'cell-9', new_source: 'x', edit_mode: 'delete' }));
    expect(pastEnd).toMatchObject({ code: 'TOOL_FAILED', message: expect.stringContaining('has no cell cell-9: it has 4 cells (cell-0 to cell-3)') });
    const noIds = await failsWithoutChanges(project, () => manager.tools.notebookEdit({ notebook_path: 'legacy.ipynb', cell_id: 'abc', new_source: 'x' }));
    expect(noIds).toMatchObject({ message: expect.stringContaining('Its cells have no ids; address them as cell-0, cell-1') });
  });

  it('refuses bad JSON, JSON that is not a notebook, nbformat 3, and a missing notebook', async () => {
    const { project, manager } = await toolSession({
      'broken.ipynb': '{ "cells": [ {"cell_type": "code", ',
      'config.ipynb': '{"name": "not a notebook"}\n',
      'list.ipynb': '[1, 2, 3]\n',
      'old.ipynb': JSON.stringify({ nbformat: 3, nbformat_minor: 0, metadata: {}, worksheets: [], cells: [] }),
    });
    const call = (notebook_path: string) => () => manager.tools.notebookEdit({ notebook_path, cell_id: 'cell-0', new_source: 'x' });
    expect(await failsWithoutChanges(project, call('broken.ipynb'))).toMatchObject({ code: 'TOOL_FAILED', message: expect.stringContaining('broken.ipynb is not valid JSON') });
    expect(await failsWithoutChanges(project, call('config.ipynb'))).toMatchObject({ code: 'TOOL_FAILED', message: expect.stringContaining('not a Jupyter notebook') });
    expect(await failsWithoutChanges(project, call('list.ipynb'))).toMatchObject({ code: 'TOOL_FAILED', message: expect.stringContaining('not a Jupyter notebook') });
    expect(await failsWithoutChanges(project, call('old.ipynb'))).toMatchObject({ code: 'TOOL_FAILED', message: expect.stringContaining('nbformat 3 notebook; only nbformat 4') });
    expect(await failsWithoutChanges(project, call('missing.ipynb'))).toMatchObject({ code: 'TOOL_FAILED', message: expect.stringContaining('missing.ipynb does not exist') });
  });

  it('refuses a path that is not .ipynb, insert without cell_type, and replace or delete without cell_id, naming the field', async () => {
    const { project, manager } = await notebookSession();
    const cases: Array<[Parameters<typeof manager.tools.notebookEdit>[0], string]> = [
      [{ notebook_path: 'analysis.json', cell_id: 'cell-0', new_source: 'x' }, 'notebook_path'],
      [{ notebook_path: 'analysis.ipynb', edit_mode: 'insert', new_source: 'x' }, 'cell_type'],
      [{ notebook_path: 'analysis.ipynb', new_source: 'x' }, 'cell_id'],
      [{ notebook_path: 'analysis.ipynb', edit_mode: 'delete', new_source: '' }, 'cell_id'],
    ];
    for (const [input, field] of cases) {
      const error = await failsWithoutChanges(project, () => manager.tools.notebookEdit(input));
      expect(error).toMatchObject({ code: 'INVALID_TOOL_INPUT', details: { tool: 'NotebookEdit', field } });
    }
  });
});
