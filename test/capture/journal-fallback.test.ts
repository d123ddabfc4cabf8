import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { journalTestHooks } from '../../src/capture/journal/scope-journal.js';
import type { CheckpointManager } from '../../src/index.js';
import { newId, tempProject, type TempProject } from '../helpers/temp-project.js';

afterEach(() => {
  delete journalTestHooks.eventBound;
  delete journalTestHooks.stallBoundMs;
  delete journalTestHooks.maxWatches;
});

/** A project with a few files and a manager whose journal is running (its first checkpoint is always a full scan). */
async function started(options: { capture?: object } = {}): Promise<{ project: TempProject; manager: CheckpointManager }> {
  const project = tempProject();
  project.write('src/a.ts', 'a\n');
  project.write('src/b.ts', 'b\n');
  project.write('docs/readme.md', '# docs\n');
  const manager = await project.open({ capture: { journal: true, ...options.capture } });
  await manager.checkpoint(newId());
  expect(manager.lastScan).toMatchObject({ via: 'full', fullScanReason: 'journal-starting' });
  await manager.checkpoint(newId());
  expect(manager.lastScan).toMatchObject({ via: 'journal' });
  return { project, manager };
}

describe('capture journal: when it falls back to the full scan', () => {
  it('says journal-off without the option', async () => {
    const project = tempProject();
    project.write('a.txt', 'a\n');
    const manager = await project.open({ capture: true });
    await manager.checkpoint(newId());
    expect(manager.lastScan).toMatchObject({ via: 'full', fullScanReason: 'journal-off' });
  });

  it('takes the full scan after more events than the bound (the kernel queue may have overflowed), then uses the journal again', async () => {
    journalTestHooks.eventBound = 8;
    const { project, manager } = await started();
    for (let index = 0; index < 10; index += 1) project.write(`src/gen-${index}.txt`, `${index}\n`);
    await manager.checkpoint(newId());
    expect(manager.lastScan).toMatchObject({ via: 'full', fullScanReason: 'overflow' });
    expect(manager.lastScan!.created).toHaveLength(10);
    fs.appendFileSync(project.file('src/a.ts'), 'more\n');
    await manager.checkpoint(newId());
    expect(manager.lastScan).toMatchObject({ via: 'journal', modified: [project.file('src/a.ts')], created: [], deleted: [] });
  });

  it('takes the full scan when the project root is deleted and made again', async () => {
    const { project, manager } = await started();
    const moved = `${project.root}-old`;
    fs.renameSync(project.root, moved);
    fs.mkdirSync(project.root);
    fs.cpSync(moved, project.root, { recursive: true });
    fs.writeFileSync(project.file('src/a.ts'), 'changed\n');
    await manager.checkpoint(newId());
    expect(manager.lastScan).toMatchObject({ via: 'full', fullScanReason: 'root-recreated', modified: [project.file('src/a.ts')] });
    fs.rmSync(moved, { recursive: true });
    // The watchers were made again on the new root.
    fs.writeFileSync(project.file('src/b.ts'), 'changed\n');
    await manager.checkpoint(newId());
    expect(manager.lastScan).toMatchObject({ via: 'journal', modified: [project.file('src/b.ts')] });
  });

  it('takes the full scan when a .gitignore changes', async () => {
    const { project, manager } = await started();
    project.write('.gitignore', '*.md\n');
    await manager.checkpoint(newId());
    expect(manager.lastScan).toMatchObject({ via: 'full', fullScanReason: 'rules-changed' });
    expect(manager.lastScan!.ignored).toEqual([project.file('docs/readme.md')]);
  });

  it('takes the full scan when .git/info/exclude changes (it is never watched)', async () => {
    const { project, manager } = await started();
    project.write('.git/info/exclude', 'src/b.ts\n');
    await manager.checkpoint(newId());
    expect(manager.lastScan).toMatchObject({ via: 'full', fullScanReason: 'rules-changed' });
  });

  it('follows a directory moved in with its files: watched, then listed, every file in it backed up as created', async () => {
    const { project, manager } = await started();
    const first = (await manager.listCheckpoints()).at(-1)!.id;
    const incoming = path.join(project.outside, 'incoming');
    fs.mkdirSync(path.join(incoming, 'deep'), { recursive: true });
    fs.writeFileSync(path.join(incoming, 'one.txt'), '1\n');
    fs.writeFileSync(path.join(incoming, 'deep', 'two.txt'), '2\n');
    fs.renameSync(incoming, project.file('incoming'));
    await manager.checkpoint(newId());
    expect(manager.lastScan).toMatchObject({ via: 'journal', created: [project.file('incoming/deep/two.txt'), project.file('incoming/one.txt')] });
    // Changes inside it are seen from now on.
    fs.writeFileSync(project.file('incoming/deep/two.txt'), '2 changed\n');
    await manager.checkpoint(newId());
    expect(manager.lastScan).toMatchObject({ via: 'journal', modified: [project.file('incoming/deep/two.txt')] });
    await manager.rewindFiles(first);
    expect(project.exists('incoming/one.txt')).toBe(false);
    expect(project.exists('incoming/deep/two.txt')).toBe(false);
  });

  it('follows a directory deleted and made again under the same name (its inode may be reused)', async () => {
    const { project, manager } = await started();
    fs.rmSync(project.file('src'), { recursive: true });
    fs.mkdirSync(project.file('src'));
    await manager.checkpoint(newId());
    expect(manager.lastScan).toMatchObject({ via: 'journal', deleted: [project.file('src/a.ts'), project.file('src/b.ts')] });
    project.write('src/c.ts', 'c\n');
    await manager.checkpoint(newId());
    expect(manager.lastScan).toMatchObject({ via: 'journal', created: [project.file('src/c.ts')] });
  });

  it('watches a directory made again under the same name anew when a full scan took the change (ext4 reuses its inode)', async () => {
    journalTestHooks.eventBound = 12;
    const { project, manager } = await started();
    fs.rmSync(project.file('src'), { recursive: true });
    fs.mkdirSync(project.file('src'));
    for (let index = 0; index < 12; index += 1) project.write(`gen-${index}.txt`, `${index}\n`);
    await manager.checkpoint(newId());
    expect(manager.lastScan).toMatchObject({ via: 'full', fullScanReason: 'overflow' });
    project.write('src/c.ts', 'c\n');
    await manager.checkpoint(newId());
    expect(manager.lastScan).toMatchObject({ via: 'journal', created: [project.file('src/c.ts')] });
  });

  it('stops the journal for good once the kernel refuses a watch (the watch limit), and keeps scanning in full', async () => {
    journalTestHooks.maxWatches = 2;
    const project = tempProject();
    project.write('a/one.txt', '1\n');
    project.write('b/two.txt', '2\n');
    project.write('c/three.txt', '3\n');
    const manager = await project.open({ capture: { journal: true } });
    await manager.checkpoint(newId());
    expect(manager.lastScan).toMatchObject({ via: 'full', fullScanReason: 'journal-starting' });
    for (const expected of ['a/one.txt', 'c/three.txt']) {
      fs.appendFileSync(project.file(expected), 'more\n');
      await manager.checkpoint(newId());
      expect(manager.lastScan).toMatchObject({ via: 'full', fullScanReason: 'watch-limit', modified: [project.file(expected)] });
    }
  });

  it('sees a file written through another hard link, outside the scope, where no watcher is', async () => {
    // Linked before the journal starts: a link made later from outside the scope raises no event in it (the kernel
    // tells only watchers of the file itself that its link count changed), see docs/capture-journal.md.
    const project = tempProject();
    project.write('src/a.ts', 'a\n');
    const other = path.join(project.outside, 'same-inode.ts');
    fs.linkSync(project.file('src/a.ts'), other);
    const manager = await project.open({ capture: { journal: true } });
    await manager.checkpoint(newId());
    await manager.checkpoint(newId());
    expect(manager.lastScan).toMatchObject({ via: 'journal' });
    fs.writeFileSync(other, 'written through the other name\n');
    await manager.checkpoint(newId());
    expect(manager.lastScan).toMatchObject({ via: 'journal', modified: [project.file('src/a.ts')] });
  });

  it('sees a file written through a hard link made inside the scope in an earlier turn, and rewinds it', async () => {
    const { project, manager } = await started();
    fs.linkSync(project.file('src/a.ts'), project.file('docs/link.ts'));
    const linkedTurn = newId();
    await manager.checkpoint(linkedTurn);
    expect(manager.lastScan).toMatchObject({ via: 'journal', created: [project.file('docs/link.ts')] });
    // Written through the new name, which is then removed: no event names src/a.ts.
    fs.writeFileSync(project.file('docs/link.ts'), 'written through the link\n');
    fs.rmSync(project.file('docs/link.ts'));
    const writtenTurn = newId();
    await manager.checkpoint(writtenTurn);
    expect(manager.lastScan).toMatchObject({ via: 'journal', modified: [project.file('src/a.ts')], deleted: [project.file('docs/link.ts')] });
    project.write('src/a.ts', 'later\n');
    await manager.rewindFiles(writtenTurn);
    expect(project.read('src/a.ts').toString()).toBe('written through the link\n');
  });

  it('takes the full scan with include globs it does not evaluate', async () => {
    const project = tempProject();
    project.write('src/a.ts', 'a\n');
    const manager = await project.open({ capture: { journal: true, include: ['src/**'] } });
    await manager.checkpoint(newId());
    await manager.checkpoint(newId());
    expect(manager.lastScan).toMatchObject({ via: 'full', fullScanReason: 'include-globs' });
  });

  it('takes the full scan after the event loop stalled past the bound', async () => {
    journalTestHooks.stallBoundMs = 20;
    const { project, manager } = await started();
    const until = Date.now() + 1200;
    while (Date.now() < until) {
      // a process suspended, or a loop blocked: no event was read meanwhile
    }
    fs.appendFileSync(project.file('src/a.ts'), 'more\n');
    await manager.checkpoint(newId());
    expect(manager.lastScan).toMatchObject({ via: 'full', fullScanReason: 'suspended', modified: [project.file('src/a.ts')] });
  });

  it('never keeps the process alive: a manager with the journal that is never closed lets its process exit', async () => {
    const project = tempProject();
    project.write('a.txt', 'a\n');
    const script = path.join(path.dirname(fileURLToPath(import.meta.url)), 'helpers', 'unclosed-journal.ts');
    const child = spawn(process.execPath, ['--import', 'tsx', script, project.root, project.store], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        resolve(-1);
      }, 30_000);
      child.on('close', (exit) => {
        clearTimeout(timer);
        resolve(exit);
      });
    });
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(JSON.parse(stdout)).toEqual({ via: 'journal', modified: 1 });
  }, 40_000);
});
