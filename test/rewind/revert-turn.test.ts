import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { errnoError, instrumentFs } from '../durability/helpers/fs-instrument.js';
import { newId, tempProject, type TempProject } from '../helpers/temp-project.js';
import { toolDelete, toolWrite } from '../helpers/tool-write.js';

/** Ten numbered lines; `edits` replaces some of them. */
function lines(edits: Record<number, string> = {}): string {
  return Array.from({ length: 10 }, (_, index) => `${edits[index + 1] ?? `line ${index + 1}`}\n`).join('');
}

/** Three turns: the first edits line 2 of f.txt, changes g.txt and creates new.txt; the second edits line 8 of f.txt; the third is empty. */
async function threeTurns(project: TempProject) {
  project.write('f.txt', lines());
  project.write('g.txt', 'g0\n');
  const manager = await project.open();
  const first = await manager.checkpoint(newId());
  await toolWrite(manager, project, 'f.txt', lines({ 2: 'first turn' }));
  await toolWrite(manager, project, 'g.txt', 'g1\n');
  await toolWrite(manager, project, 'new.txt', 'created\n');
  const second = await manager.checkpoint(newId());
  await toolWrite(manager, project, 'f.txt', lines({ 2: 'first turn', 8: 'second turn' }));
  const third = await manager.checkpoint(newId());
  return { manager, first, second, third };
}

describe('revertTurn(id) undoes one turn and keeps the later ones', () => {
  it('merges a file a later turn changed, restores one it did not, deletes one the turn created', async () => {
    const project = tempProject();
    const { manager, first } = await threeTurns(project);
    const before = project.snapshot();

    const preview = await manager.revertTurn(first, { dryRun: true });
    expect(project.snapshot()).toEqual(before);
    const result = await manager.revertTurn(first);

    for (const answer of [preview, result]) {
      expect(answer).toMatchObject({
        canRewind: true,
        filesChanged: [project.file('f.txt'), project.file('g.txt'), project.file('new.txt')],
        insertions: 2,
        deletions: 3,
        skipped: [],
        conflicts: [],
      });
    }
    expect(project.read('f.txt').toString()).toBe(lines({ 8: 'second turn' }));
    expect(project.read('g.txt').toString()).toBe('g0\n');
    expect(fs.existsSync(project.file('new.txt'))).toBe(false);
    const merged = result.files.find((file) => file.path === project.file('f.txt'))!;
    expect(merged).toMatchObject({ action: 'restore', insertions: 1, deletions: 1, conflict: false, merge: { status: 'clean', conflicts: [] } });
    expect(merged.toolCallIds).toEqual([`call-f.txt-${lines({ 2: 'first turn' }).length}`]);
    expect(result.files.find((file) => file.path === project.file('g.txt'))!.merge).toBeUndefined();
    expect(preview.files?.find((file) => file.path === project.file('f.txt'))!.merge?.preview).toBe(lines({ 8: 'second turn' }));
    expect(merged.merge?.preview).toBeUndefined();
  });

  it('is undone by rewinding to its undo checkpoint, byte for byte', async () => {
    const project = tempProject();
    const { manager, first } = await threeTurns(project);
    const before = project.snapshot();
    const result = await manager.revertTurn(first);
    await manager.rewindFiles(result.undoCheckpointId!);
    expect(project.snapshot()).toEqual(before);
  });

  it('leaves a file whose later change overlaps alone by default, with the conflicting lines', async () => {
    const project = tempProject();
    project.write('f.txt', lines());
    const manager = await project.open();
    const first = await manager.checkpoint(newId());
    await toolWrite(manager, project, 'f.txt', lines({ 5: 'first' }));
    await manager.checkpoint(newId());
    await toolWrite(manager, project, 'f.txt', lines({ 5: 'second' }));
    await manager.checkpoint(newId());
    const after = project.read('f.txt');

    const skipped = await manager.revertTurn(first);
    expect(project.read('f.txt')).toEqual(after);
    expect(skipped).toMatchObject({ filesChanged: [], conflicts: [project.file('f.txt')], skippedByReason: { 'merge-conflict': 1 }, skippedLinks: 0 });
    expect(skipped.skipped[0]).toMatchObject({
      path: project.file('f.txt'),
      reason: 'merge-conflict',
      merge: { status: 'conflict', conflicts: [{ current: { start: 5, count: 1 }, base: { start: 5, count: 1 }, restored: { start: 5, count: 1 } }] },
    });

    await manager.revertTurn(first, { onConflict: 'markers' });
    const label = first.slice(0, 8);
    expect(project.read('f.txt').toString()).toBe(
      lines({ 5: `<<<<<<< current\nsecond\n||||||| after turn ${label}\nfirst\n=======\nline 5\n>>>>>>> before turn ${label}` }),
    );
  });

  it('puts back the version from before the turn with onConflict: overwrite', async () => {
    const project = tempProject();
    project.write('f.txt', lines());
    const manager = await project.open();
    const first = await manager.checkpoint(newId());
    await toolWrite(manager, project, 'f.txt', lines({ 5: 'first' }));
    await manager.checkpoint(newId());
    await toolWrite(manager, project, 'f.txt', lines({ 5: 'second' }));

    const result = await manager.revertTurn(first, { onConflict: 'overwrite' });
    expect(project.read('f.txt').toString()).toBe(lines());
    expect(result.files[0]).toMatchObject({ action: 'restore', merge: { status: 'conflict' } });
  });

  it('treats a file the turn created and a later turn edited as a conflict: left alone, or deleted with overwrite', async () => {
    const project = tempProject();
    const manager = await project.open();
    const first = await manager.checkpoint(newId());
    await toolWrite(manager, project, 'made.txt', 'made\n');
    await manager.checkpoint(newId());
    await toolWrite(manager, project, 'made.txt', 'made\nthen edited\n');

    const skipped = await manager.revertTurn(first);
    expect(project.read('made.txt').toString()).toBe('made\nthen edited\n');
    expect(skipped.skipped[0]).toMatchObject({ reason: 'merge-conflict', merge: { status: 'conflict', conflicts: [] } });
    expect(skipped.skipped[0]!.message).toContain('the change created it and it was edited since');

    const overwritten = await manager.revertTurn(first, { onConflict: 'overwrite' });
    expect(fs.existsSync(project.file('made.txt'))).toBe(false);
    expect(overwritten).toMatchObject({ filesChanged: [project.file('made.txt')], deletions: 2 });
  });

  it('treats a file a later turn deleted as a conflict: it stays deleted unless overwritten', async () => {
    const project = tempProject();
    project.write('f.txt', lines());
    const manager = await project.open();
    const first = await manager.checkpoint(newId());
    await toolWrite(manager, project, 'f.txt', lines({ 1: 'first' }));
    await manager.checkpoint(newId());
    await toolDelete(manager, project, 'f.txt');

    const skipped = await manager.revertTurn(first, { onConflict: 'markers' });
    expect(fs.existsSync(project.file('f.txt'))).toBe(false);
    expect(skipped.skipped[0]!.message).toContain('it was deleted since the change');
    await manager.revertTurn(first, { onConflict: 'overwrite' });
    expect(project.read('f.txt').toString()).toBe(lines());
  });

  it('merges a file this turn deleted and a later turn created again from nothing, as git merge-file does', async () => {
    const project = tempProject();
    project.write('f.txt', 'same start\n');
    const manager = await project.open();
    const first = await manager.checkpoint(newId());
    await toolDelete(manager, project, 'f.txt');
    await manager.checkpoint(newId());
    await toolWrite(manager, project, 'f.txt', 'same start\nand more\n');

    const result = await manager.revertTurn(first);
    expect(project.read('f.txt').toString()).toBe('same start\nand more\n');
    expect(result.skipped[0]).toMatchObject({ reason: 'merge-conflict', merge: { status: 'conflict', conflicts: [{ current: { start: 1, count: 2 }, base: { start: 1, count: 0 }, restored: { start: 1, count: 1 } }] } });
  });

  it('reverts the latest turn against what the tools wrote, keeping an edit made after them', async () => {
    const project = tempProject();
    project.write('f.txt', lines());
    const manager = await project.open();
    const turn = await manager.checkpoint(newId());
    await toolWrite(manager, project, 'f.txt', lines({ 3: 'agent' }));
    project.write('f.txt', lines({ 3: 'agent', 9: 'user' }));

    const result = await manager.revertTurn(turn);
    expect(project.read('f.txt').toString()).toBe(lines({ 9: 'user' }));
    expect(result.files[0]).toMatchObject({ conflict: false, merge: { status: 'clean' } });
  });

  it('reverting the latest turn again changes nothing: the edit made after the tools stays', async () => {
    const project = tempProject();
    project.write('f.txt', lines());
    const manager = await project.open();
    const turn = await manager.checkpoint(newId());
    await toolWrite(manager, project, 'f.txt', lines({ 3: 'agent' }));
    project.write('f.txt', lines({ 3: 'agent', 9: 'user' }));
    await manager.revertTurn(turn);

    const preview = await manager.revertTurn(turn, { dryRun: true });
    const again = await manager.revertTurn(turn);
    for (const answer of [preview, again]) expect(answer).toMatchObject({ filesChanged: [], skipped: [] });
    expect(project.read('f.txt').toString()).toBe(lines({ 9: 'user' }));
    // The edit is still someone else's: a rewind that skips conflicts leaves it alone.
    const skipping = await manager.rewindFiles(turn, { skipConflicts: true });
    expect(skipping).toMatchObject({ filesChanged: [], skippedByReason: { conflict: 1 } });
    expect(project.read('f.txt').toString()).toBe(lines({ 9: 'user' }));
  });

  it('a rewind inside the latest turn does not end it: files the tools wrote after it are reverted too', async () => {
    const project = tempProject();
    project.write('f.txt', lines());
    const manager = await project.open();
    const turn = await manager.checkpoint(newId());
    await toolWrite(manager, project, 'f.txt', lines({ 3: 'agent' }));
    await manager.rewindFiles(turn); // an undo point, not a user message
    await toolWrite(manager, project, 'f.txt', lines({ 4: 'agent again' }));
    await toolWrite(manager, project, 'made.txt', 'made after the rewind\n');

    const result = await manager.revertTurn(turn);
    expect(result.filesChanged).toEqual([project.file('f.txt'), project.file('made.txt')]);
    expect(project.read('f.txt').toString()).toBe(lines());
    expect(project.exists('made.txt')).toBe(false);
  });

  it('records what it wrote: a reopened session finds no conflict in a merged file', async () => {
    const project = tempProject();
    const { manager, first, third } = await threeTurns(project);
    await manager.revertTurn(first);
    await manager.close();

    const reopened = await project.open({ resume: manager.sessionId });
    const preview = await reopened.rewindFiles(third, { dryRun: true });
    expect(preview.canRewind && preview.conflicts).toEqual([]);
    expect(preview.canRewind && preview.filesChanged.sort()).toEqual([project.file('f.txt'), project.file('g.txt'), project.file('new.txt')].sort());
    await reopened.rewindFiles(third);
    expect(project.read('f.txt').toString()).toBe(lines({ 2: 'first turn', 8: 'second turn' }));
    await reopened.close();
  });

  it('reverts only the named files of the turn', async () => {
    const project = tempProject();
    const { manager, first } = await threeTurns(project);
    const result = await manager.revertTurn(first, { paths: ['g.txt'] });
    expect(result.filesChanged).toEqual([project.file('g.txt')]);
    expect(project.read('f.txt').toString()).toBe(lines({ 2: 'first turn', 8: 'second turn' }));
    expect(project.read('new.txt').toString()).toBe('created\n');
  });

  it('answers a clear error for an unknown onConflict', async () => {
    const project = tempProject();
    const { manager, first } = await threeTurns(project);
    await expect(manager.revertTurn(first, { onConflict: 'merge' as never })).rejects.toMatchObject({ code: 'INVALID_OPTIONS' });
    const preview = await manager.revertTurn(first, { dryRun: true, onConflict: 'theirs' as never });
    expect(preview).toMatchObject({ canRewind: false, errorCode: 'INVALID_OPTIONS' });
  });
});

describe("rewindFiles(id, { onConflict: 'merge' }) keeps edits made after the tools", () => {
  async function agentThenUser(project: TempProject, user: Record<number, string>) {
    project.write('f.txt', lines());
    const manager = await project.open();
    const turn = await manager.checkpoint(newId());
    await toolWrite(manager, project, 'f.txt', lines({ 2: 'agent' }));
    project.write('f.txt', lines({ 2: 'agent', ...user }));
    return { manager, turn };
  }

  it('undoes the tools changes and keeps the other edit', async () => {
    const project = tempProject();
    const { manager, turn } = await agentThenUser(project, { 9: 'user' });
    const preview = await manager.rewindFiles(turn, { dryRun: true, onConflict: 'merge' });
    const result = await manager.rewindFiles(turn, { onConflict: 'merge' });
    for (const answer of [preview, result]) {
      expect(answer).toMatchObject({ filesChanged: [project.file('f.txt')], insertions: 1, deletions: 1, conflicts: [], skipped: [] });
      expect(answer.files![0]).toMatchObject({ conflict: false, merge: { status: 'clean' } });
    }
    expect(project.read('f.txt').toString()).toBe(lines({ 9: 'user' }));
  });

  it('leaves a file alone when the edit overlaps the tools changes; markers writes the conflict', async () => {
    const project = tempProject();
    const { manager, turn } = await agentThenUser(project, { 2: 'user over agent' });
    const skipped = await manager.rewindFiles(turn, { onConflict: 'merge' });
    expect(project.read('f.txt').toString()).toBe(lines({ 2: 'user over agent' }));
    expect(skipped).toMatchObject({ filesChanged: [], conflicts: [project.file('f.txt')], skippedByReason: { 'merge-conflict': 1 } });

    await manager.rewindFiles(turn, { onConflict: 'markers' });
    expect(project.read('f.txt').toString()).toContain('<<<<<<< current\nuser over agent\n||||||| written by the tools\nagent\n=======\nline 2\n>>>>>>> checkpoint');
  });

  it('a second merge rewind changes nothing: the other edit stays, and stays a conflict', async () => {
    const project = tempProject();
    const { manager, turn } = await agentThenUser(project, { 9: 'user' });
    await manager.rewindFiles(turn, { onConflict: 'merge' });

    const preview = await manager.rewindFiles(turn, { dryRun: true, onConflict: 'merge' });
    const again = await manager.rewindFiles(turn, { onConflict: 'merge' });
    for (const answer of [preview, again]) expect(answer).toMatchObject({ filesChanged: [], skipped: [] });
    expect(project.read('f.txt').toString()).toBe(lines({ 9: 'user' }));
    const skipping = await manager.rewindFiles(turn, { skipConflicts: true });
    expect(skipping).toMatchObject({ filesChanged: [], skippedByReason: { conflict: 1 } });
    expect(project.read('f.txt').toString()).toBe(lines({ 9: 'user' }));
  });

  it('a merge rewind rolled back after a failed write keeps the other edit when tried again', async () => {
    const project = tempProject();
    const { manager, turn } = await agentThenUser(project, { 9: 'user' });
    await toolWrite(manager, project, 'z.txt', 'created by the tools\n');
    // The rewind merges f.txt, then fails to delete z.txt (deletions come last), and rolls f.txt back.
    const restore = instrumentFs(['unlinkSync'], (name, args) => (String(args[0]).endsWith('/z.txt') ? errnoError('EIO', name) : undefined));
    try {
      await expect(manager.rewindFiles(turn, { onConflict: 'merge' })).rejects.toMatchObject({ code: 'REWIND_FAILED' });
    } finally {
      restore();
    }
    expect(project.read('f.txt').toString()).toBe(lines({ 2: 'agent', 9: 'user' }));

    const again = await manager.rewindFiles(turn, { onConflict: 'merge' });
    expect(again.files.find((file) => file.path === project.file('f.txt'))).toMatchObject({ merge: { status: 'clean' } });
    expect(project.read('f.txt').toString()).toBe(lines({ 9: 'user' }));
  });

  it('rejects skipConflicts with a different onConflict', async () => {
    const project = tempProject();
    const { manager, turn } = await agentThenUser(project, { 9: 'user' });
    await expect(manager.rewindFiles(turn, { skipConflicts: true, onConflict: 'merge' })).rejects.toMatchObject({ code: 'INVALID_OPTIONS' });
  });
});
