import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LinkFreeDirectories, minimumForWorkers, pathsGlancedOffMainThread, unchangedSinceSeen } from '../../src/fs/glance-many.js';
import { isUnchangedSince, observe } from '../../src/fs/stat-signature.js';
import { newId, tempProject } from '../helpers/temp-project.js';

/**
 * The batch lstat that decides which files of a large scope are untouched:
 * its verdicts must be the nanosecond comparison's, whether the batch runs on
 * worker threads (thousands of paths) or right here (a few).
 */
describe('unchangedSinceSeen', () => {
  for (const count of [minimumForWorkers + 500, 40]) {
    it(`agrees with the exact comparison for ${count.toLocaleString('en-US')} paths of every kind (${count >= minimumForWorkers ? 'worker threads' : 'main thread'})`, async () => {
      const project = tempProject();
      const oldSeconds = Date.now() / 1000 - 60;
      const files = Array.from({ length: count }, (_, index) => project.write(`d${index % 50}/f${index}.txt`, `content ${index}\n`));
      for (const file of files) fs.utimesSync(file, oldSeconds, oldSeconds);
      const readAt = BigInt(Date.now() + 10_000) * 1_000_000n;
      const observations = files.map((file) => observe(fs.lstatSync(file, { bigint: true }), readAt));

      // Then, after the signatures were taken: every way a file can stop being what was seen.
      const changed = new Map<number, string>();
      const change = (index: number, what: string, act: (file: string) => void) => {
        act(files[index]!);
        changed.set(index, what);
      };
      change(1, 'rewritten, same size, old times put back', (file) => {
        fs.writeFileSync(file, 'CONTENT 1\n');
        fs.utimesSync(file, oldSeconds, oldSeconds);
      });
      change(2, 'deleted', (file) => fs.rmSync(file));
      change(3, 'replaced by a link to itself elsewhere', (file) => {
        const moved = path.join(project.outside, 'moved.txt');
        fs.renameSync(file, moved);
        fs.symlinkSync(moved, file);
      });
      change(4, 'given a second hard link', (file) => fs.linkSync(file, path.join(project.outside, 'second-link.txt')));
      change(5, 'replaced by a directory', (file) => {
        fs.rmSync(file);
        fs.mkdirSync(file);
      });
      change(6, 'mode changed', (file) => fs.chmodSync(file, 0o600));
      change(7, 'grown', (file) => fs.appendFileSync(file, 'more\n'));

      const entries = files.map((file, index) => ({ path: file, observed: observations[index]! }));
      const glancedOnWorkers = pathsGlancedOffMainThread();
      const verdicts = await unchangedSinceSeen(entries);
      expect(pathsGlancedOffMainThread() - glancedOnWorkers).toBe(count >= minimumForWorkers ? count : 0);
      expect(verdicts).toHaveLength(count);
      for (const [index, what] of changed) expect(verdicts[index], what).toBe(false);
      const expected = files.map((file, index) => {
        const stat = fs.lstatSync(file, { bigint: true, throwIfNoEntry: false });
        return stat !== undefined && stat.isFile() && stat.nlink === 1n && isUnchangedSince(observations[index], stat);
      });
      expect(verdicts).toEqual(expected);
      expect(verdicts.filter(Boolean)).toHaveLength(count - changed.size);
    });
  }

  it('never trusts a file modified within the racy window of its signature', async () => {
    const project = tempProject();
    const file = project.write('fresh.txt', 'just written\n');
    const observed = observe(fs.lstatSync(file, { bigint: true }), BigInt(Date.now()) * 1_000_000n);
    expect(await unchangedSinceSeen([{ path: file, observed }])).toEqual([false]);
  });

  it('lets scans and rewinds of a large capture scope see every change, even one only its ctime shows', async () => {
    const project = tempProject();
    for (let index = 0; index < 3_000; index += 1) project.write(`src/m${index % 30}/f${index}.ts`, `export const v${index} = ${index};\n`);
    const oldSeconds = Date.now() / 1000 - 60;
    for (let index = 0; index < 3_000; index += 1) fs.utimesSync(project.file(`src/m${index % 30}/f${index}.ts`), oldSeconds, oldSeconds);
    const manager = await project.open({ capture: true });
    const first = await manager.checkpoint(newId());
    project.write('src/m8/new.ts', 'created\n');
    // Seen by the incremental scan's batch of lstats by its ctime alone.
    project.write('src/m9/f9.ts', 'export const v9 = 0;\n');
    fs.utimesSync(project.file('src/m9/f9.ts'), oldSeconds, oldSeconds);
    await manager.checkpoint(newId());
    expect(manager.lastScan?.modified.map((file) => path.relative(project.root, file))).toEqual(['src/m9/f9.ts']);
    expect(manager.lastScan?.created.map((file) => path.relative(project.root, file))).toEqual(['src/m8/new.ts']);
    // After the last scan, same size, old times put back: only the ctime tells, and the rewind must still see it.
    project.write('src/m7/f7.ts', 'export const v7 = 8;\n');
    fs.utimesSync(project.file('src/m7/f7.ts'), oldSeconds, oldSeconds);
    const result = await manager.rewindFiles(first);
    expect(result.filesChanged?.map((file) => path.relative(project.root, file)).sort()).toEqual(['src/m7/f7.ts', 'src/m8/new.ts', 'src/m9/f9.ts']);
    expect(project.read('src/m9/f9.ts').toString()).toBe('export const v9 = 9;\n');
    expect(project.read('src/m7/f7.ts').toString()).toBe('export const v7 = 7;\n');
    expect(project.exists('src/m8/new.ts')).toBe(false);
    await manager.close();
  });
});

describe('LinkFreeDirectories', () => {
  it('keeps only directories that are directories all the way up, with no link on the way', () => {
    const project = tempProject();
    for (const directory of ['plain/deeper', 'real/inside', 'kept']) fs.mkdirSync(path.join(project.root, directory), { recursive: true });
    fs.symlinkSync(path.join(project.root, 'real'), path.join(project.root, 'linked'));
    project.write('a-file', 'not a directory\n');
    const candidates = ['plain', 'plain/deeper', 'real/inside', 'linked', 'linked/inside', 'missing', 'missing/below', 'a-file', 'kept'].map((relative) => path.join(project.root, relative));

    const linkFree = new LinkFreeDirectories();
    const plain = [...candidates, ...candidates].filter((directory) => linkFree.has(directory));

    expect([...new Set(plain)].map((directory) => path.relative(project.root, directory)).sort()).toEqual(['kept', 'plain', 'plain/deeper', 'real/inside']);
  });
});
