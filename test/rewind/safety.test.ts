import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { newId, snapshotTree, tempProject } from '../helpers/temp-project.js';

/** Links, hard links, special files and moved parents are refused, counted, never written through. */
describe('safety refusals', () => {
  async function trackedSession(files: Record<string, string>, options: { ageMs?: number } = {}) {
    const project = tempProject();
    for (const [name, content] of Object.entries(files)) project.write(name, content);
    if (options.ageMs !== undefined) await new Promise((resolve) => setTimeout(resolve, options.ageMs));
    fs.writeFileSync(path.join(project.outside, 'canary.txt'), 'canary\n');
    const manager = await project.open();
    const turn = await manager.checkpoint(newId());
    for (const name of Object.keys(files)) await manager.trackEdit(name);
    const outsideBefore = () => snapshotTree(project.outside);
    return { project, manager, turn, outsideBefore: outsideBefore() };
  }

  async function expectRefused(setup: Awaited<ReturnType<typeof trackedSession>>, relative: string, reason: string) {
    const { project, manager, turn } = setup;
    const preview = await manager.rewindFiles(turn, { dryRun: true });
    const real = await manager.rewindFiles(turn);
    for (const result of [preview, real]) {
      expect(result.skippedLinks).toBe(1);
      expect(result.filesChanged).not.toContain(project.file(relative));
      expect(result.skipped).toEqual([expect.objectContaining({ path: project.file(relative), reason })]);
    }
    expect(snapshotTree(project.outside)).toEqual(setup.outsideBefore);
  }

  it('refuses a tracked file replaced by a symlink to a file outside the project', async () => {
    const setup = await trackedSession({ 'a.txt': 'original\n', 'b.txt': 'b\n' });
    fs.rmSync(setup.project.file('a.txt'));
    fs.symlinkSync(path.join(setup.project.outside, 'canary.txt'), setup.project.file('a.txt'));
    setup.project.write('b.txt', 'b changed\n');

    await expectRefused(setup, 'a.txt', 'symlink');

    expect(fs.lstatSync(setup.project.file('a.txt')).isSymbolicLink()).toBe(true);
    expect(setup.project.read('b.txt').toString()).toBe('b\n'); // other files are still rewound
  });

  it('refuses a dangling symlink, and a symlink where a created file should be deleted', async () => {
    const setup = await trackedSession({});
    await setup.manager.trackEdit('new.txt');
    fs.symlinkSync(path.join(setup.project.outside, 'canary.txt'), setup.project.file('new.txt'));
    await expectRefused(setup, 'new.txt', 'symlink');
    expect(fs.readFileSync(path.join(setup.project.outside, 'canary.txt'), 'utf8')).toBe('canary\n');
  });

  it('refuses a file with more than one hard link', async () => {
    const setup = await trackedSession({ 'a.txt': 'original\n' });
    fs.rmSync(setup.project.file('a.txt'));
    fs.linkSync(path.join(setup.project.outside, 'canary.txt'), setup.project.file('a.txt'));
    await expectRefused(setup, 'a.txt', 'hard-link');
    expect(fs.readFileSync(path.join(setup.project.outside, 'canary.txt'), 'utf8')).toBe('canary\n');
  });

  it('counts every path left alone by its reason, beside skippedLinks', async () => {
    const setup = await trackedSession({ 'link.txt': 'l\n', 'hard.txt': 'h\n', 'edited.txt': 'e0\n', 'plain.txt': 'p0\n' });
    fs.rmSync(setup.project.file('link.txt'));
    fs.symlinkSync(path.join(setup.project.outside, 'canary.txt'), setup.project.file('link.txt'));
    fs.rmSync(setup.project.file('hard.txt'));
    fs.linkSync(path.join(setup.project.outside, 'canary.txt'), setup.project.file('hard.txt'));
    for (const name of ['edited.txt', 'plain.txt']) await setup.manager.tools.write({ file_path: name, content: 'written by a tool\n' });
    setup.project.write('edited.txt', 'edited by someone else\n'); // after the tool: a conflict

    const preview = await setup.manager.rewindFiles(setup.turn, { dryRun: true, skipConflicts: true });
    const real = await setup.manager.rewindFiles(setup.turn, { skipConflicts: true });
    for (const result of [preview, real]) {
      expect(result.skippedLinks).toBe(2);
      expect(result.skippedByReason).toEqual({ symlink: 1, 'hard-link': 1, conflict: 1 });
      expect(result.filesChanged).toEqual([setup.project.file('plain.txt')]);
    }
    expect(setup.project.read('edited.txt').toString()).toBe('edited by someone else\n');
    expect(snapshotTree(setup.project.outside)).toEqual(setup.outsideBefore);
  });

  it('refuses a FIFO and a directory in place of a tracked file, without blocking', async () => {
    const setup = await trackedSession({ 'pipe': 'was a file\n', 'dir': 'was a file\n' });
    fs.rmSync(setup.project.file('pipe'));
    execFileSync('mkfifo', [setup.project.file('pipe')]);
    fs.rmSync(setup.project.file('dir'));
    fs.mkdirSync(setup.project.file('dir'));

    const result = await setup.manager.rewindFiles(setup.turn);

    expect(result.skippedLinks).toBe(2);
    expect(result.skipped?.map((entry) => entry.reason)).toEqual(['not-regular', 'not-regular']);
    expect(fs.lstatSync(setup.project.file('pipe')).isFIFO()).toBe(true);
  });

  it('refuses a file whose parent directory was replaced by a symlink', async () => {
    const setup = await trackedSession({ 'src/main.ts': 'main\n' });
    fs.renameSync(setup.project.file('src'), path.join(setup.project.outside, 'moved-src'));
    fs.symlinkSync(path.join(setup.project.outside, 'moved-src'), setup.project.file('src'));
    fs.writeFileSync(path.join(setup.project.outside, 'moved-src', 'main.ts'), 'changed outside\n');
    const outsideBefore = snapshotTree(setup.project.outside);

    await expectRefused({ ...setup, outsideBefore }, 'src/main.ts', 'parent-changed');

    expect(fs.readFileSync(path.join(setup.project.outside, 'moved-src', 'main.ts'), 'utf8')).toBe('changed outside\n');
  });

  it('keeps refusing a parent swapped for a link for every target, even after later checkpoints', async () => {
    const setup = await trackedSession({ 'lib/x.txt': 'x0\n' });
    setup.project.write('lib/x.txt', 'x1\n');
    const later = await setup.manager.checkpoint(newId());
    fs.renameSync(setup.project.file('lib'), path.join(setup.project.outside, 'lib'));
    fs.symlinkSync(path.join(setup.project.outside, 'lib'), setup.project.file('lib'));
    const afterSwap = await setup.manager.checkpoint(newId());
    const outsideBefore = snapshotTree(setup.project.outside);

    for (const target of [setup.turn, later, afterSwap]) {
      const result = await setup.manager.rewindFiles(target, { dryRun: true });
      expect(result.skippedLinks).toBe(1);
      const real = await setup.manager.rewindFiles(target);
      expect(real.skippedLinks).toBe(1);
      expect(real.filesChanged).toEqual([]);
    }
    expect(snapshotTree(setup.project.outside)).toEqual(outsideBefore);
  });

  it('refuses an untouched file whose grandparent was moved and replaced by a link to where it went', async () => {
    // Through the link the file is the very same inode, unchanged: only the link on its path tells. It is
    // written well before it is tracked, so that its signature is trusted (git's racy rule) and a plain lstat
    // through the link would find nothing changed.
    const setup = await trackedSession({ 'a/b/c.txt': 'c0\n', 'a/b/d.txt': 'd0\n', 'e.txt': 'e0\n' }, { ageMs: 2100 });
    setup.project.write('a/b/d.txt', 'd1\n');
    setup.project.write('e.txt', 'e1\n');
    await setup.manager.checkpoint(newId());
    fs.renameSync(setup.project.file('a'), path.join(setup.project.outside, 'a'));
    fs.symlinkSync(path.join(setup.project.outside, 'a'), setup.project.file('a'));
    const outsideBefore = snapshotTree(setup.project.outside);

    for (const dryRun of [true, false]) {
      const result = await setup.manager.rewindFiles(setup.turn, { dryRun });
      expect(result.filesChanged).toEqual([setup.project.file('e.txt')]);
      expect(result.skippedLinks).toBe(2);
      expect(result.skipped?.map((entry) => [path.relative(setup.project.root, entry.path), entry.reason])).toEqual([
        ['a/b/c.txt', 'parent-changed'],
        ['a/b/d.txt', 'parent-changed'],
      ]);
    }
    expect(snapshotTree(setup.project.outside)).toEqual(outsideBefore);
    expect(setup.project.read('e.txt').toString()).toBe('e0\n');

    // A checkpoint taken meanwhile records the file as behind a link, not as unchanged: once the directory is
    // back, a rewind to that checkpoint has no backup of it to restore and says so.
    const swapped = await setup.manager.checkpoint(newId());
    fs.rmSync(setup.project.file('a'));
    fs.renameSync(path.join(setup.project.outside, 'a'), setup.project.file('a'));
    const toSwapped = await setup.manager.rewindFiles(swapped, { dryRun: true });
    expect(toSwapped.skipped?.map((entry) => [path.relative(setup.project.root, entry.path), entry.reason])).toEqual([
      ['a/b/c.txt', 'target-not-restorable'],
      ['a/b/d.txt', 'target-not-restorable'],
    ]);
  });

  it('never recreates a path that was a link at the target checkpoint', async () => {
    const setup = await trackedSession({ 'a.txt': 'a\n' });
    fs.rmSync(setup.project.file('a.txt'));
    fs.symlinkSync(path.join(setup.project.outside, 'canary.txt'), setup.project.file('a.txt'));
    const linked = await setup.manager.checkpoint(newId()); // recorded as a link, never read through
    fs.rmSync(setup.project.file('a.txt'));
    setup.project.write('a.txt', 'regular again\n');

    const result = await setup.manager.rewindFiles(linked);

    expect(result.skipped).toEqual([expect.objectContaining({ reason: 'target-not-restorable' })]);
    expect(result.skippedLinks).toBe(1);
    expect(setup.project.read('a.txt').toString()).toBe('regular again\n');
    const storeBytes = Object.values(snapshotTree(setup.project.store)).join('');
    expect(storeBytes).not.toContain(Buffer.from('canary\n').toString('base64'));
  });

  it('refuses a backup whose bytes no longer match their hash', async () => {
    const setup = await trackedSession({ 'a.txt': 'the original content\n' });
    setup.project.write('a.txt', 'changed\n');
    const packs = path.join(setup.project.store, 'blobs', 'packs', fs.readdirSync(path.join(setup.project.store, 'blobs', 'packs'))[0]!);
    const packPath = path.join(packs, fs.readdirSync(packs)[0]!);
    const bytes = fs.readFileSync(packPath);
    const at = bytes.indexOf('original');
    bytes[at] = 'O'.charCodeAt(0);
    fs.writeFileSync(packPath, bytes);
    const { manager, turn, project } = setup;
    const reopened = await project.open({ resume: manager.sessionId }).catch((error) => error);
    expect(reopened).toBeInstanceOf(Error); // the live manager still holds the lock

    const result = await manager.rewindFiles(turn);

    expect(result.skipped).toEqual([expect.objectContaining({ reason: 'backup-unreadable', message: expect.stringContaining('no longer matches its hash') })]);
    expect(result.skippedLinks).toBe(1);
    expect(project.read('a.txt').toString()).toBe('changed\n');
  });

  it('refuses to track a symlink, a directory, a FIFO or a device', async () => {
    const project = tempProject();
    const manager = await project.open({ extraRoots: ['/dev'] });
    await manager.checkpoint(newId());
    fs.symlinkSync(path.join(project.outside, 'x'), project.file('link'));
    fs.mkdirSync(project.file('folder'));
    execFileSync('mkfifo', [project.file('fifo')]);

    await expect(manager.trackEdit('link')).rejects.toMatchObject({ code: 'PATH_IS_LINK' });
    await expect(manager.trackEdit('folder')).rejects.toMatchObject({ code: 'NOT_A_REGULAR_FILE', message: expect.stringContaining('directory') });
    await expect(manager.trackEdit('fifo')).rejects.toMatchObject({ code: 'NOT_A_REGULAR_FILE', message: expect.stringContaining('fifo') });
    await expect(manager.trackEdit('/dev/null')).rejects.toMatchObject({ code: 'NOT_A_REGULAR_FILE', message: expect.stringContaining('character-device') });
    expect((await manager.listCheckpoints())[0]!.files).toEqual([]);
  });

  it('refuses paths that leave the project through a symlinked directory', async () => {
    const project = tempProject();
    fs.symlinkSync(project.outside, project.file('escape'));
    const manager = await project.open();
    await manager.checkpoint(newId());
    await expect(manager.trackEdit('escape/canary.txt')).rejects.toMatchObject({ code: 'PATH_OUTSIDE_PROJECT' });
    await expect(manager.trackEdit('../outside/x.txt')).rejects.toMatchObject({ code: 'PATH_OUTSIDE_PROJECT' });
  });
});
