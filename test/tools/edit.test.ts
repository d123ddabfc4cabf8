import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { editFile } from '../../src/tools/index.js';
import { failsWithoutChanges, toolSession, trackedPaths } from './tool-session.js';

const source = 'const port = 80;\nconst host = "localhost";\n\nlisten(host, port);\n';

describe('Edit { file_path, old_string, new_string, replace_all }', () => {
  it('replaces the one occurrence and reports a patch and line counts', async () => {
    const { project, manager, turn } = await toolSession({ 'server.ts': source });

    const result = await manager.tools.edit({ file_path: 'server.ts', old_string: 'const port = 80;', new_string: 'const port = 8080;\nconst tls = true;' });

    expect(project.read('server.ts').toString()).toBe('const port = 8080;\nconst tls = true;\nconst host = "localhost";\n\nlisten(host, port);\n');
    expect(result).toEqual({
      type: 'update',
      filePath: project.file('server.ts'),
      replacements: 1,
      linesAdded: 2,
      linesRemoved: 1,
      structuredPatch: [
        {
          oldStart: 1,
          oldLines: 4,
          newStart: 1,
          newLines: 5,
          lines: ['-const port = 80;', '+const port = 8080;', '+const tls = true;', ' const host = "localhost";', ' ', ' listen(host, port);'],
        },
      ],
      message: 'Updated server.ts: 1 replacement (+2 -1 lines).',
    });
    await manager.rewindFiles(turn);
    expect(project.read('server.ts').toString()).toBe(source);
  });

  it('replaces every occurrence with replace_all, and says how many', async () => {
    const { project, manager } = await toolSession({ 'a.txt': 'foo bar foo\nfoo\n' });
    const result = await editFile(manager, { file_path: 'a.txt', old_string: 'foo', new_string: 'baz', replace_all: true });
    expect(project.read('a.txt').toString()).toBe('baz bar baz\nbaz\n');
    expect(result).toMatchObject({ replacements: 3, message: 'Updated a.txt: 3 replacements (+2 -2 lines).' });
  });

  it('inserts new_string literally ($& and $1 are not patterns)', async () => {
    const { project, manager } = await toolSession({ 'a.txt': 'price: X\n' });
    await manager.tools.edit({ file_path: 'a.txt', old_string: 'X', new_string: "$& $1 $$ $'" });
    expect(project.read('a.txt').toString()).toBe("price: $& $1 $$ $'\n");
  });

  it('keeps the mode of the file', async () => {
    const { project, manager } = await toolSession();
    project.write('tool.sh', 'echo a\n', 0o700);
    await manager.tools.edit({ file_path: 'tool.sh', old_string: 'a', new_string: 'b' });
    expect(fs.statSync(project.file('tool.sh')).mode & 0o7777).toBe(0o700);
  });

  it('fails when old_string is not found, and leaves the file and the store alone', async () => {
    const { project, manager } = await toolSession({ 'server.ts': source });
    const error = await failsWithoutChanges(project, () => manager.tools.edit({ file_path: 'server.ts', old_string: 'const port = 81;', new_string: 'x' }));
    expect(error).toMatchObject({ code: 'TOOL_FAILED', message: expect.stringContaining('old_string was not found in server.ts') });
    expect(trackedPaths(project)).toEqual([]);
  });

  it('fails when old_string is found more than once without replace_all, and says how many times', async () => {
    const { project, manager } = await toolSession({ 'a.txt': 'x = 1\nx = 1\nx = 1\n' });
    const error = await failsWithoutChanges(project, () => manager.tools.edit({ file_path: 'a.txt', old_string: 'x = 1', new_string: 'x = 2' }));
    expect(error).toMatchObject({
      code: 'TOOL_FAILED',
      message: expect.stringContaining('old_string was found 3 times in a.txt'),
      details: expect.objectContaining({ occurrences: 3 }),
    });
    expect((error as Error).message).toContain('replace_all');
  });

  it('refuses old_string equal to new_string as invalid input', async () => {
    const { project, manager } = await toolSession({ 'a.txt': 'same\n' });
    const error = await failsWithoutChanges(project, () => manager.tools.edit({ file_path: 'a.txt', old_string: 'same', new_string: 'same' }));
    expect(error).toMatchObject({ code: 'INVALID_TOOL_INPUT', details: { tool: 'Edit', field: 'new_string' } });
  });

  it('fails for a missing file unless old_string is empty, which creates it (with its directories)', async () => {
    const { project, manager, turn } = await toolSession();
    const error = await failsWithoutChanges(project, () => manager.tools.edit({ file_path: 'nope.txt', old_string: 'a', new_string: 'b' }));
    expect(error).toMatchObject({ code: 'TOOL_FAILED', message: expect.stringContaining('nope.txt does not exist') });

    const result = await manager.tools.edit({ file_path: 'new/dir/file.md', old_string: '', new_string: '# Title\n' });
    expect(project.read('new/dir/file.md').toString()).toBe('# Title\n');
    expect(result).toMatchObject({ type: 'create', replacements: 0, linesAdded: 1, structuredPatch: [], message: 'Created new/dir/file.md (1 line).' });
    await manager.rewindFiles(turn);
    expect(project.exists('new/dir/file.md')).toBe(false);
  });

  it('refuses an empty old_string on an existing file, even an empty one', async () => {
    const { project, manager } = await toolSession({ 'full.txt': 'content\n', 'empty.txt': '' });
    for (const file of ['full.txt', 'empty.txt']) {
      const error = await failsWithoutChanges(project, () => manager.tools.edit({ file_path: file, old_string: '', new_string: 'x' }));
      expect(error).toMatchObject({ code: 'TOOL_FAILED', message: expect.stringContaining(`old_string is empty, but ${file} already exists`) });
    }
  });

  it('refuses binary files and files that are not UTF-8, byte for byte untouched', async () => {
    const binary = Buffer.concat([Buffer.from('text before\n'), Buffer.from([0x00, 0xff]), Buffer.from('text after\n')]);
    const latin1 = Buffer.from('caf\xe9 cr\xe8me\n', 'latin1');
    const { project, manager } = await toolSession({ 'blob.dat': binary, 'latin1.txt': latin1 });
    const binaryError = await failsWithoutChanges(project, () => manager.tools.edit({ file_path: 'blob.dat', old_string: 'text', new_string: 'x' }));
    expect(binaryError).toMatchObject({ code: 'TOOL_FAILED', message: expect.stringContaining('blob.dat is a binary file') });
    const latin1Error = await failsWithoutChanges(project, () => manager.tools.edit({ file_path: 'latin1.txt', old_string: 'cr', new_string: 'x' }));
    expect(latin1Error).toMatchObject({ code: 'TOOL_FAILED', message: expect.stringContaining('latin1.txt is not valid UTF-8') });
    expect(project.read('blob.dat').equals(binary)).toBe(true);
    expect(project.read('latin1.txt').equals(latin1)).toBe(true);
  });
});

describe('Edit keeps line endings and the byte order mark', () => {
  const crlf = 'line one\r\nline two\r\nline three\r\n';

  it('matches LF strings against a CRLF file and writes CRLF', async () => {
    const { project, manager } = await toolSession({ 'win.txt': crlf });
    const result = await manager.tools.edit({ file_path: 'win.txt', old_string: 'line one\nline two\n', new_string: 'first\nsecond\nthird\n' });
    expect(project.read('win.txt').toString()).toBe('first\r\nsecond\r\nthird\r\nline three\r\n');
    expect(result).toMatchObject({ linesAdded: 3, linesRemoved: 2 });
    expect(result.structuredPatch![0]!.lines).toEqual(['-line one', '-line two', '+first', '+second', '+third', ' line three']); // \r stripped for reading
  });

  it('accepts CRLF strings for a CRLF file, and CRLF strings for an LF file', async () => {
    const { project, manager } = await toolSession({ 'win.txt': crlf, 'unix.txt': 'a\nb\nc\n' });
    await manager.tools.edit({ file_path: 'win.txt', old_string: 'line two\r\n', new_string: 'two\r\n2\r\n' });
    await manager.tools.edit({ file_path: 'unix.txt', old_string: 'a\r\nb', new_string: 'A\r\nB' });
    expect(project.read('win.txt').toString()).toBe('line one\r\ntwo\r\n2\r\nline three\r\n');
    expect(project.read('unix.txt').toString()).toBe('A\nB\nc\n');
  });

  it('leaves the other lines of a mixed file as they were, and matches a bare-LF region of a CRLF file', async () => {
    const mixed = 'w1\r\nw2\r\nw3\r\nu1\nu2\nw4\r\n';
    const { project, manager } = await toolSession({ 'mixed.txt': mixed });
    await manager.tools.edit({ file_path: 'mixed.txt', old_string: 'w2\nw3', new_string: 'W2\nW3' });
    expect(project.read('mixed.txt').toString()).toBe('w1\r\nW2\r\nW3\r\nu1\nu2\nw4\r\n');
    await manager.tools.edit({ file_path: 'mixed.txt', old_string: 'u1\nu2\n', new_string: 'U1\nU2\n' });
    expect(project.read('mixed.txt').toString()).toBe('w1\r\nW2\r\nW3\r\nU1\nU2\nw4\r\n');
  });

  it('keeps a UTF-8 byte order mark, and a match at the very start of the text works', async () => {
    const { project, manager } = await toolSession({ 'bom.cs': Buffer.from('\ufeffusing System;\r\nclass A {}\r\n') });
    await manager.tools.edit({ file_path: 'bom.cs', old_string: 'using System;\n', new_string: 'using System;\nusing System.IO;\n' });
    expect(project.read('bom.cs').equals(Buffer.from('\ufeffusing System;\r\nusing System.IO;\r\nclass A {}\r\n'))).toBe(true);
  });

  it('handles non-ASCII text', async () => {
    const { project, manager } = await toolSession({ 'i18n.txt': 'grüße — 你好 — 🎉\n' });
    await manager.tools.edit({ file_path: 'i18n.txt', old_string: '你好', new_string: 'こんにちは' });
    expect(project.read('i18n.txt').toString()).toBe('grüße — こんにちは — 🎉\n');
  });
});
