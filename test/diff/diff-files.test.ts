import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { FileChangeDiff, FileDiff, PatchHunk } from '../../src/diff/diff-files.js';
import { changeBlocks, parseHunkId } from '../../src/text/patch-hunks.js';
import { generateTriple } from '../helpers/merge-triples.js';
import { newId, snapshotTree, tempProject } from '../helpers/temp-project.js';

const changes = (diffs: FileDiff[]) => diffs.filter((diff): diff is FileChangeDiff => diff.action !== 'skip');

describe('diffFiles(id) lists what a rewind would change, file by file', () => {
  it('gives each file its action and a git-style patch that turns the file now into the file at the checkpoint', async () => {
    const project = tempProject();
    project.write('edited.txt', 'one\ntwo\nthree\n');
    project.write('deleted.txt', 'keep me\n');
    project.write('mode.sh', 'echo hi\n', 0o644);
    const manager = await project.open();
    const turn = await manager.checkpoint(newId());
    for (const file of ['edited.txt', 'deleted.txt', 'mode.sh', 'created.txt']) await manager.trackEdit(file);
    const atCheckpoint = project.snapshot();
    project.write('edited.txt', 'one\nTWO\nthree');
    fs.rmSync(project.file('deleted.txt'));
    fs.chmodSync(project.file('mode.sh'), 0o755);
    project.write('created.txt', 'new\n');

    const diffs = await manager.diffFiles(turn);

    expect(diffs.map((diff) => [path.basename(diff.path), diff.action])).toEqual([
      ['created.txt', 'delete'],
      ['deleted.txt', 'recreate'],
      ['edited.txt', 'restore'],
      ['mode.sh', 'chmod'],
    ]);
    const byName = Object.fromEntries(changes(diffs).map((diff) => [path.basename(diff.path), diff]));
    expect(byName['edited.txt']!.patch).toBe(
      'diff --git a/edited.txt b/edited.txt\nindex a9beb14..4cb29ea 100644\n--- a/edited.txt\n+++ b/edited.txt\n@@ -1,3 +1,3 @@\n one\n-TWO\n-three\n\\ No newline at end of file\n+two\n+three\n',
    );
    expect(byName['mode.sh']!.patch).toBe('diff --git a/mode.sh b/mode.sh\nold mode 100755\nnew mode 100644\n');
    expect(byName['deleted.txt']).toMatchObject({ current: null, target: { size: 8, mode: 0o644 } });
    expect(byName['created.txt']!.patch).toContain('deleted file mode 100644\nindex 3e75765..0000000\n--- a/created.txt\n+++ /dev/null\n');

    // git applies the patches and reaches exactly the checkpoint's state.
    const patch = path.join(project.outside, 'all.patch');
    fs.writeFileSync(patch, changes(diffs).map((diff) => diff.patch).join(''));
    const applied = spawnSync('git', ['apply', '--unsafe-paths', patch], { cwd: project.root, encoding: 'utf8' });
    expect(applied.stderr).toBe('');
    expect(project.snapshot()).toEqual(atCheckpoint);
  });

  it('counts exactly what the rewind reports, file by file', async () => {
    const project = tempProject();
    const lines = (count: number, seed: number) => Array.from({ length: count }, (_, index) => `line ${(index * seed) % 97}\n`).join('');
    project.write('a.txt', lines(400, 7));
    project.write('b.txt', lines(50, 3));
    const manager = await project.open();
    const turn = await manager.checkpoint(newId());
    await manager.trackEdit('a.txt');
    await manager.trackEdit('b.txt');
    project.write('a.txt', lines(380, 11));
    project.write('b.txt', lines(90, 5));

    const diffs = changes(await manager.diffFiles(turn));
    const preview = await manager.rewindFiles(turn, { dryRun: true });

    expect(diffs.map(({ path: file, action, insertions, deletions, binary, statsSkipped, conflict, toolCallIds }) => ({ path: file, action, insertions, deletions, binary, statsSkipped, conflict, toolCallIds }))).toEqual(
      preview.files,
    );
    for (const diff of diffs) {
      const added = diff.patch!.split('\n').filter((line) => line.startsWith('+') && !line.startsWith('+++')).length;
      const removed = diff.patch!.split('\n').filter((line) => line.startsWith('-') && !line.startsWith('---')).length;
      expect([added, removed]).toEqual([diff.insertions, diff.deletions]);
    }
  });

  it('flags binary files, with git\'s Binary files line, and too large and too complex files, with exact statistics and no patch', async () => {
    const project = tempProject();
    project.write('image.bin', Buffer.from([0x89, 0x50, 0x00, 0x01]));
    project.write('big.txt', 'x\n'.repeat(3000));
    project.write('shuffled.txt', Array.from({ length: 500 }, (_, index) => `${index}\n`).join(''));
    const manager = await project.open();
    const turn = await manager.checkpoint(newId());
    for (const file of ['image.bin', 'big.txt', 'shuffled.txt']) await manager.trackEdit(file);
    project.write('image.bin', Buffer.from([0x89, 0x50, 0x00, 0x02]));
    project.write('big.txt', 'y\n'.repeat(3000));
    project.write('shuffled.txt', Array.from({ length: 500 }, (_, index) => `${(index * 7919) % 500}\n`).join(''));

    const byName = (diffs: FileDiff[]) => Object.fromEntries(changes(diffs).map((diff) => [path.basename(diff.path), diff]));
    const diffs = byName(await manager.diffFiles(turn, { maxPatchBytes: 5000, maxEditLength: 100 }));

    expect(diffs['image.bin']).toMatchObject({ binary: true, tooLarge: false, tooComplex: false, insertions: 0, deletions: 0 });
    expect(diffs['big.txt']).toMatchObject({ binary: false, tooLarge: true, tooComplex: false, insertions: 3000, deletions: 3000 });
    expect(diffs['shuffled.txt']).toMatchObject({ binary: false, tooLarge: false, tooComplex: true });
    expect(diffs['shuffled.txt']!.insertions).toBeGreaterThan(100);
    expect(diffs['image.bin']!.patch).toBe('diff --git a/image.bin b/image.bin\nindex 23e9871..32f6e44 100644\nBinary files a/image.bin and b/image.bin differ\n');
    for (const diff of [diffs['big.txt']!, diffs['shuffled.txt']!]) expect(diff.patch).toBeUndefined();

    const relaxed = byName(await manager.diffFiles(turn, { maxPatchBytes: 10_000 }));
    expect(relaxed['big.txt']!.patch).toContain('\n-y\n-y\n');
    expect(relaxed['big.txt']!.patch).toContain('\n+x\n+x\n');
    expect(relaxed['shuffled.txt']).toMatchObject({ tooComplex: false, insertions: diffs['shuffled.txt']!.insertions });
  });

  it('gives up on a pathological diff instead of hanging, with the default bounds', async () => {
    const project = tempProject();
    // The same 60,000 lines in another order: nothing to set aside, a huge minimal edit.
    const lines = Array.from({ length: 60_000 }, (_, index) => `line ${index}\n`);
    project.write('huge.txt', lines.join(''));
    const manager = await project.open();
    const turn = await manager.checkpoint(newId());
    await manager.trackEdit('huge.txt');
    project.write('huge.txt', lines.map((_, index) => lines[(index * 7919) % lines.length]).join(''));

    const [diff] = changes(await manager.diffFiles(turn));

    expect(diff).toMatchObject({ action: 'restore', tooComplex: true });
    expect(diff!.patch).toBeUndefined();
  });

  it('diffs large files whose edited lines are new, however many', async () => {
    const project = tempProject();
    const lines = Array.from({ length: 30_000 }, (_, index) => `const value${index} = compute(${index});\n`);
    project.write('large.ts', lines.join(''));
    const manager = await project.open();
    const turn = await manager.checkpoint(newId());
    await manager.trackEdit('large.ts');
    project.write('large.ts', lines.map((line, index) => (index % 3 === 0 ? line.replace('compute', 'recompute') : line)).join(''));

    const [diff] = changes(await manager.diffFiles(turn));

    expect(diff).toMatchObject({ tooComplex: false, insertions: 10_000, deletions: 10_000 });
    expect(diff!.patch!.split('\n').filter((line) => line.startsWith('+const')).length).toBe(10_000);
  });

  it('compares bytes, shows UTF-8 text as text, and text that is not UTF-8 as binary, as its bytes would not survive a patch', async () => {
    const project = tempProject();
    project.write('menu.txt', 'café\n');
    project.write('legacy.txt', Buffer.from('caf\xe9\n', 'latin1'));
    const manager = await project.open();
    const turn = await manager.checkpoint(newId());
    await manager.trackEdit('menu.txt');
    await manager.trackEdit('legacy.txt');
    project.write('menu.txt', 'crème\n');
    project.write('legacy.txt', Buffer.from('caf\xe8\n', 'latin1'));

    const diffs = changes(await manager.diffFiles(turn));

    expect(diffs.find((diff) => diff.path.endsWith('menu.txt'))!.patch).toContain('-crème\n+café\n');
    // Two different invalid UTF-8 lines still count as a change, and the patch cannot carry them as text.
    expect(diffs.find((diff) => diff.path.endsWith('legacy.txt'))).toMatchObject({
      insertions: 1,
      deletions: 1,
      binary: true,
      patch: expect.stringContaining('Binary files a/legacy.txt and b/legacy.txt differ\n'),
    });
  });

  it('lists the files a rewind would leave alone, with the reason', async () => {
    const project = tempProject();
    project.write('target.txt', 'before\n');
    const manager = await project.open();
    const turn = await manager.checkpoint(newId());
    await manager.trackEdit('target.txt');
    fs.rmSync(project.file('target.txt'));
    fs.symlinkSync(path.join(project.outside, 'elsewhere'), project.file('target.txt'));

    expect(await manager.diffFiles(turn)).toEqual([
      { path: project.file('target.txt'), action: 'skip', reason: 'symlink', message: expect.stringContaining('symbolic link') },
    ]);
  });

  it('paths: limits the diff to files or directories, relative to the project root or absolute', async () => {
    const project = tempProject();
    const manager = await project.open();
    const turn = await manager.checkpoint(newId());
    for (const file of ['src/a.ts', 'src/deep/b.ts', 'srcfile.ts', 'c.ts']) {
      await manager.trackEdit(file);
      project.write(file, 'x\n');
    }
    const names = async (paths: string[]) => (await manager.diffFiles(turn, { paths })).map((diff) => path.relative(project.root, diff.path));

    expect(await names(['src'])).toEqual(['src/a.ts', 'src/deep/b.ts']);
    expect(await names([project.file('c.ts'), 'src/deep/b.ts'])).toEqual(['c.ts', 'src/deep/b.ts']);
    expect(await names(['untracked.ts'])).toEqual([]);
    await expect(manager.diffFiles(turn, { paths: [''] })).rejects.toMatchObject({ code: 'INVALID_PATH' });
  });

  it('writes nothing: files and store are unchanged', async () => {
    const project = tempProject();
    project.write('a.txt', 'a\n');
    const manager = await project.open();
    const turn = await manager.checkpoint(newId());
    await manager.trackEdit('a.txt');
    project.write('a.txt', 'b\n');
    const before = [project.snapshot(), snapshotTree(project.store)];

    await manager.diffFiles(turn);

    expect([project.snapshot(), snapshotTree(project.store)]).toEqual(before);
  });

  it('rejects an unknown checkpoint and an id that is not a UUID', async () => {
    const project = tempProject();
    const manager = await project.open();
    await manager.checkpoint(newId());

    await expect(manager.diffFiles(newId())).rejects.toMatchObject({ code: 'CHECKPOINT_NOT_FOUND', message: 'No file checkpoint found for this message.' });
    await expect(manager.diffFiles('nope')).rejects.toMatchObject({ code: 'INVALID_ID' });
  });
});

/** The numbers of each `@@` line of a patch, as a hunk carries them. */
function headerNumbers(patch: string): Array<Omit<PatchHunk, 'id'>> {
  return [...patch.matchAll(/^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/gm)].map((match) => ({
    oldStart: Number(match[1]),
    oldLines: Number(match[2] ?? 1),
    newStart: Number(match[3]),
    newLines: Number(match[4] ?? 1),
  }));
}

describe('diffFiles(id) names each hunk of a text patch', () => {
  const numbered = (count: number) => Array.from({ length: count }, (_, index) => `line ${index + 1}\n`);

  it('gives two separated edits two hunks, with the numbers of their @@ lines and ids that come back on the next call', async () => {
    const project = tempProject();
    const lines = numbered(20);
    project.write('notes.txt', lines.join(''));
    const manager = await project.open();
    const turn = await manager.checkpoint(newId());
    await manager.trackEdit('notes.txt');
    project.write('notes.txt', lines.map((line, index) => (index === 1 || index === 14 ? line.toUpperCase() : line)).join(''));

    const [diff] = changes(await manager.diffFiles(turn));
    const [again] = changes(await manager.diffFiles(turn));

    const ids = diff!.hunks!.map((hunk) => hunk.id);
    expect(ids).toEqual([expect.stringMatching(/^[0-9a-f]{12}-0$/), expect.stringMatching(/^[0-9a-f]{12}-1$/)]);
    expect(new Set(ids.map((id) => parseHunkId(id)!.digest)).size).toBe(1);
    expect(diff!.hunks!.map(({ id: _, ...numbers }) => numbers)).toEqual(headerNumbers(diff!.patch!));
    expect(diff!.hunks!.map(({ id: _, ...numbers }) => numbers)).toEqual([
      { oldStart: 1, oldLines: 5, newStart: 1, newLines: 5 },
      { oldStart: 12, oldLines: 7, newStart: 12, newLines: 7 },
    ]);
    expect(again!.hunks).toEqual(diff!.hunks);
  });

  it('gives new digests when the file changes, and the old ids back when its content does', async () => {
    const project = tempProject();
    const lines = numbered(20);
    project.write('notes.txt', lines.join(''));
    const manager = await project.open();
    const turn = await manager.checkpoint(newId());
    await manager.trackEdit('notes.txt');
    const edited = lines.map((line, index) => (index === 1 || index === 14 ? line.toUpperCase() : line)).join('');
    project.write('notes.txt', edited);
    const ids = async () => changes(await manager.diffFiles(turn))[0]!.hunks!.map((hunk) => hunk.id);
    const first = await ids();

    project.write('notes.txt', edited.replace('line 3\n', 'line three\n'));
    const changed = await ids();
    project.write('notes.txt', edited);
    const restored = await ids();

    expect(changed).toHaveLength(2);
    expect(parseHunkId(changed[0]!)!.digest).not.toBe(parseHunkId(first[0]!)!.digest);
    expect(restored).toEqual(first);
  });

  it('numbers change blocks without context: a hunk of context 3 covers blocks first..last, which context 0 shows one by one', async () => {
    const project = tempProject();
    const pairs = Array.from({ length: 40 }, (_, index) => generateTriple(index + 1)).filter((triple) => !triple.ours.equals(triple.theirs));
    pairs.forEach((pair, index) => project.write(`file-${index}.txt`, pair.theirs));
    const manager = await project.open();
    const turn = await manager.checkpoint(newId());
    for (const index of pairs.keys()) await manager.trackEdit(`file-${index}.txt`);
    pairs.forEach((pair, index) => project.write(`file-${index}.txt`, pair.ours));

    const wide = changes(await manager.diffFiles(turn));
    const narrow = changes(await manager.diffFiles(turn, { context: 0 }));

    let merged = 0;
    pairs.forEach((pair, index) => {
      const name = `file-${index}.txt`;
      const blocks = changeBlocks(pair.ours, pair.theirs)!.length;
      const hunksOf = (diffs: FileChangeDiff[]) => diffs.find((diff) => path.basename(diff.path) === name)?.hunks ?? [];
      const wideHunks = hunksOf(wide);
      const narrowHunks = hunksOf(narrow);
      const digest = parseHunkId((wideHunks[0] ?? narrowHunks[0])?.id ?? '')?.digest;
      expect(narrowHunks.map((hunk) => hunk.id), name).toEqual(Array.from({ length: blocks }, (_, block) => `${digest}-${block}`));
      // The wide hunks cover the blocks in order, each one once.
      const covered = wideHunks.flatMap((hunk) => {
        const parsed = parseHunkId(hunk.id)!;
        expect(parsed.digest, name).toBe(digest);
        return Array.from({ length: parsed.last - parsed.first + 1 }, (_, step) => parsed.first + step);
      });
      expect(covered, name).toEqual(Array.from({ length: blocks }, (_, block) => block));
      merged += wideHunks.filter((hunk) => parseHunkId(hunk.id)!.last > parseHunkId(hunk.id)!.first).length;
    });
    expect(merged).toBeGreaterThan(5);
  });

  it('gives no hunks without @@ lines: binary, too large, mode only, an empty file deleted', async () => {
    const project = tempProject();
    project.write('image.bin', Buffer.from([0x89, 0x50, 0x00, 0x01]));
    project.write('big.txt', 'x\n'.repeat(3000));
    project.write('mode.sh', 'echo hi\n', 0o644);
    const manager = await project.open();
    const turn = await manager.checkpoint(newId());
    for (const file of ['image.bin', 'big.txt', 'mode.sh', 'empty.txt']) await manager.trackEdit(file);
    project.write('image.bin', Buffer.from([0x89, 0x50, 0x00, 0x02]));
    project.write('big.txt', 'y\n'.repeat(3000));
    fs.chmodSync(project.file('mode.sh'), 0o755);
    project.write('empty.txt', '');

    const diffs = changes(await manager.diffFiles(turn, { maxPatchBytes: 5000 }));

    expect(diffs.map((diff) => [path.basename(diff.path), diff.patch !== undefined, 'hunks' in diff])).toEqual([
      ['big.txt', false, false],
      ['empty.txt', true, false],
      ['image.bin', true, false],
      ['mode.sh', true, false],
    ]);
  });
});
