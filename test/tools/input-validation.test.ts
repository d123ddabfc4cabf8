import { describe, expect, it } from 'vitest';
import { createTools, editInputSchema, notebookEditInputSchema, writeInputSchema } from '../../src/tools/index.js';
import { failsWithoutChanges, toolSession, trackedPaths } from './tool-session.js';

type AnyInput = never;

/** Malformed input: INVALID_TOOL_INPUT naming the field, nothing on disk changes, nothing is tracked. */
describe('malformed tool input', () => {
  const cases: Array<[tool: 'write' | 'edit' | 'notebookEdit', input: unknown, field: string, says: string]> = [
    ['write', { content: 'x' }, 'file_path', 'file_path is required'],
    ['write', { file_path: 42, content: 'x' }, 'file_path', 'file_path must be a string'],
    ['write', { file_path: '', content: 'x' }, 'file_path', 'file_path must not be empty'],
    ['write', { file_path: 'a\0b.txt', content: 'x' }, 'file_path', 'file_path must not contain a NUL byte'],
    ['write', { file_path: 'a.txt' }, 'content', 'content is required'],
    ['write', { file_path: 'a.txt', content: ['x'] }, 'content', 'content must be a string'],
    ['write', null, 'input', 'must be an object'],
    ['write', 'a.txt', 'input', 'must be an object'],
    ['edit', { file_path: 'a.txt', new_string: 'x' }, 'old_string', 'old_string is required'],
    ['edit', { file_path: 'a.txt', old_string: 'a', new_string: 7 }, 'new_string', 'new_string must be a string'],
    ['edit', { file_path: 'a.txt', old_string: 'a', new_string: 'b', replace_all: 'yes' }, 'replace_all', 'replace_all must be true or false'],
    ['notebookEdit', { cell_id: 'cell-0', new_source: 'x' }, 'notebook_path', 'notebook_path is required'],
    ['notebookEdit', { notebook_path: 'n.ipynb', cell_id: 'cell-0' }, 'new_source', 'new_source is required'],
    ['notebookEdit', { notebook_path: 'n.ipynb', cell_id: 'cell-0', new_source: 'x', edit_mode: 'append' }, 'edit_mode', 'edit_mode must be "replace", "insert" or "delete"'],
    ['notebookEdit', { notebook_path: 'n.ipynb', edit_mode: 'insert', cell_type: 'raw', new_source: 'x' }, 'cell_type', 'cell_type must be "code" or "markdown"'],
    ['notebookEdit', { notebook_path: 'n.ipynb', cell_id: '', new_source: 'x' }, 'cell_id', 'cell_id must not be empty'],
  ];

  it.each(cases)('%s %j fails naming %s', async (tool, input, field, says) => {
    const { project, manager } = await toolSession({ 'a.txt': 'a\n', 'n.ipynb': '{"cells": [], "nbformat": 4, "nbformat_minor": 5, "metadata": {}}\n' });
    const error = await failsWithoutChanges(project, () => manager.tools[tool](input as AnyInput));
    expect(error).toMatchObject({ name: 'RewindableError', code: 'INVALID_TOOL_INPUT', details: { field } });
    expect((error as Error).message).toContain(says);
    expect(trackedPaths(project)).toEqual([]);
  });

  it('refuses content over maxContentBytes, per call or as a default of createTools, naming the field', async () => {
    const { project, manager } = await toolSession({ 'a.txt': 'a\n' });
    const big = 'é'.repeat(600); // 1200 bytes of UTF-8
    const perCall = await failsWithoutChanges(project, () => manager.tools.write({ file_path: 'b.txt', content: big }, { maxContentBytes: 1000 }));
    expect(perCall).toMatchObject({ code: 'INVALID_TOOL_INPUT', details: { field: 'content' }, message: expect.stringContaining('content is 1200 bytes, over the limit of 1000 bytes') });

    const tools = createTools(manager, { maxContentBytes: 1000 });
    expect(await failsWithoutChanges(project, () => tools.edit({ file_path: 'a.txt', old_string: 'a', new_string: big }))).toMatchObject({ details: { field: 'new_string' } });
    expect(await failsWithoutChanges(project, () => tools.edit({ file_path: 'a.txt', old_string: big, new_string: 'a' }))).toMatchObject({ details: { field: 'old_string' } });
    expect(await failsWithoutChanges(project, () => tools.notebookEdit({ notebook_path: 'n.ipynb', edit_mode: 'insert', cell_type: 'code', new_source: big }))).toMatchObject({
      details: { field: 'new_source' },
    });
    await tools.write({ file_path: 'b.txt', content: big }, { maxContentBytes: 2000 }); // a call's own limit wins
    expect(project.read('b.txt').toString()).toBe(big);
  });

  it('refuses to read a file over maxContentBytes for Edit', async () => {
    const { project, manager } = await toolSession({ 'big.txt': 'x'.repeat(5000) });
    const error = await failsWithoutChanges(project, () => manager.tools.edit({ file_path: 'big.txt', old_string: 'xx', new_string: 'y', replace_all: true }, { maxContentBytes: 4096 }));
    expect(error).toMatchObject({ code: 'FILE_TOO_LARGE', message: expect.stringContaining('over the 4096-byte limit') });
  });

  it('exports the schemas with Claude Code field names and defaults', () => {
    expect(writeInputSchema.parse({ file_path: 'a', content: '' })).toEqual({ file_path: 'a', content: '' });
    expect(editInputSchema.parse({ file_path: 'a', old_string: 'x', new_string: 'y' })).toEqual({ file_path: 'a', old_string: 'x', new_string: 'y', replace_all: false });
    expect(notebookEditInputSchema.parse({ notebook_path: 'n.ipynb', cell_id: 'c', new_source: 's' })).toEqual({
      notebook_path: 'n.ipynb',
      cell_id: 'c',
      new_source: 's',
      edit_mode: 'replace',
    });
    expect(Object.keys(editInputSchema.shape)).toEqual(['file_path', 'old_string', 'new_string', 'replace_all']);
  });
});
