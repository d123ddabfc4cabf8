import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { newId, tempProject } from '../helpers/temp-project.js';

/**
 * A file that only comes into the scan's sight (no longer ignored, excluded,
 * over the cap or unreadable) was there before: a rewind must never take it
 * for created and delete it. A file created during the turn still is removed.
 */

/** Past the racy window (50 ms on the local filesystems tests run on): the file is plainly older than the next scan. */
const age = () => new Promise((resolve) => setTimeout(resolve, 120));

describe('capture scope: files that come into sight were there before', () => {
  it('keeps a file that a .gitignore edit during the turn un-ignored, and still removes one created in that turn', async () => {
    const project = tempProject();
    project.write('.gitignore', 'notes.txt\n');
    project.write('notes.txt', 'my own notes\n');
    project.write('a.txt', 'a\n');
    await age();
    const manager = await project.open({ capture: true });
    const first = await manager.checkpoint(newId());
    expect(manager.lastScan).toMatchObject({ scanned: 2 });

    project.write('.gitignore', '');
    project.write('made-by-agent.txt', 'new\n');
    await manager.checkpoint(newId());
    expect(manager.lastScan!.created).toEqual([project.file('made-by-agent.txt')]);
    expect(manager.lastScan!.firstBackups).toBe(1);

    const preview = await manager.rewindFiles(first, { dryRun: true });
    const result = await manager.rewindFiles(first);

    expect(project.read('notes.txt').toString()).toBe('my own notes\n');
    expect(project.read('.gitignore').toString()).toBe('notes.txt\n');
    expect(project.exists('made-by-agent.txt')).toBe(false);
    expect(result.filesChanged).toEqual(preview.filesChanged);
    expect(result.filesChanged).toEqual(expect.not.arrayContaining([project.file('notes.txt')]));
  });

  it('keeps a file an earlier scan found ignored, however recently it was written before that scan', async () => {
    const project = tempProject();
    project.write('.gitignore', '*.log\n');
    project.write('app.log', 'written just before the checkpoint\n');
    const manager = await project.open({ capture: true });
    const first = await manager.checkpoint(newId());
    expect(manager.lastScan!.ignored).toEqual([project.file('app.log')]);

    project.write('.gitignore', '# nothing ignored now\n');
    await manager.checkpoint(newId());
    expect(manager.lastScan!.created).toEqual([]);
    await manager.rewindFiles(first);

    expect(project.read('app.log').toString()).toBe('written just before the checkpoint\n');
  });

  it('keeps files that a narrower exclude on resuming brings into the scope', async () => {
    const project = tempProject();
    project.write('data/db.sqlite', Buffer.from([1, 2, 3, 0, 255]));
    project.write('a.txt', 'a\n');
    await age();
    const manager = await project.open({ capture: { exclude: ['data/**'] } });
    const first = await manager.checkpoint(newId());
    project.write('a.txt', 'changed\n');
    await manager.close();

    const resumed = await project.open({ resume: manager.sessionId, capture: true });
    await resumed.checkpoint(newId());
    expect(resumed.lastScan).toMatchObject({ created: [], modified: [project.file('a.txt')], firstBackups: 1 });
    await resumed.rewindFiles(first);

    expect(project.read('data/db.sqlite').equals(Buffer.from([1, 2, 3, 0, 255]))).toBe(true);
    expect(project.read('a.txt').toString()).toBe('a\n');
  });

  it('keeps a file that was over the cap, after it shrinks in a resumed session', async () => {
    const project = tempProject();
    project.write('big.dat', Buffer.alloc(2048, 7));
    project.write('a.txt', 'a\n');
    const capture = { maxFileBytes: 1024 };
    const manager = await project.open({ capture });
    await manager.checkpoint(newId());
    const second = await manager.checkpoint(newId());
    expect(manager.lastScan!.overCap).toEqual([{ path: project.file('big.dat'), size: 2048 }]);
    await manager.close();

    const resumed = await project.open({ resume: manager.sessionId, capture });
    project.write('big.dat', Buffer.alloc(100, 8));
    await resumed.checkpoint(newId());
    expect(resumed.lastScan).toMatchObject({ created: [], firstBackups: 1 });
    await resumed.rewindFiles(second);

    expect(project.read('big.dat').equals(Buffer.alloc(100, 8))).toBe(true);
  });

  it('removes a file created in the turn after a resume, as in the live session', async () => {
    const project = tempProject();
    project.write('a.txt', 'a\n');
    const manager = await project.open({ capture: true });
    const first = await manager.checkpoint(newId());
    project.write('created.txt', 'new\n');
    await manager.close();

    const resumed = await project.open({ resume: manager.sessionId, capture: true });
    await resumed.checkpoint(newId());
    expect(resumed.lastScan!.created).toEqual([project.file('created.txt')]);
    await resumed.rewindFiles(first);
    expect(project.exists('created.txt')).toBe(false);
  });

  // Permission bits do not stop root from reading a file, so there is no unreadable file to make as root.
  it.skipIf(process.getuid?.() === 0)('reports a file it cannot read, and keeps it once it can be read', async () => {
    const project = tempProject();
    project.write('secret.txt', 'secret\n');
    project.write('a.txt', 'a\n');
    fs.chmodSync(project.file('secret.txt'), 0o000);
    const manager = await project.open({ capture: true });
    const first = await manager.checkpoint(newId());
    expect(manager.lastScan).toMatchObject({ unreadable: [project.file('secret.txt')], firstBackups: 1 });

    fs.chmodSync(project.file('secret.txt'), 0o644);
    await manager.checkpoint(newId());
    expect(manager.lastScan).toMatchObject({ created: [], unreadable: [], firstBackups: 1 });
    await manager.rewindFiles(first);
    expect(project.read('secret.txt').toString()).toBe('secret\n');
  });
});
