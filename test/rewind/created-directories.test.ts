import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { RewindableError } from '../../src/index.js';
import { encodeLine } from '../../src/store/filesystem/log-lines.js';
import { errnoError, instrumentFs } from '../durability/helpers/fs-instrument.js';
import { newId, tempProject, type TempProject } from '../helpers/temp-project.js';

/**
 * Directories a tracked tool created for the files it wrote: a rewind that
 * deletes those files removes them too, once they are empty, and reports
 * them as `directoriesRemoved` in its dry run and its real run alike.
 */

const directory = (project: TempProject, relative: string) => fs.lstatSync(project.file(relative), { throwIfNoEntry: false });

describe('directories a tracked tool created', () => {
  it('are removed by a rewind that deletes the files in them, and the dry run says so first', async () => {
    const project = tempProject();
    project.write('src/index.ts', 'export {};\n');
    const manager = await project.open();
    const turn = await manager.checkpoint(newId());
    await manager.tools.write({ file_path: 'src/new/deep/file.ts', content: 'export const deep = 1;\n' });
    await manager.tools.write({ file_path: 'src/new/sibling.ts', content: 'export const sibling = 1;\n' });

    const preview = await manager.rewindFiles(turn, { dryRun: true });
    expect(preview.directoriesRemoved).toEqual([project.file('src/new'), project.file('src/new/deep')]);
    expect(directory(project, 'src/new/deep')?.isDirectory()).toBe(true);

    const result = await manager.rewindFiles(turn);
    expect(result.directoriesRemoved).toEqual(preview.directoriesRemoved);
    expect(project.exists('src/new')).toBe(false);
    // `src` was there before the session: it stays, with its file.
    expect(fs.readdirSync(project.file('src'))).toEqual(['index.ts']);
  });

  it('stay when they existed at the target checkpoint, even empty', async () => {
    const project = tempProject();
    const manager = await project.open();
    await manager.checkpoint(newId());
    await manager.tools.write({ file_path: 'early/first.txt', content: 'first\n' });
    fs.rmSync(project.file('early/first.txt')); // the agent removes it again (a shell command): `early/` stays, empty
    const second = await manager.checkpoint(newId());
    fs.rmSync(project.file('early'), { recursive: true }); // then the whole directory, and writes into it anew
    await manager.tools.write({ file_path: 'early/later/second.txt', content: 'second\n' });

    const preview = await manager.rewindFiles(second, { dryRun: true });
    const result = await manager.rewindFiles(second);

    // `early/` was at the checkpoint (created in the turn before it); only `early/later/` is the rewound turn's.
    expect(preview.directoriesRemoved).toEqual([project.file('early/later')]);
    expect(result.directoriesRemoved).toEqual(preview.directoriesRemoved);
    expect(fs.readdirSync(project.file('early'))).toEqual([]);
  });

  it('stay while they hold anything else, such as a file of the user', async () => {
    const project = tempProject();
    const manager = await project.open();
    const turn = await manager.checkpoint(newId());
    await manager.tools.write({ file_path: 'made/deep/file.txt', content: 'by the agent\n' });
    project.write('made/notes.txt', 'the user’s notes\n');

    const preview = await manager.rewindFiles(turn, { dryRun: true });
    const result = await manager.rewindFiles(turn);

    expect(preview.directoriesRemoved).toEqual([project.file('made/deep')]);
    expect(result.directoriesRemoved).toEqual(preview.directoriesRemoved);
    expect(fs.readdirSync(project.file('made'))).toEqual(['notes.txt']);
    expect(project.read('made/notes.txt').toString()).toBe('the user’s notes\n');
  });

  it('come back with their files when the rewind is undone', async () => {
    const project = tempProject();
    const manager = await project.open();
    const turn = await manager.checkpoint(newId());
    await manager.tools.write({ file_path: 'one/two/three.txt', content: 'three\n' });
    await manager.tools.edit({ file_path: 'one/two/three.txt', old_string: 'three', new_string: 'three, edited' });
    const before = project.snapshot();

    const rewound = await manager.rewindFiles(turn);
    expect(rewound.directoriesRemoved).toEqual([project.file('one'), project.file('one/two')]);
    expect(project.exists('one')).toBe(false);

    const undone = await manager.rewindFiles(rewound.undoCheckpointId!);
    expect(undone.directoriesRemoved).toEqual([]);
    expect(project.snapshot()).toEqual(before);
  });

  it('come back with their files when the rewind is rolled back, at once or when a crashed session is reopened', async () => {
    const project = tempProject();
    const manager = await project.open({ durability: 'full' });
    const turn = await manager.checkpoint(newId());
    await manager.tools.write({ file_path: 'one/two/three.txt', content: 'three\n' });
    const before = project.snapshot();

    // The end record cannot be stored: the rewind, directories removed and all, is rolled back before it fails.
    let failed = false;
    const restore = instrumentFs(['writeSync'], (name, args) => {
      if (failed || !Buffer.isBuffer(args[1]) || !args[1].includes('"type":"rewind-end"')) return undefined;
      failed = true;
      return errnoError('ENOSPC', name);
    });
    const error = await manager.rewindFiles(turn).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    restore();
    expect(RewindableError.isInstance(error) && error.code, String(error)).toBe('REWIND_FAILED');
    expect(project.snapshot()).toEqual(before);

    // A rewind that removed them and then died before its end record: reopening rolls it back.
    await manager.rewindFiles(turn);
    expect(project.exists('one')).toBe(false);
    await manager.close();
    const log = path.join(project.store, 'projects', fs.readdirSync(path.join(project.store, 'projects'))[0]!, `${manager.sessionId}.jsonl`);
    const lines = fs.readFileSync(log, 'utf8').split('\n').filter((line) => line !== '');
    expect(lines.at(-1)).toContain('"rewind-end"');
    fs.writeFileSync(log, `${lines.slice(0, -1).join('\n')}\n`);
    await project.open({ resume: manager.sessionId });
    expect(project.snapshot()).toEqual(before);
  });

  it('are left alone when swapped for a link, and so is what the link points to', async () => {
    const project = tempProject();
    const manager = await project.open();
    const turn = await manager.checkpoint(newId());
    await manager.tools.write({ file_path: 'shared/a/first.txt', content: 'first\n' });
    await manager.tools.write({ file_path: 'shared/b/second.txt', content: 'second\n' });
    // `shared/b` is moved out of the project and a link to it takes its place.
    fs.renameSync(project.file('shared/b'), path.join(project.outside, 'b'));
    fs.symlinkSync(path.join(project.outside, 'b'), project.file('shared/b'));

    const preview = await manager.rewindFiles(turn, { dryRun: true });
    const result = await manager.rewindFiles(turn);

    // `shared/a` goes with its file; `shared` still holds the link, and the file behind it is refused.
    expect(preview.directoriesRemoved).toEqual([project.file('shared/a')]);
    expect(result.directoriesRemoved).toEqual(preview.directoriesRemoved);
    expect(result.skipped).toEqual([expect.objectContaining({ path: project.file('shared/b/second.txt'), reason: 'parent-changed' })]);
    expect(fs.readdirSync(project.file('shared'))).toEqual(['b']);
    expect(directory(project, 'shared/b')?.isSymbolicLink()).toBe(true);
    expect(fs.readFileSync(path.join(project.outside, 'b', 'second.txt'), 'utf8')).toBe('second\n');
  });

  it('are not removed for a session logged before they were recorded', async () => {
    const project = tempProject();
    const manager = await project.open();
    const turn = await manager.checkpoint(newId());
    await manager.tools.write({ file_path: 'older/file.txt', content: 'written\n' });
    await manager.close();
    // The log as a version that did not record missing directories wrote it.
    const log = path.join(project.store, 'projects', fs.readdirSync(path.join(project.store, 'projects'))[0]!, `${manager.sessionId}.jsonl`);
    const lines = fs.readFileSync(log, 'utf8').split('\n').filter((line) => line !== '');
    const older = lines.map((line) => {
      const { crc: _crc, missingParents: _missing, ...record } = JSON.parse(line) as Record<string, unknown>;
      return encodeLine(record as Parameters<typeof encodeLine>[0]);
    });
    expect(older.join('')).not.toBe(`${lines.join('\n')}\n`);
    fs.writeFileSync(log, older.join(''));

    const resumed = await project.open({ resume: manager.sessionId });
    const result = await resumed.rewindFiles(turn);

    expect(result.filesChanged).toEqual([project.file('older/file.txt')]);
    expect(result.directoriesRemoved).toEqual([]);
    expect(fs.readdirSync(project.file('older'))).toEqual([]);
  });
});
