import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { newId, tempProject } from '../helpers/temp-project.js';

describe('capture scope: FIFOs, sockets and devices', () => {
  it('a scan skips a FIFO and says so, never lists it as a change, and a rewind neither opens nor lists it', async () => {
    const project = tempProject();
    project.write('a.txt', 'a0\n');
    execFileSync('mkfifo', [project.file('old.pipe')]);
    const manager = await project.open({ capture: true });
    const first = await manager.checkpoint(newId());
    expect(manager.lastScan).toMatchObject({ scanned: 1, firstBackups: 1, skipped: [{ path: project.file('old.pipe'), reason: 'fifo' }] });

    const { changes } = await manager.captureChanges(() => {
      execFileSync('mkfifo', [project.file('new.pipe')]);
      fs.writeFileSync(project.file('a.txt'), 'a1\n');
    });
    expect(changes).toEqual({
      created: [],
      modified: [project.file('a.txt')],
      deleted: [],
      overCap: [],
      unreadable: [],
      skipped: [
        { path: project.file('new.pipe'), reason: 'fifo' },
        { path: project.file('old.pipe'), reason: 'fifo' },
      ],
    });
    await manager.checkpoint(newId());
    expect(manager.lastScan).toMatchObject({ created: [], modified: [project.file('a.txt')], deleted: [] });

    const preview = await manager.rewindFiles(first, { dryRun: true });
    const result = await manager.rewindFiles(first);

    for (const answer of [preview, result]) expect(answer).toMatchObject({ canRewind: true, filesChanged: [project.file('a.txt')], skippedLinks: 0 });
    expect(project.read('a.txt').toString()).toBe('a0\n');
    expect(fs.lstatSync(project.file('new.pipe')).isFIFO()).toBe(true);
    expect(fs.lstatSync(project.file('old.pipe')).isFIFO()).toBe(true);
  });

  it('a tracked file replaced by a FIFO is a change once, not at every checkpoint after, journal on or off', async () => {
    for (const journal of [false, true]) {
      const project = tempProject();
      project.write('a.txt', 'a0\n');
      project.write('b.txt', 'b0\n');
      const manager = await project.open({ capture: { journal } });
      const first = await manager.checkpoint(newId());
      fs.rmSync(project.file('a.txt'));
      execFileSync('mkfifo', [project.file('a.txt')]);
      await manager.checkpoint(newId());
      expect(manager.lastScan).toMatchObject({ created: [], modified: [project.file('a.txt')], deleted: [], skipped: [{ path: project.file('a.txt'), reason: 'fifo' }] });
      for (let again = 0; again < 2; again += 1) {
        project.write('b.txt', `b${again + 1}\n`);
        await manager.checkpoint(newId());
        expect(manager.lastScan).toMatchObject({ created: [], modified: [project.file('b.txt')], deleted: [] });
      }
      // The FIFO is never written into: the rewind leaves it, says why, and puts b.txt back.
      const rewound = await manager.rewindFiles(first);
      expect(rewound).toMatchObject({ canRewind: true, filesChanged: [project.file('b.txt')], skippedLinks: 1, skippedByReason: { 'not-regular': 1 } });
      expect(rewound.skipped).toEqual([expect.objectContaining({ path: project.file('a.txt'), reason: 'not-regular' })]);
      expect(project.read('b.txt').toString()).toBe('b0\n');
      expect(fs.lstatSync(project.file('a.txt')).isFIFO()).toBe(true);
      await manager.close();
    }
  });

  it('a FIFO named .gitignore (or .git/info/exclude) holds no rules and does not hold the scan', async () => {
    const project = tempProject();
    project.write('a.txt', 'a0\n');
    fs.mkdirSync(project.file('.git/info'), { recursive: true });
    execFileSync('mkfifo', [project.file('.gitignore')]);
    execFileSync('mkfifo', [project.file('.git/info/exclude')]);
    const manager = await project.open({ capture: true });

    await manager.checkpoint(newId());

    expect(manager.lastScan).toMatchObject({ scanned: 1, firstBackups: 1, skipped: [{ path: project.file('.gitignore'), reason: 'fifo' }] });
  });
});
