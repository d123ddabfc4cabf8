import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { newId, tempProject } from '../helpers/temp-project.js';

describe('capture journal', () => {
  it('examines only what changed once started, and records what a full scan records', async () => {
    const project = tempProject();
    project.write('src/a.ts', 'a\n');
    project.write('src/b.ts', 'b\n');
    project.write('docs/readme.md', '# docs\n');
    const manager = await project.open({ capture: { journal: true } });
    const first = await manager.checkpoint(newId());
    expect(manager.lastScan).toMatchObject({ via: 'full', fullScanReason: 'journal-starting', scanned: 3 });
    fs.writeFileSync(project.file('src/a.ts'), 'a2\n');
    fs.rmSync(project.file('src/b.ts'));
    project.write('new/deep/c.ts', 'c\n');
    fs.renameSync(project.file('docs'), project.file('documents'));
    await manager.checkpoint(newId());
    expect(manager.lastScan).toMatchObject({
      via: 'journal',
      scanned: 3,
      created: [project.file('documents/readme.md'), project.file('new/deep/c.ts')],
      modified: [project.file('src/a.ts')],
      deleted: [project.file('docs/readme.md'), project.file('src/b.ts')],
    });
    await manager.rewindFiles(first);
    expect(project.read('src/a.ts').toString()).toBe('a\n');
    expect(project.read('src/b.ts').toString()).toBe('b\n');
    expect(project.exists('new/deep/c.ts')).toBe(false);
    expect(project.read('docs/readme.md').toString()).toBe('# docs\n');
    await manager.checkpoint(newId());
    expect(manager.lastScan).toMatchObject({ via: 'journal' });
  });

  it('captureChanges reports what the command changed, with the journal running before and after it', async () => {
    const project = tempProject();
    project.write('src/a.ts', 'a\n');
    project.write('src/b.ts', 'b\n');
    const manager = await project.open({ capture: { journal: true } });
    const first = await manager.checkpoint(newId());
    await manager.checkpoint(newId());
    expect(manager.lastScan?.via).toBe('journal');
    // A change before the command belongs to the turn, not to the command.
    fs.writeFileSync(project.file('src/b.ts'), 'b before\n');
    const { changes } = await manager.captureChanges(() => {
      fs.writeFileSync(project.file('src/a.ts'), 'a by the command\n');
      fs.rmSync(project.file('src/b.ts'));
      project.write('gen/out.txt', 'out\n');
    });
    expect(changes).toMatchObject({ created: [project.file('gen/out.txt')], modified: [project.file('src/a.ts')], deleted: [project.file('src/b.ts')] });
    await manager.checkpoint(newId());
    expect(manager.lastScan).toMatchObject({ via: 'journal' });
    await manager.rewindFiles(first);
    expect(project.read('src/a.ts').toString()).toBe('a\n');
    expect(project.read('src/b.ts').toString()).toBe('b\n');
    expect(project.exists('gen/out.txt')).toBe(false);
  });

  it('never takes the store for a change, even inside the project', async () => {
    const project = tempProject();
    project.write('src/a.ts', 'a\n');
    const manager = await project.open({ capture: { journal: true }, storeDir: project.file('.rewindable-store') });
    await manager.checkpoint(newId());
    await manager.checkpoint(newId());
    fs.appendFileSync(project.file('src/a.ts'), 'more\n');
    await manager.checkpoint(newId());
    await manager.checkpoint(newId());
    expect(manager.lastScan).toMatchObject({ via: 'journal', scanned: 1, created: [], modified: [], deleted: [] });
  });
});
