import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isUnchangedSince, isUnchangedSinceByKey, msFromNs, noteFilesystemOf, observe, statKeyOf, statSignature } from '../../src/fs/stat-signature.js';
import { newId, tempProject } from '../helpers/temp-project.js';

function fakeStat(mtimeNs: bigint, size = 5n): fs.BigIntStats {
  return { dev: 1n, ino: 2n, size, mode: 0o100644n, mtimeNs, ctimeNs: mtimeNs } as fs.BigIntStats;
}

/** A stat shortcut that is never wrong; bytes when in doubt. */
describe('change detection at checkpoints', () => {
  it('sees same-size rewrites made right after each checkpoint', async () => {
    const project = tempProject();
    project.write('f.txt', 'AAAA\n');
    const manager = await project.open();
    await manager.checkpoint(newId());
    await manager.trackEdit('f.txt');
    for (let round = 0; round < 40; round += 1) {
      project.write('f.txt', `B${String(round).padStart(3, '0')}\n`);
      const checkpoint = await manager.checkpoint(newId());
      project.write('f.txt', `C${String(round).padStart(3, '0')}\n`); // same size, same inode, likely the same clock tick
      const next = await manager.checkpoint(newId());
      project.write('f.txt', 'ZZZZ\n');
      await manager.rewindFiles(next);
      expect(project.read('f.txt').toString()).toBe(`C${String(round).padStart(3, '0')}\n`);
      await manager.rewindFiles(checkpoint);
      expect(project.read('f.txt').toString()).toBe(`B${String(round).padStart(3, '0')}\n`);
    }
  });

  it('trusts a matching signature only when the file was modified well before it was read (git’s racy rule)', () => {
    const readAt = 1_800_000_000_000_000_000n;
    const old = fakeStat(readAt - 10_000_000_000n);
    const racy = fakeStat(readAt - 1_000_000n); // modified 1 ms before the read: a later write could share its timestamp
    expect(isUnchangedSince(observe(old, readAt), old)).toBe(true);
    expect(isUnchangedSince(observe(racy, readAt), racy)).toBe(false);
    expect(isUnchangedSince(observe(old, readAt), fakeStat(readAt - 10_000_000_000n, 6n))).toBe(false);
    expect(isUnchangedSince(undefined, old)).toBe(false);
    expect(statSignature(old)).not.toBe(statSignature(fakeStat(readAt - 9_999_999_999n)));
  });

  it('narrows the racy window to 50 ms only for sub-millisecond timestamps on a noted local filesystem', () => {
    const project = tempProject();
    noteFilesystemOf(project.root);
    noteFilesystemOf('/proc'); // procfs: never a filesystem whose timestamps are trusted early
    // The filesystems the temporary directory is likely on (ext4, tmpfs, XFS, btrfs) keep nanoseconds.
    const local = process.platform === 'linux' && [0xef53, 0x01021994, 0x58465342, 0x9123683e].includes(fs.statfsSync(project.root).type);
    const readAt = 1_800_000_000_123_456_789n;
    const at = (dev: bigint, modifiedNsBefore: bigint) => {
      const stat = { ...fakeStat(readAt - modifiedNsBefore), dev } as fs.BigIntStats;
      return isUnchangedSince(observe(stat, readAt), stat);
    };
    const projectDevice = fs.statSync(project.root, { bigint: true }).dev;
    const procDevice = fs.statSync('/proc', { bigint: true }).dev;
    // Sub-millisecond timestamps (readAt and so the fake mtimes end in ...456789 ns) on the project's filesystem.
    expect(at(projectDevice, 60_000_000n)).toBe(local);
    expect(at(projectDevice, 40_000_000n)).toBe(false);
    expect(at(projectDevice, 2_100_000_000n)).toBe(true);
    // Whole milliseconds: the filesystem may keep coarse timestamps (exFAT's 10 ms, whole seconds), so 2 s.
    const wholeMillisecond = { ...fakeStat(readAt - 456_789n - 60_000_000n), dev: projectDevice } as fs.BigIntStats;
    expect(isUnchangedSince(observe(wholeMillisecond, readAt), wholeMillisecond)).toBe(false);
    // A filesystem not noted (another mount, a network filesystem) or not local keeps 2 s as well.
    for (const dev of [procDevice, 987_654_321n]) {
      expect(at(dev, 60_000_000n)).toBe(false);
      expect(at(dev, 1_900_000_000n)).toBe(false);
      expect(at(dev, 2_100_000_000n)).toBe(true);
    }
  });

  it('compares a plain lstat with a signature exactly as the nanosecond comparison does, on real files of this Node version', () => {
    const project = tempProject();
    const oldSeconds = Date.now() / 1000 - 60;
    for (let index = 0; index < 50; index += 1) {
      project.write(`f${index}.txt`, 'x'.repeat(index));
      // Times in seconds with all sorts of sub-millisecond parts, as real filesystems leave them.
      fs.utimesSync(project.file(`f${index}.txt`), oldSeconds, oldSeconds + index * 0.0071234567);
    }
    for (let index = 0; index < 50; index += 1) {
      const file = project.file(`f${index}.txt`);
      const exact = fs.lstatSync(file, { bigint: true });
      const plain = fs.lstatSync(file);
      // The numbers Node gives a plain lstat are the ones the stored signature converts to: the fast path is taken.
      expect(statKeyOf(exact)).toEqual({ dev: plain.dev, ino: plain.ino, size: plain.size, mode: plain.mode, mtimeMs: plain.mtimeMs, ctimeMs: plain.ctimeMs });
      const readAt = exact.ctimeNs + 10_000_000_000n;
      expect(isUnchangedSinceByKey(observe(exact, readAt), plain)).toBe(isUnchangedSince(observe(exact, readAt), exact));
      expect(isUnchangedSinceByKey(observe(exact, readAt), plain)).toBe(true);
    }
  });

  it('never trusts a plain lstat for a signature the racy rule does not trust, or for any other file', () => {
    const readAt = 1_800_000_000_000_000_000n;
    const old = fakeStat(readAt - 10_000_000_000n);
    const racy = fakeStat(readAt - 1_000_000n);
    const plain = (stat: fs.BigIntStats) =>
      ({ dev: Number(stat.dev), ino: Number(stat.ino), size: Number(stat.size), mode: Number(stat.mode), mtimeMs: msFromNs(stat.mtimeNs), ctimeMs: msFromNs(stat.ctimeNs) }) as fs.Stats;
    expect(isUnchangedSinceByKey(observe(old, readAt), plain(old))).toBe(true);
    expect(isUnchangedSinceByKey(observe(racy, readAt), plain(racy))).toBe(false);
    expect(isUnchangedSinceByKey(observe(old, readAt), plain(fakeStat(readAt - 10_000_000_000n, 6n)))).toBe(false);
    expect(isUnchangedSinceByKey(observe(old, readAt), { ...plain(old), ino: 3 } as fs.Stats)).toBe(false);
    // Other times: any later write moves ctime past the moment the signature was taken.
    expect(isUnchangedSinceByKey(observe(old, readAt), plain(fakeStat(readAt - 9_000_000_000n)))).toBe(false);
    expect(isUnchangedSinceByKey(undefined, plain(old))).toBe(false);
    expect(isUnchangedSinceByKey({ sig: 'not a signature', atNs: String(readAt) }, plain(old))).toBe(false);
  });

  it('sees content changed with the old mtime put back', async () => {
    const project = tempProject();
    project.write('f.txt', 'one\n');
    const old = new Date(Date.now() - 60_000);
    fs.utimesSync(project.file('f.txt'), old, old);
    const manager = await project.open();
    await manager.checkpoint(newId());
    await manager.trackEdit('f.txt');
    project.write('f.txt', 'two\n');
    fs.utimesSync(project.file('f.txt'), old, old);
    const second = await manager.checkpoint(newId());
    project.write('f.txt', 'three\n');
    await manager.rewindFiles(second);
    expect(project.read('f.txt').toString()).toBe('two\n');
  });

  it('records a tracked file that became a link as a link, never its target’s bytes', async () => {
    const project = tempProject();
    project.write('f.txt', 'mine\n');
    fs.writeFileSync(`${project.outside}/secret.txt`, 'outside secret\n');
    const manager = await project.open();
    await manager.checkpoint(newId());
    await manager.trackEdit('f.txt');
    fs.rmSync(project.file('f.txt'));
    fs.symlinkSync(`${project.outside}/secret.txt`, project.file('f.txt'));
    await manager.checkpoint(newId());
    const everything = fs.readdirSync(project.store, { recursive: true }) as string[];
    const stored = everything
      .map((name) => `${project.store}/${name}`)
      .filter((name) => fs.lstatSync(name).isFile())
      .map((name) => fs.readFileSync(name).toString('latin1'))
      .join('');
    expect(stored).not.toContain('outside secret');
  });
});
