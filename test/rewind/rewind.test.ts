import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { filesystemStorage } from '../../src/index.js';
import { newId, snapshotTree, tempProject } from '../helpers/temp-project.js';

describe('rewindFiles() restores the state before a user message', () => {
  it('deletes a file the agent created', async () => {
    const project = tempProject();
    const manager = await project.open();
    const turn = await manager.checkpoint(newId());
    await manager.trackEdit('created.txt');
    project.write('created.txt', 'made by the agent\n');

    const result = await manager.rewindFiles(turn);

    expect(project.exists('created.txt')).toBe(false);
    expect(result).toMatchObject({ canRewind: true, filesChanged: [project.file('created.txt')], insertions: 0, deletions: 1, skippedLinks: 0 });
    expect(result.files).toEqual([expect.objectContaining({ action: 'delete', deletions: 1 })]);
  });

  it('restores a modified file byte for byte, with its mode', async () => {
    const project = tempProject();
    const original = Buffer.from([0xff, 0xfe, 0x00, 0x01, 0x80, 0x0a, 0xc3, 0x28, 0x0d, 0x0a]);
    project.write('data.bin', original, 0o640);
    project.write('latin1.txt', Buffer.from('caf\xe9 cr\xe8me\r\n', 'latin1'), 0o755);
    const manager = await project.open();
    const turn = await manager.checkpoint(newId());
    await manager.trackEdit('data.bin');
    await manager.trackEdit(project.file('latin1.txt'));
    project.write('data.bin', Buffer.from('replaced'), 0o600);
    project.write('latin1.txt', 'now utf-8 \u00e9\n', 0o644);

    await manager.rewindFiles(turn);

    expect(project.read('data.bin').equals(original)).toBe(true);
    expect(fs.statSync(project.file('data.bin')).mode & 0o7777).toBe(0o640);
    expect(project.read('latin1.txt').equals(Buffer.from('caf\xe9 cr\xe8me\r\n', 'latin1'))).toBe(true);
    expect(fs.statSync(project.file('latin1.txt')).mode & 0o7777).toBe(0o755);
  });

  it('recreates a file the agent deleted, and its deleted parent directories', async () => {
    const project = tempProject();
    project.write('deep/er/file.txt', 'keep me\n');
    const manager = await project.open();
    const turn = await manager.checkpoint(newId());
    await manager.trackEdit('deep/er/file.txt');
    fs.rmSync(project.file('deep'), { recursive: true });

    const result = await manager.rewindFiles(turn);

    expect(project.read('deep/er/file.txt').toString()).toBe('keep me\n');
    expect(result.files).toEqual([expect.objectContaining({ action: 'recreate', insertions: 1, deletions: 0 })]);
  });

  it('rewinds to each of several checkpoints, in any order', async () => {
    const project = tempProject();
    project.write('a.txt', 'a0\n');
    const manager = await project.open();
    const states: Array<{ id: string; snapshot: Record<string, string> }> = [];
    for (let turn = 1; turn <= 4; turn += 1) {
      const id = await manager.checkpoint(newId());
      states.push({ id, snapshot: project.snapshot() });
      await manager.trackEdit('a.txt');
      project.write('a.txt', `a${turn}\n`.repeat(turn));
      await manager.trackEdit(`new-${turn}.txt`);
      project.write(`new-${turn}.txt`, `file of turn ${turn}\n`);
      if (turn === 3) {
        await manager.trackEdit('new-1.txt');
        fs.rmSync(project.file('new-1.txt'));
      }
    }
    for (const index of [2, 0, 3, 1, 0, 2]) {
      await manager.rewindFiles(states[index]!.id);
      expect(project.snapshot()).toEqual(states[index]!.snapshot);
    }
    // Undoing the last rewind goes back to the state just before it: that of the previous target.
    const last = await manager.rewindFiles(states[3]!.id);
    await manager.rewindFiles(last.undoCheckpointId!);
    expect(project.snapshot()).toEqual(states[2]!.snapshot);
  });

  it('also restores a file changed by something else after it was tracked', async () => {
    const project = tempProject();
    project.write('config.json', '{"a":1}\n');
    const manager = await project.open();
    const turn = await manager.checkpoint(newId());
    await manager.trackEdit('config.json');
    project.write('config.json', '{"a":2}\n');
    await manager.checkpoint(newId());
    project.write('config.json', '{"a":3, "by":"a shell"}\n'); // not through a tracked tool

    await manager.rewindFiles(turn);

    expect(project.read('config.json').toString()).toBe('{"a":1}\n');
  });

  it('leaves files that already match the target alone and does not list them', async () => {
    const project = tempProject();
    project.write('same.txt', 'same\n');
    project.write('changed.txt', 'before\n');
    const manager = await project.open();
    const turn = await manager.checkpoint(newId());
    await manager.trackEdit('same.txt');
    await manager.trackEdit('changed.txt');
    project.write('changed.txt', 'after\n');
    const before = fs.statSync(project.file('same.txt'), { bigint: true });

    const result = await manager.rewindFiles(turn);

    expect(result.filesChanged).toEqual([project.file('changed.txt')]);
    const after = fs.statSync(project.file('same.txt'), { bigint: true });
    expect(after.ino).toBe(before.ino);
    expect(after.mtimeNs).toBe(before.mtimeNs);
  });

  it('restores only the mode when only the mode changed', async () => {
    const project = tempProject();
    project.write('run.sh', '#!/bin/sh\n', 0o644);
    const manager = await project.open();
    const turn = await manager.checkpoint(newId());
    await manager.trackEdit('run.sh');
    fs.chmodSync(project.file('run.sh'), 0o755);

    const result = await manager.rewindFiles(turn);

    expect(fs.statSync(project.file('run.sh')).mode & 0o7777).toBe(0o644);
    expect(result.files).toEqual([expect.objectContaining({ action: 'chmod', insertions: 0, deletions: 0 })]);
  });

  it('a dry run reports the same statistics as the real run and writes nothing', async () => {
    const project = tempProject();
    project.write('a.txt', 'one\ntwo\nthree\n');
    project.write('b.txt', 'bee\n');
    const manager = await project.open();
    const turn = await manager.checkpoint(newId());
    await manager.trackEdit('a.txt');
    await manager.trackEdit('b.txt');
    await manager.trackEdit('c.txt');
    project.write('a.txt', 'one\n2\nthree\nfour\n');
    fs.rmSync(project.file('b.txt'));
    project.write('c.txt', 'sea\nsee\n');
    await manager.checkpoint(newId());
    project.write('a.txt', 'one\n2\nthree\nfour\nfive\n');

    const projectBefore = project.snapshot();
    const storeBefore = snapshotTree(project.store);
    const preview = await manager.rewindFiles(turn, { dryRun: true });
    expect(project.snapshot()).toEqual(projectBefore);
    expect(snapshotTree(project.store)).toEqual(storeBefore);

    const real = await manager.rewindFiles(turn);
    expect(preview).toMatchObject({ canRewind: true, dryRun: true, insertions: 2, deletions: 5, skippedLinks: 0 });
    expect(real.filesChanged).toEqual(preview.filesChanged);
    expect(real.files).toEqual(preview.files);
    expect([real.insertions, real.deletions, real.skippedLinks]).toEqual([preview.insertions, preview.deletions, preview.skippedLinks]);
    expect(typeof real.undoCheckpointId).toBe('string');
  });

  it('a real rewind, which reads backups as it writes, reports exactly what its dry run previewed', async () => {
    const project = tempProject();
    for (const name of ['a.txt', 'b.txt', 'c.txt', 'd.txt']) project.write(name, `${name} one\n${name} two\n`);
    fs.writeFileSync(path.join(project.outside, 'elsewhere.txt'), 'outside\n');
    const manager = await project.open();
    const turn = await manager.checkpoint(newId());
    for (const name of ['a.txt', 'b.txt', 'c.txt', 'd.txt', 'e.txt']) await manager.trackEdit(name);
    project.write('a.txt', 'a.txt one\nchanged\nadded\n');
    project.write('b.txt', 'b.txt changed\n');
    fs.rmSync(project.file('c.txt'));
    fs.symlinkSync(path.join(project.outside, 'elsewhere.txt'), project.file('c.txt'));
    fs.rmSync(project.file('d.txt'));
    project.write('e.txt', 'new\n');
    // b.txt's backup is damaged in the pack: found when the rewind reads it.
    const packs = path.join(project.store, 'blobs', 'packs', fs.readdirSync(path.join(project.store, 'blobs', 'packs'))[0]!);
    for (const pack of fs.readdirSync(packs)) {
      const bytes = fs.readFileSync(path.join(packs, pack));
      const at = bytes.indexOf('b.txt one');
      if (at < 0) continue;
      bytes[at] = 'B'.charCodeAt(0);
      fs.writeFileSync(path.join(packs, pack), bytes);
    }

    const preview = await manager.rewindFiles(turn, { dryRun: true });
    const real = await manager.rewindFiles(turn);

    expect(preview.files).toEqual([
      expect.objectContaining({ path: project.file('a.txt'), action: 'restore', insertions: 1, deletions: 2 }),
      expect.objectContaining({ path: project.file('d.txt'), action: 'recreate', insertions: 2, deletions: 0 }),
      expect.objectContaining({ path: project.file('e.txt'), action: 'delete', insertions: 0, deletions: 1 }),
    ]);
    expect(preview.skipped?.map((entry) => [path.basename(entry.path), entry.reason])).toEqual([
      ['b.txt', 'backup-unreadable'],
      ['c.txt', 'symlink'],
    ]);
    for (const key of ['filesChanged', 'files', 'insertions', 'deletions', 'skippedLinks', 'skipped', 'conflicts'] as const) expect(real[key], key).toEqual(preview[key]);
    expect(project.read('a.txt').toString()).toBe('a.txt one\na.txt two\n');
    expect(project.read('b.txt').toString()).toBe('b.txt changed\n');
    expect(fs.readlinkSync(project.file('c.txt'))).toBe(path.join(project.outside, 'elsewhere.txt'));
    expect(project.read('d.txt').toString()).toBe('d.txt one\nd.txt two\n');
    expect(fs.existsSync(project.file('e.txt'))).toBe(false);
  });

  it('files whose content the store already holds are read as they are restored: exact statistics, and a change made meanwhile is left alone', async () => {
    const project = tempProject();
    for (const name of ['a.txt', 'b.txt', 'c.txt']) project.write(name, `${name} one\n${name} two\n${name} three\n`);
    // Changes the project while the rewind applies its plan: armed for the real run only.
    let duringApply: (() => void) | undefined;
    const inner = filesystemStorage({ directory: project.store, durability: 'none' });
    const storage = new Proxy(inner, {
      get(target, property, receiver) {
        if (property === 'getBlob') {
          return (...args: Parameters<typeof inner.getBlob>) => {
            duringApply?.();
            duringApply = undefined;
            return target.getBlob(...args);
          };
        }
        const value = Reflect.get(target, property, receiver) as unknown;
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    const manager = await project.open({ storage });
    const turn = await manager.checkpoint(newId());
    for (const name of ['a.txt', 'b.txt', 'c.txt']) await manager.trackEdit(name);
    project.write('a.txt', 'a.txt one\nchanged\na.txt three\nadded\n');
    project.write('b.txt', 'b.txt two\n');
    project.write('c.txt', 'c.txt edited by the agent\n');
    // Past every filesystem's racy window, the next message's checkpoint stores these contents and trusts
    // their stat signatures: the rewind's plan need not read them, so it leaves them until it writes.
    await new Promise((resolve) => setTimeout(resolve, 2100));
    await manager.checkpoint(newId());

    const preview = await manager.rewindFiles(turn, { dryRun: true });
    duringApply = () => project.write('c.txt', 'c.txt edited by the user meanwhile\n');
    const real = await manager.rewindFiles(turn);

    expect(preview.files?.map((file) => [path.basename(file.path), file.insertions, file.deletions])).toEqual([
      ['a.txt', 1, 2],
      ['b.txt', 2, 0],
      ['c.txt', 3, 1],
    ]);
    expect(real.files?.map((file) => [path.basename(file.path), file.insertions, file.deletions])).toEqual([
      ['a.txt', 1, 2],
      ['b.txt', 2, 0],
    ]);
    expect(real.skipped?.map((entry) => [path.basename(entry.path), entry.reason])).toEqual([['c.txt', 'changed-during-rewind']]);
    expect([real.insertions, real.deletions]).toEqual([3, 2]);
    expect(project.read('a.txt').toString()).toBe('a.txt one\na.txt two\na.txt three\n');
    expect(project.read('b.txt').toString()).toBe('b.txt one\nb.txt two\nb.txt three\n');
    expect(project.read('c.txt').toString()).toBe('c.txt edited by the user meanwhile\n');
  });

  it('a rewind after its dry run, and the rewind back, report what a fresh count gives, also for a file changed in between', async () => {
    const project = tempProject();
    project.write('a.txt', 'a one\na two\na three\n');
    project.write('b.txt', 'b one\nb two\n');
    project.write('c.txt', 'c one\n');
    const manager = await project.open();
    const turn = await manager.checkpoint(newId());
    for (const name of ['a.txt', 'b.txt', 'c.txt', 'd.txt']) await manager.trackEdit(name);
    project.write('a.txt', 'a one\nchanged\n');
    project.write('b.txt', 'b one\nb two\nb three\n');
    fs.rmSync(project.file('c.txt'));
    project.write('d.txt', 'd one\nd two\n');
    // Old enough for the next checkpoint to trust their signatures: the real run reads none of them for its counts.
    await new Promise((resolve) => setTimeout(resolve, 2100));
    await manager.checkpoint(newId());

    const preview = await manager.rewindFiles(turn, { dryRun: true });
    expect(preview.files?.map((file) => [path.basename(file.path), file.action, file.insertions, file.deletions])).toEqual([
      ['a.txt', 'restore', 2, 1],
      ['b.txt', 'restore', 0, 1],
      ['c.txt', 'recreate', 1, 0],
      ['d.txt', 'delete', 0, 2],
    ]);
    // b.txt changes after the preview: its count is made again for what it holds now.
    project.write('b.txt', 'b one\n');
    const real = await manager.rewindFiles(turn);
    expect(real.files?.map((file) => [path.basename(file.path), file.action, file.insertions, file.deletions])).toEqual([
      ['a.txt', 'restore', 2, 1],
      ['b.txt', 'restore', 1, 0],
      ['c.txt', 'recreate', 1, 0],
      ['d.txt', 'delete', 0, 2],
    ]);
    expect(project.read('b.txt').toString()).toBe('b one\nb two\n');

    const back = await manager.rewindFiles(real.undoCheckpointId!);
    expect(back.files?.map((file) => [path.basename(file.path), file.action, file.insertions, file.deletions])).toEqual([
      ['a.txt', 'restore', 1, 2],
      ['b.txt', 'restore', 0, 1],
      ['c.txt', 'delete', 0, 1],
      ['d.txt', 'recreate', 2, 0],
    ]);
    expect([project.read('a.txt').toString(), project.read('b.txt').toString(), project.exists('c.txt'), project.read('d.txt').toString()]).toEqual([
      'a one\nchanged\n',
      'b one\n',
      false,
      'd one\nd two\n',
    ]);
  });

  it('counts exact statistics for a rewind larger than the bytes it keeps between planning and writing', async () => {
    const project = tempProject();
    const lines = (name: string, changed: number[]) =>
      Array.from({ length: 1000 }, (_, line) => `${name} line ${line} ${changed.includes(line) ? 'changed' : 'x'.repeat(6000)}\n`).join('');
    const names = ['a.txt', 'b.txt', 'c.txt', 'd.txt'];
    for (const name of names) project.write(name, lines(name, []));
    const manager = await project.open();
    const turn = await manager.checkpoint(newId());
    for (const name of names) await manager.trackEdit(name);
    // Four files of about 6 MB: past the first 16 MB, changes are measured while planning instead.
    names.forEach((name, index) => project.write(name, lines(name, [index, 500, 900 + index])));

    const preview = await manager.rewindFiles(turn, { dryRun: true });
    const real = await manager.rewindFiles(turn);

    expect(preview.files?.map((file) => [file.insertions, file.deletions])).toEqual(names.map(() => [3, 3]));
    expect(real.files).toEqual(preview.files);
    for (const name of names) expect(project.read(name).toString()).toBe(lines(name, []));
  });

  it('an undo checkpoint brings back exactly the state before the rewind', async () => {
    const project = tempProject();
    project.write('x.txt', 'x\n');
    const manager = await project.open();
    const turn = await manager.checkpoint(newId());
    await manager.trackEdit('x.txt');
    await manager.trackEdit('y.txt');
    project.write('x.txt', 'x changed\n');
    project.write('y.txt', 'y created\n');
    const beforeRewind = project.snapshot();

    const rewind = await manager.rewindFiles(turn);
    expect(project.snapshot()).not.toEqual(beforeRewind);
    await manager.rewindFiles(rewind.undoCheckpointId!);

    expect(project.snapshot()).toEqual(beforeRewind);
    expect((await manager.listCheckpoints()).map((checkpoint) => checkpoint.reason)).toEqual(['message', 'pre-rewind', 'pre-rewind']);
  });

  it('never touches files that were not tracked', async () => {
    const project = tempProject();
    project.write('tracked.txt', 't\n');
    project.write('untracked.txt', 'u\n');
    const manager = await project.open();
    const turn = await manager.checkpoint(newId());
    await manager.trackEdit('tracked.txt');
    project.write('tracked.txt', 't2\n');
    project.write('untracked.txt', 'u2\n');
    project.write('also-new.txt', 'n\n');

    await manager.rewindFiles(turn);

    expect(project.read('untracked.txt').toString()).toBe('u2\n');
    expect(project.read('also-new.txt').toString()).toBe('n\n');
  });

  it('checkpoint(latest id) refreshes the latest checkpoint, keeping first backups', async () => {
    const project = tempProject();
    project.write('f.txt', 'v0\n');
    const manager = await project.open();
    const first = await manager.checkpoint(newId());
    await manager.trackEdit('f.txt');
    project.write('f.txt', 'v1\n');
    const second = await manager.checkpoint(newId());
    project.write('f.txt', 'v2\n');
    expect(await manager.checkpoint(second)).toBe(second); // refresh: second now holds v2
    project.write('f.txt', 'v3\n');

    await manager.rewindFiles(second);
    expect(project.read('f.txt').toString()).toBe('v2\n');
    await manager.rewindFiles(first);
    expect(project.read('f.txt').toString()).toBe('v0\n');
  });

  it('checkpoint() without an id returns a new UUID', async () => {
    const project = tempProject();
    const manager = await project.open();
    const id = await manager.checkpoint();
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect((await manager.listCheckpoints()).map((checkpoint) => checkpoint.id)).toEqual([id]);
  });

  it('listCheckpoints() lists checkpoints oldest first with the files each holds', async () => {
    const project = tempProject();
    const manager = await project.open();
    const one = await manager.checkpoint(newId());
    await manager.trackEdit('a.txt');
    const two = await manager.checkpoint(newId());
    await manager.trackEdit('b.txt');

    const list = await manager.listCheckpoints();

    expect(list.map((checkpoint) => [checkpoint.id, checkpoint.files])).toEqual([
      [one, [project.file('a.txt')]],
      [two, [project.file('a.txt'), project.file('b.txt')]],
    ]);
    expect(Date.parse(list[0]!.createdAt)).toBeLessThanOrEqual(Date.parse(list[1]!.createdAt));
  });

  it('stores a backup once when a file has not changed between checkpoints', async () => {
    const project = tempProject();
    project.write('big.txt', 'line\n'.repeat(20_000));
    const manager = await project.open();
    await manager.checkpoint(newId());
    await manager.trackEdit('big.txt');
    const storeSize = () => Object.values(snapshotTree(project.store)).reduce((sum, entry) => sum + entry.length, 0);
    const afterFirst = storeSize();
    for (let turn = 0; turn < 5; turn += 1) await manager.checkpoint(newId());
    // Five more checkpoints add a few log lines, not five more copies of a 100 KB file.
    expect(storeSize() - afterFirst).toBeLessThan(5_000);
  });
});
