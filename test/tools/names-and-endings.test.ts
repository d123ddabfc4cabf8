import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { temporaryName } from '../../src/fs/atomic-write.js';
import { newId } from '../helpers/temp-project.js';
import { toolSession } from './tool-session.js';

describe('file names the tools and rewinds must handle', () => {
  // 80 CJK characters: 244 bytes, within the 255 a name may have, but 240 bytes past the first 180 characters.
  const longName = `${'文'.repeat(80)}.txt`;

  it('keeps a temporary file name within 255 bytes, cut between characters', () => {
    for (const name of [longName, '😀'.repeat(63), `${'a'.repeat(179)}é${'b'.repeat(60)}`]) {
      const temporary = temporaryName(name);
      expect(Buffer.byteLength(temporary)).toBeLessThanOrEqual(255);
      expect(temporary).not.toContain('\ufffd');
      expect(Buffer.from(temporary).toString()).toBe(temporary); // no half of a surrogate pair
    }
  });

  it('edits, writes and rewinds a file whose name is long in UTF-8 bytes', async () => {
    const { project, manager, turn } = await toolSession({ [longName]: 'one\n', 'other.txt': 'before\n' });
    await manager.tools.edit({ file_path: longName, old_string: 'one', new_string: 'two' });
    await manager.tools.write({ file_path: 'other.txt', content: 'after\n' });
    expect(project.read(longName).toString()).toBe('two\n');

    const result = await manager.rewindFiles(turn);

    expect(result.filesChanged).toHaveLength(2);
    expect(project.read(longName).toString()).toBe('one\n');
    expect(project.read('other.txt').toString()).toBe('before\n');
  });

  it('takes names that start with two dots as inside the project', async () => {
    const { project, manager, turn } = await toolSession({ '..notes.txt': 'old\n' });
    await manager.tools.edit({ file_path: '..notes.txt', old_string: 'old', new_string: 'new' });
    await manager.tools.write({ file_path: project.file('..data/config.yaml'), content: 'key: 1\n' });
    await manager.trackEdit('..other.txt');
    expect(manager.resolvePath('..notes.txt')).toBe(project.file('..notes.txt'));

    await manager.rewindFiles(turn);

    expect(project.read('..notes.txt').toString()).toBe('old\n');
    expect(project.exists('..data/config.yaml')).toBe(false);
  });

  it('refuses a path that ends with a separator, and changes nothing', async () => {
    const { project, manager } = await toolSession({ 'a.txt': 'kept\n' });
    await expect(manager.tools.write({ file_path: 'a.txt/', content: 'x' })).rejects.toMatchObject({ code: 'INVALID_PATH' });
    await expect(manager.tools.write({ file_path: 'newdir/', content: 'x' })).rejects.toMatchObject({ code: 'INVALID_PATH' });
    await expect(manager.trackEdit('a.txt/')).rejects.toMatchObject({ code: 'INVALID_PATH' });
    expect(project.read('a.txt').toString()).toBe('kept\n');
    expect(fs.existsSync(project.file('newdir'))).toBe(false);
  });
});

describe('Edit in a file with mixed line endings', () => {
  const mixed = 'x\r\ny\nx\ny\nx\ny\n';

  it('matches an old_string with its own CRLF exactly as given', async () => {
    const { project, manager } = await toolSession({ 'mixed.txt': mixed });
    await manager.tools.edit({ file_path: 'mixed.txt', old_string: 'x\r\ny', new_string: 'Z' });
    expect(project.read('mixed.txt').toString()).toBe('Z\nx\ny\nx\ny\n');
  });

  it('replaces every exact occurrence with replace_all, and nothing else', async () => {
    const { project, manager } = await toolSession({ 'mixed.txt': mixed });
    await manager.checkpoint(newId());
    const result = await manager.tools.edit({ file_path: 'mixed.txt', old_string: 'x\r\ny', new_string: 'Z', replace_all: true });
    expect(result).toMatchObject({ replacements: 1 });
    expect(project.read('mixed.txt').toString()).toBe('Z\nx\ny\nx\ny\n');
  });
});
