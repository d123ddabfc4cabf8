import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CheckpointManager, type CheckpointManagerOptions } from '../../src/index.js';
import { createSandbox, type Sandbox } from './helpers/sandbox.js';

/**
 * The other safeguards of "never lose a byte": conflicts (someone else's
 * change a rewind would discard) reported and optionally skipped, the backup
 * size cap, temporary files of crashed writes swept, and a store that never
 * tracks itself.
 */

const sandboxes: Sandbox[] = [];
const managers: CheckpointManager[] = [];
afterEach(async () => {
  for (const manager of managers.splice(0)) await manager.close().catch(() => {});
  while (sandboxes.length > 0) sandboxes.pop()!.dispose();
});

async function open(files: Record<string, string>, options: Partial<CheckpointManagerOptions> = {}) {
  const sandbox = createSandbox();
  sandboxes.push(sandbox);
  sandbox.writeFiles(files);
  const manager = await CheckpointManager.open({ cwd: sandbox.root, storeDir: sandbox.store, durability: 'none', ...options });
  managers.push(manager);
  return { sandbox, manager, file: (name: string) => path.join(sandbox.root, name) };
}

describe('conflicts', () => {
  async function agentThenUser() {
    const setup = await open({ 'mine.txt': 'mine 0\n', 'shared.txt': 'shared 0\n', 'untouched.txt': 'untouched 0\n' });
    const { manager, sandbox } = setup;
    const turn = await manager.checkpoint();
    await manager.tools.write({ file_path: 'mine.txt', content: 'mine by the agent\n' });
    await manager.tools.write({ file_path: 'shared.txt', content: 'shared by the agent\n' });
    await manager.trackEdit('untouched.txt'); // tracked, but no tool has written it
    // Then the user (or a shell) changes a file the agent wrote, and another tracked one.
    sandbox.writeFiles({ 'shared.txt': 'shared, then changed by the user\n', 'untouched.txt': 'untouched, changed by the user\n' });
    return { ...setup, turn };
  }

  it('the dry run reports a file changed since the tool wrote it, per file and as a list', async () => {
    const { manager, turn, file } = await agentThenUser();
    const preview = await manager.rewindFiles(turn, { dryRun: true });

    expect(preview.conflicts).toEqual([file('shared.txt')]);
    const byPath = Object.fromEntries((preview.files ?? []).map((change) => [change.path, change.conflict]));
    expect(byPath).toEqual({ [file('mine.txt')]: false, [file('shared.txt')]: true, [file('untouched.txt')]: false });
  });

  it('skipConflicts leaves those files alone and rewinds the rest; the dry run says so first', async () => {
    const { manager, sandbox, turn, file } = await agentThenUser();
    const preview = await manager.rewindFiles(turn, { dryRun: true, skipConflicts: true });
    const result = await manager.rewindFiles(turn, { skipConflicts: true });

    for (const outcome of [preview, result]) {
      expect(outcome.filesChanged).toEqual([file('mine.txt'), file('untouched.txt')]);
      expect(outcome.skipped).toEqual([expect.objectContaining({ path: file('shared.txt'), reason: 'conflict' })]);
      expect(outcome.conflicts).toEqual([file('shared.txt')]);
      expect(outcome.skippedLinks).toBe(0); // a conflict is not a safety refusal
    }
    expect(sandbox.files()).toEqual({ 'mine.txt': 'mine 0\n', 'shared.txt': 'shared, then changed by the user\n', 'untouched.txt': 'untouched 0\n' });
  });

  it('without skipConflicts the user’s change is overwritten, and the undo checkpoint brings it back', async () => {
    const { manager, sandbox, turn } = await agentThenUser();
    const before = sandbox.files();
    const result = await manager.rewindFiles(turn);
    expect(sandbox.files()).toEqual({ 'mine.txt': 'mine 0\n', 'shared.txt': 'shared 0\n', 'untouched.txt': 'untouched 0\n' });

    await manager.rewindFiles(result.undoCheckpointId!);
    expect(sandbox.files()).toEqual(before);
  });
});

describe('the backup size cap', () => {
  it('tracking a file over maxFileBytes fails with FILE_TOO_LARGE, saying how to raise it, and records nothing', async () => {
    const { manager } = await open({ 'big.bin': 'x'.repeat(101), 'small.txt': 'small\n' }, { maxFileBytes: 100 });
    const turn = await manager.checkpoint();
    await expect(manager.trackEdit('big.bin')).rejects.toMatchObject({ code: 'FILE_TOO_LARGE', message: expect.stringMatching(/101 bytes.*100 bytes.*maxFileBytes/) });
    await manager.trackEdit('small.txt');
    expect((await manager.listCheckpoints()).find((checkpoint) => checkpoint.id === turn)!.files.map((name) => path.basename(name))).toEqual(['small.txt']);
  });

  it('a tracked file that grew over the cap is never overwritten (its bytes could not be backed up first)', async () => {
    const { manager, sandbox } = await open({ 'grows.txt': 'small\n' }, { maxFileBytes: 100 });
    const turn = await manager.checkpoint();
    await manager.trackEdit('grows.txt');
    sandbox.writeFiles({ 'grows.txt': 'y'.repeat(500) });

    const result = await manager.rewindFiles(turn);

    expect(result.skipped).toEqual([expect.objectContaining({ reason: 'too-large' })]);
    expect(sandbox.files()).toEqual({ 'grows.txt': 'y'.repeat(500) });
    // Back under the cap, the same rewind restores it.
    sandbox.writeFiles({ 'grows.txt': 'small again, but different\n' });
    await manager.rewindFiles(turn);
    expect(sandbox.files()).toEqual({ 'grows.txt': 'small\n' });
  });

  it('a tracked file the latest checkpoint holds no backup of (over the cap then) is not written: trackEdit and the tools refuse', async () => {
    const { manager, sandbox } = await open({ 'grows.txt': 'small\n' }, { maxFileBytes: 100 });
    await manager.checkpoint();
    await manager.trackEdit('grows.txt');
    sandbox.writeFiles({ 'grows.txt': `${'y'.repeat(500)}\n` }); // the user's content, over the cap
    const turn = await manager.checkpoint(); // records it as too large: no bytes kept

    await expect(manager.trackEdit('grows.txt')).rejects.toMatchObject({ code: 'FILE_TOO_LARGE', message: expect.stringContaining('at the latest checkpoint') });
    await expect(manager.tools.write({ file_path: 'grows.txt', content: 'agent\n' })).rejects.toMatchObject({ code: 'FILE_TOO_LARGE', message: expect.stringContaining('at the latest checkpoint') });
    expect(sandbox.files()).toEqual({ 'grows.txt': `${'y'.repeat(500)}\n` });

    expect((await manager.rewindFiles(turn, { dryRun: true })).skipped).toEqual([expect.objectContaining({ reason: 'too-large' })]);

    // Once a checkpoint holds it again (the cap raised), it can be written, and a rewind restores it.
    await manager.close();
    const raised = await CheckpointManager.open({ cwd: sandbox.root, storeDir: sandbox.store, durability: 'none', resume: manager.sessionId, maxFileBytes: 1000 });
    const later = await raised.checkpoint();
    await raised.tools.write({ file_path: 'grows.txt', content: 'agent\n' });
    await raised.rewindFiles(later);
    expect(sandbox.files()).toEqual({ 'grows.txt': `${'y'.repeat(500)}\n` });
    await raised.close();
  });

  it('a tracked file the latest checkpoint saw as a link, and that is gone since, is written again: nothing is there to lose', async () => {
    const { manager, sandbox } = await open({});
    const first = await manager.checkpoint();
    await manager.tools.write({ file_path: 'b.txt', content: 'agent\n' });
    fs.rmSync(path.join(sandbox.root, 'b.txt'));
    fs.symlinkSync(path.join(sandbox.outside, 'canary.txt'), path.join(sandbox.root, 'b.txt'));
    await manager.rewindFiles(first); // refuses the link; its undo point records b.txt as a link
    fs.rmSync(path.join(sandbox.root, 'b.txt'));

    await manager.tools.write({ file_path: 'b.txt', content: 'agent again\n' });

    expect(fs.readFileSync(path.join(sandbox.root, 'b.txt'), 'utf8')).toBe('agent again\n');
    await manager.rewindFiles(first);
    expect(fs.existsSync(path.join(sandbox.root, 'b.txt'))).toBe(false);
  });

  it('a tracked path that became a link since is refused by trackEdit, so a harness never writes through it', async () => {
    const { manager, sandbox, file } = await open({ 'a.txt': 'a\n' });
    await manager.checkpoint();
    await manager.trackEdit('a.txt');
    const outside = path.join(path.dirname(sandbox.root), `outside-${path.basename(sandbox.root)}.txt`);
    fs.writeFileSync(outside, 'OUTSIDE\n');
    try {
      fs.rmSync(file('a.txt'));
      fs.symlinkSync(outside, file('a.txt'));
      await expect(manager.trackEdit('a.txt')).rejects.toMatchObject({ code: 'PATH_IS_LINK' });
      expect(fs.readFileSync(outside, 'utf8')).toBe('OUTSIDE\n');
    } finally {
      fs.rmSync(outside, { force: true });
    }
  });
});

describe('temporary files of crashed writes', () => {
  it('are swept when the session is reopened, once older than 30 s; younger ones and look-alikes stay', async () => {
    const { manager, sandbox, file } = await open({ 'dir/a.txt': 'a\n' });
    await manager.checkpoint();
    await manager.trackEdit('dir/a.txt');
    await manager.close();
    const leftover = (name: string, ageMs: number, directory = false) => {
      const target = file(`dir/${name}`);
      if (directory) fs.mkdirSync(target);
      else fs.writeFileSync(target, 'half a write');
      const when = new Date(Date.now() - ageMs);
      fs.utimesSync(target, when, when);
    };
    leftover('.a.txt.0123456789ab.rewindable-tmp', 60_000); // crashed a minute ago
    leftover('.b.txt.ba9876543210.rewindable-tmp', 5_000); // perhaps being written right now
    leftover('.a.txt.not-hex-here.rewindable-tmp', 60_000); // not a name the library gives
    leftover('notes.rewindable-tmp', 60_000);
    leftover('.c.txt.0123456789ab.rewindable-tmp', 60_000, true); // a directory, not a file

    const reopened = await CheckpointManager.open({ cwd: sandbox.root, storeDir: sandbox.store, resume: manager.sessionId });
    managers.push(reopened);

    expect(fs.readdirSync(file('dir')).sort()).toEqual([
      '.a.txt.not-hex-here.rewindable-tmp',
      '.b.txt.ba9876543210.rewindable-tmp',
      '.c.txt.0123456789ab.rewindable-tmp',
      'a.txt',
      'notes.rewindable-tmp',
    ]);
  });

  it('are never swept through a tracked directory now a link (or under one), nor when hard-linked; a real leftover still is', async () => {
    const { manager, sandbox, file } = await open({ 'linked/a.txt': 'a\n', 'deep/under/b.txt': 'b\n', 'kept/c.txt': 'c\n' });
    await manager.checkpoint();
    for (const name of ['linked/a.txt', 'deep/under/b.txt', 'kept/c.txt']) await manager.trackEdit(name);
    await manager.close();
    const aged = (target: string) => {
      const when = new Date(Date.now() - 60_000);
      fs.utimesSync(target, when, when);
      return target;
    };
    const leftover = (target: string, content = 'half a write') => {
      fs.mkdirSync(path.dirname(target), { recursive: true });
      fs.writeFileSync(target, content);
      return aged(target);
    };
    // The tracked directory `linked` becomes a link to an outside directory, `deep` a link to one holding `under`.
    const outsideFile = leftover(path.join(sandbox.outside, 'linked', '.a.txt.0123456789ab.rewindable-tmp'), 'the user’s own file');
    const outsideDeep = leftover(path.join(sandbox.outside, 'deep', 'under', '.b.txt.0123456789ab.rewindable-tmp'), 'the user’s own file');
    fs.rmSync(file('linked'), { recursive: true });
    fs.symlinkSync(path.join(sandbox.outside, 'linked'), file('linked'));
    fs.rmSync(file('deep'), { recursive: true });
    fs.symlinkSync(path.join(sandbox.outside, 'deep'), file('deep'));
    // In a directory that stayed in place: a real leftover, and a leftover's name given to a hard link of an outside file.
    const inside = leftover(file('kept/.c.txt.0123456789ab.rewindable-tmp'));
    const linkedOutside = leftover(path.join(sandbox.outside, 'hard.txt'), 'linked from the project');
    fs.linkSync(linkedOutside, file('kept/.d.txt.ba9876543210.rewindable-tmp'));

    const reopened = await CheckpointManager.open({ cwd: sandbox.root, storeDir: sandbox.store, resume: manager.sessionId });
    managers.push(reopened);

    expect(fs.readFileSync(outsideFile, 'utf8')).toBe('the user’s own file');
    expect(fs.readFileSync(outsideDeep, 'utf8')).toBe('the user’s own file');
    expect(fs.existsSync(inside)).toBe(false);
    expect(fs.readdirSync(file('kept')).sort()).toEqual(['.d.txt.ba9876543210.rewindable-tmp', 'c.txt']);
    expect(fs.statSync(linkedOutside).nlink).toBe(2);
  });
});

describe('the store never tracks itself', () => {
  it('refuses the store’s files by any name, through the tools too, and rewinds never touch them', async () => {
    const sandbox = createSandbox();
    sandboxes.push(sandbox);
    sandbox.writeFiles({ 'a.txt': 'a\n' });
    const store = path.join(sandbox.root, '.rewindable');
    fs.symlinkSync(store, path.join(sandbox.root, 'store-link'));
    const manager = await CheckpointManager.open({ cwd: sandbox.root, storeDir: store, durability: 'none' });
    managers.push(manager);
    const turn = await manager.checkpoint();
    await manager.trackEdit('a.txt');
    sandbox.writeFiles({ 'a.txt': 'a edited\n' });
    const log = path.relative(sandbox.root, fs.readdirSync(path.join(store, 'projects'), { recursive: true, withFileTypes: true }).map((entry) => path.join(entry.parentPath, entry.name)).find((name) => name.endsWith('.jsonl'))!);

    for (const name of [log, `./${log}`, path.join(sandbox.root, log), `store-link/${path.relative('.rewindable', log)}`, '.rewindable/blobs/new.txt', '.rewindable']) {
      await expect(manager.trackEdit(name), name).rejects.toMatchObject({ code: 'PATH_IN_STORE' });
    }
    await expect(manager.tools.write({ file_path: path.join(sandbox.root, '.rewindable', 'planted.txt'), content: 'x' })).rejects.toMatchObject({ code: 'PATH_IN_STORE' });
    expect(fs.existsSync(path.join(store, 'planted.txt'))).toBe(false);

    const storeBefore = fs.readFileSync(path.join(sandbox.root, log));
    await manager.rewindFiles(turn);
    expect(sandbox.files()['a.txt']).toBe('a\n');
    // The log only grew (by the rewind's own records); nothing in the store was restored or deleted.
    expect(fs.readFileSync(path.join(sandbox.root, log)).subarray(0, storeBefore.length).equals(storeBefore)).toBe(true);
    for (const checkpoint of await manager.listCheckpoints()) expect(checkpoint.files.every((name) => !name.startsWith(store))).toBe(true);
  });
});
