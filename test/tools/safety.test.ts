import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { storeLosingWriteRecords } from '../helpers/failing-write-records.js';
import { tempProject } from '../helpers/temp-project.js';
import { failsWithoutChanges, newId, snapshotTree, toolSession, trackedPaths } from './tool-session.js';

describe('the tools never write through a link or outside the project', () => {
  async function withOutsideTarget() {
    const session = await toolSession({ 'inside.txt': 'inside\n' });
    const outsideFile = path.join(session.project.outside, 'target.txt');
    fs.writeFileSync(outsideFile, 'outside\n');
    fs.writeFileSync(path.join(session.project.outside, 'note.ipynb'), '{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}\n');
    return { ...session, outsideFile, outsideBefore: snapshotTree(session.project.outside) };
  }

  it('refuses a symlink inside the project that points outside; the link and its target stay as they were', async () => {
    const { project, manager, outsideFile, outsideBefore } = await withOutsideTarget();
    fs.symlinkSync(outsideFile, project.file('link.txt'));
    fs.symlinkSync(path.join(project.outside, 'note.ipynb'), project.file('link.ipynb'));

    const calls = [
      () => manager.tools.write({ file_path: 'link.txt', content: 'pwned\n' }),
      () => manager.tools.edit({ file_path: 'link.txt', old_string: 'outside', new_string: 'pwned' }),
      () => manager.tools.notebookEdit({ notebook_path: 'link.ipynb', edit_mode: 'insert', cell_type: 'code', new_source: 'pwned' }),
    ];
    for (const call of calls) {
      expect(await failsWithoutChanges(project, call)).toMatchObject({ code: 'PATH_IS_LINK', message: expect.stringContaining('symbolic link') });
    }
    expect(snapshotTree(project.outside)).toEqual(outsideBefore);
    expect(fs.readlinkSync(project.file('link.txt'))).toBe(outsideFile);
  });

  it('refuses a link even when it points inside the project, and even when the path was tracked before', async () => {
    const { project, manager } = await toolSession({ 'real.txt': 'real\n' });
    await manager.tools.write({ file_path: 'was-file.txt', content: 'tracked\n' });
    fs.rmSync(project.file('was-file.txt'));
    fs.symlinkSync(project.file('real.txt'), project.file('was-file.txt'));
    fs.symlinkSync('real.txt', project.file('relative-link.txt'));

    for (const file of ['was-file.txt', 'relative-link.txt']) {
      const error = await failsWithoutChanges(project, () => manager.tools.edit({ file_path: file, old_string: 'real', new_string: 'changed' }));
      expect(error).toMatchObject({ code: 'PATH_IS_LINK' });
    }
    expect(project.read('real.txt').toString()).toBe('real\n');
  });

  it('refuses paths that leave the project: .. escapes, absolute paths, and directories linked outside', async () => {
    const { project, manager, outsideBefore } = await withOutsideTarget();
    fs.symlinkSync(project.outside, project.file('linked-dir'));
    const escapes = ['../outside/target.txt', path.join(project.outside, 'target.txt'), 'linked-dir/target.txt', 'linked-dir/new.txt', 'sub/../../outside/new.txt'];
    for (const file_path of escapes) {
      const error = await failsWithoutChanges(project, () => manager.tools.write({ file_path, content: 'pwned\n' }));
      expect(error).toMatchObject({ code: 'PATH_OUTSIDE_PROJECT' });
    }
    expect(await failsWithoutChanges(project, () => manager.tools.notebookEdit({ notebook_path: 'linked-dir/note.ipynb', cell_id: 'cell-0', new_source: 'x' }))).toMatchObject({
      code: 'PATH_OUTSIDE_PROJECT',
    });
    expect(snapshotTree(project.outside)).toEqual(outsideBefore);
  });

  it("takes a '..' after a linked directory where the system does: beside the link's target, backed up and rewound there", async () => {
    const { project, manager, turn } = await toolSession({ 'a.txt': 'top\n', 'sub/a.txt': 'sub original\n', 'sub/deeper/keep.txt': 'keep\n' });
    fs.symlinkSync('sub/deeper', project.file('ln'));
    // A harness's own write (trackEdit, then the system's own resolution of the same string) and a built-in tool's.
    await manager.trackEdit('ln/../a.txt');
    fs.writeFileSync(`${project.root}/ln/../a.txt`, 'harness wrote\n'); // not path.join, which would drop `ln/..`
    expect(project.read('sub/a.txt').toString()).toBe('harness wrote\n');
    await manager.tools.write({ file_path: 'ln/../b.txt', content: 'tool wrote\n' });
    expect(fs.existsSync(project.file('sub/b.txt'))).toBe(true);
    expect(fs.existsSync(project.file('b.txt'))).toBe(false);
    expect(trackedPaths(project)).toEqual(expect.arrayContaining(['sub/a.txt', 'sub/b.txt']));

    await manager.rewindFiles(turn);
    expect(project.read('sub/a.txt').toString()).toBe('sub original\n');
    expect(fs.existsSync(project.file('sub/b.txt'))).toBe(false);
    expect(project.read('a.txt').toString()).toBe('top\n');
  });

  it("refuses a '..' after a directory linked outside, which the system takes outside", async () => {
    const { project, manager } = await withOutsideTarget();
    fs.mkdirSync(path.join(project.outside, 'deep'));
    fs.symlinkSync(path.join(project.outside, 'deep'), project.file('linkdir'));
    const outsideBefore = snapshotTree(project.outside);
    for (const call of [() => manager.trackEdit('linkdir/../target.txt'), () => manager.tools.write({ file_path: 'linkdir/../new.txt', content: 'pwned\n' })]) {
      expect(await failsWithoutChanges(project, call)).toMatchObject({ code: 'PATH_OUTSIDE_PROJECT' });
    }
    expect(snapshotTree(project.outside)).toEqual(outsideBefore);
  });

  it('writes inside an extra root when the manager allows it', async () => {
    const { project } = await toolSession();
    const manager = await project.open({ extraRoots: [project.outside] });
    await manager.checkpoint(newId());
    await manager.tools.write({ file_path: path.join(project.outside, 'allowed.txt'), content: 'ok\n' });
    expect(fs.readFileSync(path.join(project.outside, 'allowed.txt'), 'utf8')).toBe('ok\n');
  });

  it('refuses the store directory, directories and FIFOs', async () => {
    const { project } = await toolSession({ 'dir/keep.txt': 'x\n' });
    const manager = await project.open({ storeDir: project.file('.rewindable') });
    await manager.checkpoint(newId());
    expect(await failsWithoutChanges(project, () => manager.tools.write({ file_path: '.rewindable/evil.jsonl', content: '{}' }))).toMatchObject({ code: 'PATH_IN_STORE' });
    expect(await failsWithoutChanges(project, () => manager.tools.write({ file_path: 'dir', content: 'x' }))).toMatchObject({ code: 'NOT_A_REGULAR_FILE' });
    execFileSync('mkfifo', [project.file('pipe')]);
    expect(await failsWithoutChanges(project, () => manager.tools.write({ file_path: 'pipe', content: 'x' }))).toMatchObject({
      code: 'NOT_A_REGULAR_FILE',
      message: expect.stringContaining('is a fifo'),
    });
    expect(await failsWithoutChanges(project, () => manager.tools.write({ file_path: 'dir/keep.txt/child', content: 'x' }))).toMatchObject({
      code: 'TOOL_FAILED',
      message: expect.stringContaining('not a directory'),
    });
  });
});

describe('a tool never writes unless its backup was taken', () => {
  it('leaves the file byte-identical and no temporary file when trackEdit fails with FILE_TOO_LARGE', async () => {
    const { project } = await toolSession();
    const original = `${'x'.repeat(2000)}\nneedle\n`;
    project.write('big.txt', original);
    for (const durability of ['none', 'full'] as const) {
      const manager = await project.open({ maxFileBytes: 1024, durability });
      await manager.checkpoint(newId());
      expect(await failsWithoutChanges(project, () => manager.tools.edit({ file_path: 'big.txt', old_string: 'needle', new_string: 'pin' }))).toMatchObject({
        code: 'FILE_TOO_LARGE',
      });
      expect(await failsWithoutChanges(project, () => manager.tools.write({ file_path: 'big.txt', content: 'small\n' }))).toMatchObject({ code: 'FILE_TOO_LARGE' });
    }
    expect(project.read('big.txt').toString()).toBe(original);
    expect(trackedPaths(project)).toEqual([]);
  });

  it('never writes content over maxFileBytes, which no rewind could remove or restore (Write, Edit, NotebookEdit)', async () => {
    const notebook = '{"cells": [], "nbformat": 4, "nbformat_minor": 5, "metadata": {}}\n';
    const { project, manager, turn } = await toolSession({ 'a.txt': 'aaaa\n', 'n.ipynb': notebook }, { maxFileBytes: 1000 });
    const big = 'é'.repeat(600); // 1200 bytes of UTF-8, under the tools' own 10 MiB limit
    for (const call of [
      () => manager.tools.write({ file_path: 'new/b.txt', content: big }),
      () => manager.tools.write({ file_path: 'a.txt', content: big }),
      () => manager.tools.edit({ file_path: 'a.txt', old_string: 'a', new_string: 'é'.repeat(150), replace_all: true }),
      () => manager.tools.notebookEdit({ notebook_path: 'n.ipynb', edit_mode: 'insert', cell_type: 'code', new_source: big }),
    ]) {
      expect(await failsWithoutChanges(project, call)).toMatchObject({ code: 'FILE_TOO_LARGE', message: expect.stringContaining('over the backup size cap of 1000 bytes') });
    }
    // At the cap it is written, and the rewind removes it.
    await manager.tools.write({ file_path: 'c.txt', content: 'c'.repeat(1000) });
    expect((await manager.rewindFiles(turn)).filesChanged).toEqual([project.file('c.txt')]);
    expect(project.exists('c.txt')).toBe(false);
  });

  it('refuses before the first checkpoint, creating no file and no directory', async () => {
    const { project } = await toolSession({ 'a.txt': 'a\n' });
    const manager = await project.open();
    expect(await failsWithoutChanges(project, () => manager.tools.write({ file_path: 'new/dir/b.txt', content: 'b\n' }))).toMatchObject({ code: 'NO_CHECKPOINT' });
    expect(await failsWithoutChanges(project, () => manager.tools.edit({ file_path: 'a.txt', old_string: 'a', new_string: 'b' }))).toMatchObject({ code: 'NO_CHECKPOINT' });
  });

  it('refuses to write through a read-only session', async () => {
    const { project, manager: writer } = await toolSession({ 'a.txt': 'a\n' });
    const sessionId = writer.sessionId;
    await writer.close();
    const reader = await project.open({ resume: sessionId, readOnly: true });
    expect(await failsWithoutChanges(project, () => reader.tools.write({ file_path: 'a.txt', content: 'b\n' }))).toMatchObject({ code: 'READ_ONLY' });
  });

  // Root writes into read-only directories, so there is no failure to observe as root.
  it.skipIf(process.getuid?.() === 0)('reports a write that fails (a read-only directory) as TOOL_FAILED, leaving the file alone', async () => {
    const { project, manager } = await toolSession({ 'locked/a.txt': 'a\n' });
    fs.chmodSync(project.file('locked'), 0o555);
    try {
      expect(await failsWithoutChanges(project, () => manager.tools.edit({ file_path: 'locked/a.txt', old_string: 'a', new_string: 'b' }))).toMatchObject({
        code: 'TOOL_FAILED',
        message: expect.stringContaining('The file was left as it was'),
      });
    } finally {
      fs.chmodSync(project.file('locked'), 0o755);
    }
  });

  it('runs concurrent calls on one file one after another, so none is lost', async () => {
    const lines = Array.from({ length: 12 }, (_, index) => `line ${index}`);
    const { project, manager, turn } = await toolSession({ 'shared.txt': `${lines.join('\n')}\n` });
    await Promise.all(lines.map((line) => manager.tools.edit({ file_path: 'shared.txt', old_string: `${line}\n`, new_string: `${line} edited\n` })));
    expect(project.read('shared.txt').toString()).toBe(lines.map((line) => `${line} edited\n`).join(''));
    await manager.rewindFiles(turn);
    expect(project.read('shared.txt').toString()).toBe(`${lines.join('\n')}\n`);
  });
});

describe('a tool that wrote its file says so, also when the record of the write fails', () => {
  it('Write, Edit, NotebookEdit and a wrapped executor return their result, and a process warning names the missing record; the rewind still restores every byte', async () => {
    const project = tempProject();
    project.write('notes.txt', 'one\n');
    project.write('untracked.txt', 'untracked\n');
    project.write('n.ipynb', '{"cells": [{"cell_type": "code", "id": "c1", "metadata": {}, "source": "x = 1", "outputs": [], "execution_count": null}], "nbformat": 4, "nbformat_minor": 5, "metadata": {}}\n');
    const initial = snapshotTree(project.root);
    const store = storeLosingWriteRecords(project.store);
    const manager = await project.open({ storage: store.storage });
    const turn = await manager.checkpoint(newId());
    for (const file of ['notes.txt', 'n.ipynb']) await manager.trackEdit(file);
    const save = manager.tools.wrap(async (input: { target: string }) => (fs.writeFileSync(project.file(input.target), 'saved\n'), 'saved'), { paths: ['target'], tool: 'save' });
    const warnings: Error[] = [];
    const onProcessWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onProcessWarning);
    store.loseConnection();
    try {
      expect((await manager.tools.write({ file_path: 'new/a.txt', content: 'a\n' })).message).toBe('Created new/a.txt (1 line).');
      expect((await manager.tools.edit({ file_path: 'notes.txt', old_string: 'one', new_string: 'two' })).message).toMatch(/^Updated notes\.txt: 1 replacement/);
      expect((await manager.tools.notebookEdit({ notebook_path: 'n.ipynb', cell_id: 'c1', new_source: 'x = 2' })).message).toMatch(/^Replaced code cell c1/);
      expect(await save({ target: 'saved.txt' })).toBe('saved');
      // An untracked file's first backup is stored with the record of its write: that Edit did not run, and says so.
      expect(await failsWithoutChanges(project, () => manager.tools.edit({ file_path: 'untracked.txt', old_string: 'untracked', new_string: 'changed' }))).toMatchObject({ code: 'STORE_IO' });
      await new Promise((resolve) => setImmediate(resolve)); // process warnings are emitted on the next tick
    } finally {
      process.off('warning', onProcessWarning);
    }
    expect(project.read('new/a.txt').toString()).toBe('a\n');
    expect(project.read('notes.txt').toString()).toBe('two\n');
    expect(project.read('n.ipynb').toString()).toContain('x = 2');
    expect(project.read('saved.txt').toString()).toBe('saved\n');
    expect(warnings.map((warning) => [warning.name, (warning as Error & { code?: string }).code])).toEqual(Array(4).fill(['RewindableWarning', 'REWINDABLE_WRITE_NOT_RECORDED']));
    expect(warnings.map((warning) => warning.message.match(/^rewindable could not record what (\w+) wrote to (\S+), so/)?.slice(1))).toEqual([
      ['Write', project.file('new/a.txt')],
      ['Edit', project.file('notes.txt')],
      ['NotebookEdit', project.file('n.ipynb')],
      ['save', project.file('saved.txt')],
    ]);

    store.reconnect();
    await manager.rewindFiles(turn);
    expect(Object.fromEntries(Object.entries(snapshotTree(project.root)).filter(([name]) => !name.endsWith('/')))).toEqual(initial);
  });
});
