import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { newId, tempProject, type TempProject } from '../helpers/temp-project.js';

/** Regular files and links under the project (directories are never removed by a rewind, so they are left out). */
function files(project: TempProject): Record<string, string> {
  return Object.fromEntries(Object.entries(project.snapshot()).filter(([name]) => !name.endsWith('/')));
}

describe('capture scope: changes made outside the tracked tools', () => {
  it('undoes shell-style changes: writes, rm, rename, new files in new directories, a file replaced by a link', async () => {
    const project = tempProject();
    project.write('src/a.ts', 'export const a = 1;\n');
    project.write('src/b.ts', 'export const b = 2;\n');
    project.write('docs/readme.md', '# docs\n');
    project.write('bin/tool', Buffer.from([0, 1, 2, 255]), 0o755);
    project.write('empty.txt', '');
    fs.writeFileSync(path.join(project.outside, 'target.txt'), 'outside\n');
    const manager = await project.open({ capture: true });
    const first = await manager.checkpoint(newId());
    expect(manager.lastScan).toMatchObject({ scanned: 5, firstBackups: 5 });
    const before = files(project);

    // A "shell" at work: none of this goes through trackEdit.
    fs.writeFileSync(project.file('src/a.ts'), 'export const a = 42;\n');
    fs.rmSync(project.file('src/b.ts'));
    fs.renameSync(project.file('docs/readme.md'), project.file('docs/README.md'));
    project.write('generated/deep/out.js', 'console.log(1)\n');
    fs.rmSync(project.file('empty.txt'));
    fs.symlinkSync(path.join(project.outside, 'target.txt'), project.file('empty.txt'));
    fs.writeFileSync(project.file('bin/tool'), Buffer.from([9, 9]));
    const second = await manager.checkpoint(newId());
    expect(manager.lastScan).toMatchObject({
      created: [project.file('docs/README.md'), project.file('generated/deep/out.js')],
      deleted: [project.file('docs/readme.md'), project.file('src/b.ts')],
      modified: expect.arrayContaining([project.file('src/a.ts'), project.file('bin/tool'), project.file('empty.txt')]),
    });
    const afterShell = files(project);

    const result = await manager.rewindFiles(first);
    expect(files(project)).toEqual(before);
    expect(result.skippedLinks).toBe(0);
    expect(fs.readFileSync(path.join(project.outside, 'target.txt'), 'utf8')).toBe('outside\n');
    expect(fs.statSync(project.file('bin/tool')).mode & 0o777).toBe(0o755);

    await manager.rewindFiles(second);
    const linkless = { ...afterShell };
    delete linkless['empty.txt']; // links are never recreated: the rewind to the second checkpoint reports it instead
    const { 'empty.txt': _ignored, ...now } = files(project);
    expect(now).toEqual(linkless);
  });

  it('leaves ignored and excluded files alone, and reports them', async () => {
    const project = tempProject();
    project.write('.gitignore', 'dist/\n*.log\n');
    project.write('packages/app/.gitignore', 'cache/\n!keep.log\n');
    project.write('src/main.ts', 'main\n');
    project.write('dist/bundle.js', 'bundle v1\n');
    project.write('debug.log', 'log v1\n');
    project.write('packages/app/keep.log', 'kept v1\n');
    project.write('packages/app/cache/x.bin', 'cache v1\n');
    project.write('node_modules/dep/index.js', 'dep v1\n');
    project.write('.git/HEAD', 'ref: refs/heads/main\n');
    project.write('secret/token.txt', 'token v1\n');
    const manager = await project.open({ capture: { exclude: ['secret/**'] } });
    const first = await manager.checkpoint(newId());
    expect(manager.lastScan!.ignored).toEqual(expect.arrayContaining([project.file('debug.log'), project.file('packages/app/cache/x.bin')]));
    expect(manager.lastScan!.excludePatterns).toEqual(expect.arrayContaining(['**/node_modules/**', 'secret/**', '**/dist/**']));

    for (const file of ['src/main.ts', 'dist/bundle.js', 'debug.log', 'packages/app/keep.log', 'packages/app/cache/x.bin', 'node_modules/dep/index.js', '.git/HEAD', 'secret/token.txt']) {
      project.write(file, `${file} changed\n`);
    }
    await manager.checkpoint(newId());
    await manager.rewindFiles(first);

    expect(project.read('src/main.ts').toString()).toBe('main\n');
    expect(project.read('packages/app/keep.log').toString()).toBe('kept v1\n'); // re-included by the nested .gitignore
    for (const file of ['dist/bundle.js', 'debug.log', 'packages/app/cache/x.bin', 'node_modules/dep/index.js', '.git/HEAD', 'secret/token.txt']) {
      expect(project.read(file).toString()).toBe(`${file} changed\n`);
    }
  });

  it('round-trips binary and empty files, and reports files over the size cap', async () => {
    const project = tempProject();
    const binary = Buffer.from(Array.from({ length: 4000 }, (_, index) => (index * 31) % 256));
    project.write('image.bin', binary);
    project.write('zero', '');
    project.write('huge.dat', Buffer.alloc(4096, 1));
    const manager = await project.open({ capture: { maxFileBytes: 4090 } });
    const first = await manager.checkpoint(newId());
    expect(manager.lastScan!.overCap).toEqual([{ path: project.file('huge.dat'), size: 4096 }]);
    project.write('image.bin', 'text now\n');
    project.write('zero', 'not empty\n');
    await manager.rewindFiles(first);
    expect(project.read('image.bin').equals(binary)).toBe(true);
    expect(project.read('zero').length).toBe(0);
  });

  it('terminates on a tree with a symlink loop and never follows links into other trees', async () => {
    const project = tempProject();
    project.write('a/file.txt', 'a\n');
    fs.symlinkSync('..', project.file('a/loop'));
    fs.symlinkSync(project.outside, project.file('outside-link'));
    fs.writeFileSync(path.join(project.outside, 'elsewhere.txt'), 'not ours\n');
    const manager = await project.open({ capture: true });
    await manager.checkpoint(newId());
    expect(manager.lastScan!.scanned).toBe(3); // the file and the two links themselves
    expect(manager.lastScan!.firstBackups).toBe(3);
  });

  it('reports a link once, as created, and not as modified at every later checkpoint', async () => {
    for (const journal of [false, true]) {
      const project = tempProject();
      project.write('top.txt', 'top\n');
      fs.symlinkSync('top.txt', project.file('old-link'));
      const manager = await project.open({ capture: { journal } });
      await manager.checkpoint(newId());
      fs.symlinkSync('top.txt', project.file('new-link'));
      await manager.checkpoint(newId());
      expect(manager.lastScan, `journal: ${journal}`).toMatchObject({ created: [project.file('new-link')], modified: [], deleted: [] });
      await manager.checkpoint(newId());
      expect(manager.lastScan, `journal: ${journal}`).toMatchObject({ created: [], modified: [], deleted: [] });
      await manager.close();
    }
  });

  it('captureChanges() attributes one command’s changes, and a rewind undoes them', async () => {
    const project = tempProject();
    project.write('keep.txt', 'keep\n');
    project.write('edit.txt', 'before\n');
    project.write('remove.txt', 'remove me\n');
    const manager = await project.open();
    const turn = await manager.checkpoint(newId());
    const { result, changes } = await manager.captureChanges(
      async () => {
        fs.writeFileSync(project.file('edit.txt'), 'after\n');
        fs.rmSync(project.file('remove.txt'));
        project.write('made/by/command.txt', 'new\n');
        return 'exit 0';
      },
      { label: 'sed -i && rm && generate' },
    );
    expect(result).toBe('exit 0');
    expect(changes).toEqual({ created: [project.file('made/by/command.txt')], modified: [project.file('edit.txt')], deleted: [project.file('remove.txt')], overCap: [], unreadable: [] });

    await manager.rewindFiles(turn);
    expect(project.read('edit.txt').toString()).toBe('before\n');
    expect(project.read('remove.txt').toString()).toBe('remove me\n');
    expect(project.exists('made/by/command.txt')).toBe(false);
    expect(project.read('keep.txt').toString()).toBe('keep\n');
  });

  it('captureChanges() records the changes of a command that fails, then rethrows its error', async () => {
    const project = tempProject();
    const manager = await project.open();
    const turn = await manager.checkpoint(newId());
    const failure = new Error('command failed');
    await expect(
      manager.captureChanges(() => {
        project.write('half-done.txt', 'partial\n');
        throw failure;
      }),
    ).rejects.toBe(failure);
    await manager.rewindFiles(turn);
    expect(project.exists('half-done.txt')).toBe(false);
    await expect(project.open().then((other) => other.captureChanges(() => 1))).rejects.toMatchObject({ code: 'NO_CHECKPOINT' });
  });

  it('keeps capturing across a resume', async () => {
    const project = tempProject();
    project.write('a.txt', 'a0\n');
    const manager = await project.open({ capture: true });
    const first = await manager.checkpoint(newId());
    project.write('a.txt', 'a1\n');
    project.write('b.txt', 'b1\n');
    await manager.close();

    const resumed = await project.open({ resume: manager.sessionId, capture: true });
    await resumed.checkpoint(newId());
    expect(resumed.lastScan).toMatchObject({ created: [project.file('b.txt')], modified: [project.file('a.txt')], firstBackups: 0 });
    await resumed.rewindFiles(first);
    expect(project.read('a.txt').toString()).toBe('a0\n');
    expect(project.exists('b.txt')).toBe(false);
  });
});

describe('capture scope: .gitignore changes between scans', () => {
  it('lists changes in path order, a tracked file outside the scope among them', async () => {
    for (const journal of [false, true]) {
      const project = tempProject();
      project.write('.gitignore', '*.log\n');
      project.write('a.ts', 'a\n');
      project.write('m/b.ts', 'b\n');
      project.write('z.log', 'z\n');
      const manager = await project.open({ capture: { journal } });
      await manager.checkpoint(newId());
      await manager.trackEdit(project.file('z.log'));
      project.write('z.log', 'z by a tool\n');
      await manager.checkpoint(newId());
      project.write('z.log', 'z by the shell\n');
      project.write('m/b.ts', 'b2\n');
      project.write('a.ts', 'a2\n');
      project.write('c.ts', 'c\n');
      project.write('0.ts', '0\n');
      await manager.checkpoint(newId());
      expect(manager.lastScan).toMatchObject({
        created: [project.file('0.ts'), project.file('c.ts')],
        modified: [project.file('a.ts'), project.file('m/b.ts'), project.file('z.log')],
        deleted: [],
      });
      await manager.close();
    }
  });

  it('applies edited .gitignore rules at the next scan', async () => {
    const project = tempProject();
    project.write('.gitignore', 'build/*.js\n');
    project.write('src/a.ts', 'a\n');
    project.write('build/out.js', 'out\n');
    const manager = await project.open({ capture: true });
    const first = await manager.checkpoint(newId());
    expect(manager.lastScan!.ignored).toEqual([project.file('build/out.js')]);

    project.write('.gitignore', 'src/*.ts\n'); // build/out.js is in scope now, src/a.ts is not
    project.write('src/a.ts', 'a changed\n');
    await manager.checkpoint(newId());
    expect(manager.lastScan!.ignored).toEqual([project.file('src/a.ts')]);
    // There before, out of sight: backed up as it is, not taken for created (a rewind must not delete it).
    expect(manager.lastScan).toMatchObject({ created: [], firstBackups: 1 });
    // Ignored now but tracked: still looked at by every checkpoint, as every tracked file is.
    expect(manager.lastScan!.modified).toEqual([project.file('.gitignore'), project.file('src/a.ts')]);
    project.write('src/a.ts', 'a changed again\n');
    await manager.checkpoint(newId());
    expect(manager.lastScan).toMatchObject({ modified: [project.file('src/a.ts')], created: [], deleted: [] });
    await manager.rewindFiles(first);
    expect(project.read('src/a.ts').toString()).toBe('a\n');
    expect(project.exists('build/out.js')).toBe(true);
  });
});
