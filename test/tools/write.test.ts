import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { filesystemStorage, type StorageAdapter } from '../../src/index.js';
import { writeFile } from '../../src/tools/index.js';
import { newId, tempProject } from '../helpers/temp-project.js';
import { storedRecords, toolSession } from './tool-session.js';

describe('Write { file_path, content }', () => {
  it('creates a file and its missing parent directories, with the mode any new file gets', async () => {
    const { project, manager, turn } = await toolSession();
    const result = await manager.tools.write({ file_path: 'src/deep/new.ts', content: 'export const a = 1;\nexport const b = 2;\n' });

    expect(project.read('src/deep/new.ts').toString()).toBe('export const a = 1;\nexport const b = 2;\n');
    expect(result).toEqual({
      type: 'create',
      filePath: project.file('src/deep/new.ts'),
      linesAdded: 2,
      linesRemoved: 0,
      structuredPatch: [],
      message: 'Created src/deep/new.ts (2 lines).',
    });
    const reference = project.write('reference.txt', 'x'); // made the ordinary way, under the same umask
    expect(fs.statSync(project.file('src/deep/new.ts')).mode & 0o7777).toBe(fs.statSync(reference).mode & 0o7777);
    fs.rmSync(reference);

    await manager.rewindFiles(turn);
    expect(project.exists('src/deep/new.ts')).toBe(false);
  });

  it('refuses, with a typed error and the file untouched, an object that only copies a manager\'s public methods', async () => {
    const { project, manager } = await toolSession();
    project.write('kept.txt', 'as it was\n');
    const lookalike = {
      root: manager.root,
      maxFileBytes: manager.maxFileBytes,
      durability: manager.durability,
      resolvePath: (file: string) => manager.resolvePath(file),
      trackEdit: (file: string) => manager.trackEdit(file),
      recordWrite: (file: string) => manager.recordWrite(file),
    };

    await expect(writeFile(lookalike, { file_path: 'kept.txt', content: 'replaced\n' })).rejects.toMatchObject({
      code: 'INVALID_OPTIONS',
      message: 'The built-in tools need a CheckpointManager: pass the manager itself, not another object with its methods.',
    });
    expect(project.read('kept.txt').toString()).toBe('as it was\n');
    expect(fs.readdirSync(project.root)).toEqual(['kept.txt']);
  });

  it('overwrites a file, keeping its mode, and reports the change as a patch', async () => {
    const { project, manager, turn } = await toolSession();
    project.write('run.sh', '#!/bin/sh\necho one\necho two\n', 0o750);

    const result = await manager.tools.write({ file_path: 'run.sh', content: '#!/bin/sh\necho one\necho 2\necho three\n' });

    expect(project.read('run.sh').toString()).toBe('#!/bin/sh\necho one\necho 2\necho three\n');
    expect(fs.statSync(project.file('run.sh')).mode & 0o7777).toBe(0o750);
    expect(result).toMatchObject({ type: 'update', linesAdded: 2, linesRemoved: 1, message: 'Updated run.sh (+2 -1 lines).' });
    expect(result.structuredPatch).toEqual([
      { oldStart: 1, oldLines: 3, newStart: 1, newLines: 4, lines: [' #!/bin/sh', ' echo one', '-echo two', '+echo 2', '+echo three'] },
    ]);

    await manager.rewindFiles(turn);
    expect(project.read('run.sh').toString()).toBe('#!/bin/sh\necho one\necho two\n');
    expect(fs.statSync(project.file('run.sh')).mode & 0o7777).toBe(0o750);
  });

  it('writes content exactly as given: CRLF stays CRLF, no byte order mark is added or kept', async () => {
    const { project, manager } = await toolSession({ 'bom.txt': Buffer.from('\ufeffold\r\n') });
    await manager.tools.write({ file_path: 'crlf.txt', content: 'a\r\nb\r\n' });
    await manager.tools.write({ file_path: 'bom.txt', content: 'new\n' });
    expect(project.read('crlf.txt').equals(Buffer.from('a\r\nb\r\n'))).toBe(true);
    expect(project.read('bom.txt').equals(Buffer.from('new\n'))).toBe(true);
  });

  it('overwrites a binary file, with line counts but no patch', async () => {
    const { project, manager } = await toolSession({ 'image.bin': Buffer.from([0x89, 0x50, 0x00, 0x01, 0x0a]) });
    const result = await manager.tools.write({ file_path: 'image.bin', content: 'now text\n' });
    expect(result).toMatchObject({ type: 'update', structuredPatch: null, linesAdded: 0, linesRemoved: 0 });
    expect(project.read('image.bin').toString()).toBe('now text\n');
  });

  it('resolves relative paths against the project root, not the process directory, and takes absolute ones', async () => {
    const { project, manager } = await toolSession();
    expect(process.cwd()).not.toBe(project.root);
    await manager.tools.write({ file_path: './docs/../notes.md', content: 'relative\n' });
    await manager.tools.write({ file_path: project.file('abs.md'), content: 'absolute\n' });
    expect(project.read('notes.md').toString()).toBe('relative\n');
    expect(project.read('abs.md').toString()).toBe('absolute\n');
    expect(fs.existsSync(path.join(process.cwd(), 'notes.md'))).toBe(false);
  });

  it('records the hash it wrote with the tool name and the tool call id', async () => {
    const { project, manager } = await toolSession();
    await writeFile(manager, { file_path: 'a.txt', content: 'hello\n' }, { toolCallId: 'toolu_01' });
    await manager.close();

    const writes = storedRecords(project).filter((record) => record.type === 'write');
    expect(writes).toEqual([
      expect.objectContaining({
        path: 'a.txt',
        tool: 'Write',
        toolCallId: 'toolu_01',
        state: expect.objectContaining({ kind: 'file', sha256: '5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03' }),
      }),
    ]);
  });

  it('writes the first backup of an existing file and the record of its write together, the backup first', async () => {
    const { project, manager } = await toolSession({ 'a.txt': 'old\n' });
    await writeFile(manager, { file_path: 'a.txt', content: 'new\n' }, { toolCallId: 'toolu_02' });
    await writeFile(manager, { file_path: 'a.txt', content: 'newer\n' }, { toolCallId: 'toolu_03' });
    await manager.close();

    const records = storedRecords(project).filter((record) => record.path === 'a.txt');
    expect(records.map((record) => [record.type, record.toolCallId])).toEqual([
      ['track', undefined],
      ['write', 'toolu_02'],
      ['write', 'toolu_03'],
    ]);
    const sha = (text: string) => createHash('sha256').update(text).digest('hex');
    const mode = fs.statSync(project.file('a.txt')).mode & 0o7777;
    expect(records[0]!.state).toMatchObject({ kind: 'file', sha256: sha('old\n'), size: 4, mode });
    expect(records[1]!.state).toEqual({ kind: 'file', sha256: sha('new\n'), size: 4, mode });
    expect(records[2]!.state).toEqual({ kind: 'file', sha256: sha('newer\n'), size: 6, mode });
  });

  it('leaves the file as it was when its write fails after the backup and the write were recorded, with nothing for a rewind to do', async () => {
    // The store moves the file's directory away (and puts an empty one in its place) as the records are written.
    const project = tempProject();
    project.write('src/a.txt', 'before\n');
    const inner = filesystemStorage({ directory: project.store, durability: 'none' });
    const storage: StorageAdapter = {
      ...inner,
      async append(key, entries, blobs, options) {
        if (entries.some((entry) => entry.type === 'write')) {
          fs.renameSync(project.file('src'), project.file('src-moved'));
          fs.mkdirSync(project.file('src'));
        }
        return inner.append(key, entries, blobs, options);
      },
    };
    const manager = await project.open({ storage });
    const turn = await manager.checkpoint(newId());

    await expect(manager.tools.write({ file_path: 'src/a.txt', content: 'after\n' })).rejects.toMatchObject({ code: 'PATH_IS_LINK' });
    fs.rmdirSync(project.file('src'));
    fs.renameSync(project.file('src-moved'), project.file('src'));
    expect(fs.readdirSync(project.file('src'))).toEqual(['a.txt']);
    expect(project.read('src/a.txt').toString()).toBe('before\n');

    expect(await manager.rewindFiles(turn, { dryRun: true })).toMatchObject({ canRewind: true, filesChanged: [] });
    expect(await manager.rewindFiles(turn)).toMatchObject({ filesChanged: [], skipped: [] });
    expect(project.read('src/a.txt').toString()).toBe('before\n');
  });

  it('leaves no temporary file behind', async () => {
    const { project, manager } = await toolSession();
    for (let index = 0; index < 3; index += 1) await manager.tools.write({ file_path: 'a.txt', content: `v${index}\n` });
    expect(fs.readdirSync(project.root)).toEqual(['a.txt']);
  });

  it('writes untracked when rewinding is disabled', async () => {
    const { project } = await toolSession();
    const manager = await project.open({ enabled: false });
    await manager.tools.write({ file_path: 'a.txt', content: 'x\n' });
    expect(project.read('a.txt').toString()).toBe('x\n');
  });

  it('works the same with durability "full"', async () => {
    const { project } = await toolSession();
    const manager = await project.open({ durability: 'full' });
    const turn = await manager.checkpoint();
    await manager.tools.write({ file_path: 'a.txt', content: 'durable\n' });
    expect(project.read('a.txt').toString()).toBe('durable\n');
    await manager.rewindFiles(turn);
    expect(project.exists('a.txt')).toBe(false);
  });
});
