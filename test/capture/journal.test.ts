import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { journalTestHooks } from '../../src/capture/journal/scope-journal.js';
import { newId, tempProject } from '../helpers/temp-project.js';

afterEach(() => {
  delete journalTestHooks.eventBound;
});

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

  it('journals the checkpoint right after the first full scan, which watched each directory before listing it', async () => {
    // Far fewer events allowed than the scope has entries: a scan that left its directories to be examined again
    // after it would overflow this bound, and so would watches on excluded or ignored directories.
    journalTestHooks.eventBound = 12;
    const project = tempProject();
    for (let directory = 0; directory < 6; directory += 1) for (let file = 0; file < 5; file += 1) project.write(`d${directory}/f${file}.txt`, `${directory}.${file}\n`);
    project.write('.gitignore', 'build/\n');
    project.write('build/out.js', 'built\n');
    project.write('node_modules/pkg/index.js', 'module\n');
    const manager = await project.open({ capture: { journal: true } });
    // Rules written within the racy window (50 ms here) cannot vouch for themselves: the next checkpoint would read them again, in full.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const first = await manager.checkpoint(newId());
    expect(manager.lastScan).toMatchObject({ via: 'full', fullScanReason: 'journal-starting', scanned: 31 });
    fs.appendFileSync(project.file('d0/f0.txt'), 'more\n');
    fs.rmSync(project.file('d1/f1.txt'));
    project.write('d2/new/deep.txt', 'deep\n');
    for (let file = 0; file < 20; file += 1) {
      project.write(`build/out-${file}.js`, 'built\n');
      project.write(`node_modules/pkg/file-${file}.js`, 'module\n');
    }
    await manager.checkpoint(newId());
    expect(manager.lastScan).toMatchObject({
      via: 'journal',
      scanned: 31,
      created: [project.file('d2/new/deep.txt')],
      modified: [project.file('d0/f0.txt')],
      deleted: [project.file('d1/f1.txt')],
    });
    await manager.rewindFiles(first);
    expect(project.read('d0/f0.txt').toString()).toBe('0.0\n');
    expect(project.read('d1/f1.txt').toString()).toBe('1.1\n');
    expect(project.exists('d2/new/deep.txt')).toBe(false);
  });

  it('keeps what changed while the first full scan ran for the next checkpoint, which records the tree exactly', async () => {
    const project = tempProject();
    const directoryCount = 40;
    for (let directory = 0; directory < directoryCount; directory += 1) for (let file = 0; file < 25; file += 1) project.write(`d${directory}/f${file}.txt`, `${file}\n`);
    const manager = await project.open({ capture: { journal: true } });
    const script = path.join(path.dirname(fileURLToPath(import.meta.url)), 'helpers', 'busy-writer.ts');
    const writer = spawn(process.execPath, ['--import', 'tsx', script, project.root, String(directoryCount)], { stdio: ['pipe', 'pipe', 'inherit'] });
    await new Promise<void>((resolve) => writer.stdout.once('data', () => resolve()));
    await manager.checkpoint(newId());
    expect(manager.lastScan?.via).toBe('full');
    const exited = new Promise<void>((resolve) => writer.once('exit', () => resolve()));
    writer.stdin.end();
    await exited;
    const whenTaken = project.snapshot();
    const second = await manager.checkpoint(newId());
    expect(manager.lastScan?.via).toBe('journal');
    for (let directory = 0; directory < directoryCount; directory += 1) fs.rmSync(project.file(`d${directory}`), { recursive: true });
    project.write('after.txt', 'after\n');
    await manager.checkpoint(newId());
    await manager.rewindFiles(second);
    expect(project.snapshot()).toEqual(whenTaken);
  });

  it('starts the journal again from the full scan before a command, so the next checkpoint is journaled', async () => {
    const project = tempProject();
    project.write('src/a.ts', 'a\n');
    project.write('src/b.ts', 'b\n');
    const manager = await project.open({ capture: { journal: true } });
    const first = await manager.checkpoint(newId());
    // A new rule makes the journal take every verdict again: the scan before the command is a full one.
    project.write('.gitignore', '*.log\n');
    // Past the racy window (50 ms here), or the rules could not vouch for themselves at the next checkpoint either.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const { changes } = await manager.captureChanges(() => {
      fs.writeFileSync(project.file('src/a.ts'), 'a by the command\n');
      project.write('gen/out.txt', 'out\n');
      project.write('gen/trace.log', 'ignored\n');
    });
    expect(changes).toMatchObject({ created: [project.file('gen/out.txt')], modified: [project.file('src/a.ts')], deleted: [] });
    fs.rmSync(project.file('src/b.ts'));
    await manager.checkpoint(newId());
    expect(manager.lastScan).toMatchObject({
      via: 'journal',
      created: [project.file('.gitignore'), project.file('gen/out.txt')],
      modified: [project.file('src/a.ts')],
      deleted: [project.file('src/b.ts')],
      ignored: [project.file('gen/trace.log')],
    });
    await manager.rewindFiles(first);
    expect(project.snapshot()).toEqual({ 'src/': 'dir 755', 'src/a.ts': '644 YQo=', 'src/b.ts': '644 Ygo=', 'gen/': 'dir 755', 'gen/trace.log': project.snapshot()['gen/trace.log'] });
  });

  it('follows a directory replaced by a file under the same name (rm -r a && mv x a), before and after a command', async () => {
    const project = tempProject();
    project.write('x', 'x\n');
    project.write('a/c/y', 'y\n');
    project.write('a/c/d/w', 'w\n');
    const manager = await project.open({ capture: { journal: true } });
    const first = await manager.checkpoint(newId());
    fs.rmSync(project.file('a'), { recursive: true });
    fs.renameSync(project.file('x'), project.file('a'));
    const { changes } = await manager.captureChanges(() => fs.writeFileSync(project.file('x'), 'x again\n'));
    expect(changes).toMatchObject({ created: [project.file('x')], modified: [], deleted: [] });
    await manager.checkpoint(newId());
    // What the full scan records too: the files under the old directory keep their last backups.
    expect(manager.lastScan).toMatchObject({
      via: 'journal',
      created: [project.file('a')],
      modified: [project.file('a/c/d/w'), project.file('a/c/y'), project.file('x')],
      deleted: [],
    });
    await manager.rewindFiles(first);
    // The rewind deletes the file `a` and restores `x`; it leaves the files under `a/` alone, their parent having changed.
    expect(project.snapshot()).toEqual({ x: '644 eAo=' });
  });
});
