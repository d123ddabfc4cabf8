import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { CheckpointManager, FileChangeDiff } from '../../src/index.js';
import { gitApplyUnidiffZero } from '../helpers/git-apply.js';
import { newId, tempProject, type TempProject } from '../helpers/temp-project.js';

const lines = (edits: Record<number, string> = {}, count = 12) => Array.from({ length: count }, (_, index) => `${edits[index + 1] ?? `line ${index + 1}`}\n`).join('');

/** One turn that edits lines 2 and 10 of f.txt, changes g.txt and creates new.txt. */
async function oneTurn(project: TempProject): Promise<{ manager: CheckpointManager; turn: string }> {
  project.write('f.txt', lines());
  project.write('g.txt', 'g0\n');
  const manager = await project.open();
  const turn = await manager.checkpoint(newId());
  for (const file of ['f.txt', 'g.txt', 'new.txt']) await manager.trackEdit(file);
  project.write('f.txt', lines({ 2: 'two', 10: 'ten' }));
  project.write('g.txt', 'g1\n');
  project.write('new.txt', 'created\n');
  return { manager, turn };
}

async function diffOf(manager: CheckpointManager, turn: string, file: string, context?: number): Promise<FileChangeDiff> {
  const [diff] = await manager.diffFiles(turn, { paths: [file], ...(context !== undefined ? { context } : {}) });
  if (diff === undefined || diff.action === 'skip') throw new Error(`no change for ${file}`);
  return diff;
}

describe('rewindFiles(id, { hunks }) applies only the chosen hunks', () => {
  it('rewinds one hunk of a file and leaves the rest of it, and every other file, as they are', async () => {
    const project = tempProject();
    const { manager, turn } = await oneTurn(project);
    const diff = await diffOf(manager, turn, 'f.txt');
    expect(diff.hunks).toHaveLength(2);
    const before = project.snapshot();

    const preview = await manager.rewindFiles(turn, { dryRun: true, hunks: [diff.hunks![0]!.id] });
    expect(project.snapshot()).toEqual(before);
    const result = await manager.rewindFiles(turn, { hunks: [diff.hunks![0]!.id] });

    for (const answer of [preview, result]) {
      expect(answer).toMatchObject({ canRewind: true, filesChanged: [project.file('f.txt')], insertions: 1, deletions: 1, skipped: [] });
    }
    expect(project.read('f.txt').toString()).toBe(lines({ 10: 'ten' }));
    expect(project.read('g.txt').toString()).toBe('g1\n');
    expect(project.read('new.txt').toString()).toBe('created\n');

    await manager.rewindFiles(result.undoCheckpointId!);
    expect(project.snapshot()).toEqual(before);
  });

  it('with every hunk of a file chosen, is the full rewind of that file: a created file is deleted', async () => {
    const project = tempProject();
    const { manager, turn } = await oneTurn(project);
    const f = await diffOf(manager, turn, 'f.txt');
    const created = await diffOf(manager, turn, 'new.txt');
    await manager.rewindFiles(turn, { hunks: [...f.hunks!, ...created.hunks!].map((hunk) => hunk.id) });
    expect(project.read('f.txt').toString()).toBe(lines());
    expect(fs.existsSync(project.file('new.txt'))).toBe(false);
  });

  it('matches git apply of the chosen hunks, for random choices over generated edits', async () => {
    const project = tempProject();
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const originals = Array.from({ length: 20 }, (_, file) => Array.from({ length: 30 }, (_, line) => `f${file} l${line}${line % 7 === 0 ? '\r' : ''}\n`).join(''));
    originals.forEach((content, index) => project.write(`file${index}.txt`, content));
    const manager = await project.open();
    const turn = await manager.checkpoint(newId());
    for (let index = 0; index < originals.length; index += 1) {
      await manager.trackEdit(`file${index}.txt`);
      const edited = originals[index]!.split('\n').flatMap((line) => (random() < 0.15 ? [] : random() < 0.15 ? [`${line} edited`, 'inserted'] : [line]));
      project.write(`file${index}.txt`, edited.join('\n').replace(/\n$/, random() < 0.3 ? '' : '\n'));
    }

    const diffs = (await manager.diffFiles(turn, { context: 0 })).filter((diff): diff is FileChangeDiff => diff.action !== 'skip' && diff.hunks !== undefined);
    const chosen = diffs.map((diff) => diff.hunks!.map((_, index) => index).filter(() => random() < 0.5));
    const expected = gitApplyUnidiffZero(diffs.map((diff, index) => ({ current: fs.readFileSync(diff.path), hunks: Buffer.from(renumbered(diff, chosen[index]!)) })));

    await manager.rewindFiles(turn, { hunks: diffs.flatMap((diff, index) => chosen[index]!.map((at) => diff.hunks![at]!.id)) });
    diffs.forEach((diff, index) => expect(fs.readFileSync(diff.path), diff.path).toEqual(expected[index]));
  });

  it('fails with HUNK_NOT_FOUND, writing nothing, once the file changed since the diff', async () => {
    const project = tempProject();
    const { manager, turn } = await oneTurn(project);
    const diff = await diffOf(manager, turn, 'f.txt');
    project.write('f.txt', lines({ 2: 'two', 10: 'ten', 12: 'user' }));
    const before = project.snapshot();

    await expect(manager.rewindFiles(turn, { hunks: [diff.hunks![0]!.id] })).rejects.toMatchObject({ code: 'HUNK_NOT_FOUND', details: { hunk: diff.hunks![0]!.id } });
    expect(await manager.rewindFiles(turn, { dryRun: true, hunks: [diff.hunks![0]!.id] })).toMatchObject({ canRewind: false, errorCode: 'HUNK_NOT_FOUND', errorDetails: { hunk: diff.hunks![0]!.id } });
    expect(project.snapshot()).toEqual(before);
  });

  it('rejects a malformed id and hunks combined with a merge as INVALID_OPTIONS', async () => {
    const project = tempProject();
    const { manager, turn } = await oneTurn(project);
    const diff = await diffOf(manager, turn, 'f.txt');
    await expect(manager.rewindFiles(turn, { hunks: ['not-a-hunk'] })).rejects.toMatchObject({ code: 'INVALID_OPTIONS' });
    await expect(manager.rewindFiles(turn, { hunks: [] })).rejects.toMatchObject({ code: 'INVALID_OPTIONS' });
    await expect(manager.rewindFiles(turn, { hunks: [diff.hunks![0]!.id], onConflict: 'merge' })).rejects.toMatchObject({ code: 'INVALID_OPTIONS' });
  });
});

/**
 * The chosen `@@` hunks of a context-0 patch, their new-side line numbers
 * counting only the chosen hunks before them (git apply places a hunk by its
 * new-side number, taking the hunks before it as applied).
 */
function renumbered(diff: FileChangeDiff, chosen: readonly number[]): string {
  const texts = diff.patch!.slice(diff.patch!.indexOf('\n@@ ') + 1).split(/^(?=@@ )/m);
  let delta = 0;
  return diff.hunks!
    .map((hunk, index) => {
      if (!chosen.includes(index)) return '';
      const start = hunk.oldLines === 0 ? hunk.oldStart + 1 : hunk.oldStart; // an empty side is written as the line before it
      const newStart = hunk.newLines === 0 ? start + delta - 1 : start + delta;
      delta += hunk.newLines - hunk.oldLines;
      return texts[index]!.replace(/^@@ -\S+ \+\d+/, (header) => header.replace(/\+\d+$/, `+${newStart}`));
    })
    .join('');
}
