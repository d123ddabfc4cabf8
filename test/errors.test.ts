import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CheckpointManager, RewindableError } from '../src/index.js';
import { newId, snapshotTree, tempProject } from './helpers/temp-project.js';

/** Bad input gets a typed error a user can act on, and changes nothing. */
describe('bad input', () => {
  it('exact messages for a disabled manager and an unknown checkpoint', async () => {
    const project = tempProject();
    const disabled = new CheckpointManager({ cwd: project.root, storeDir: project.store, enabled: false });
    expect(await disabled.rewindFiles(newId(), { dryRun: true })).toMatchObject({ canRewind: false, error: 'File rewinding is not enabled.', errorCode: 'NOT_ENABLED' });
    await expect(disabled.rewindFiles(newId())).rejects.toMatchObject({ code: 'NOT_ENABLED', message: 'File rewinding is not enabled.' });
    await disabled.checkpoint(newId());
    await disabled.trackEdit('a.txt');
    expect(fs.existsSync(project.store)).toBe(false);

    const manager = await project.open();
    await manager.checkpoint(newId());
    expect(await manager.rewindFiles(newId(), { dryRun: true })).toMatchObject({ canRewind: false, error: 'No file checkpoint found for this message.' });
    const error = await manager.rewindFiles(newId()).catch((caught: unknown) => caught);
    expect(RewindableError.isInstance(error)).toBe(true);
    expect(error).toBeInstanceOf(RewindableError);
    expect(error).toMatchObject({ code: 'CHECKPOINT_NOT_FOUND', message: 'No file checkpoint found for this message.' });
  });

  it('names an id that is not a UUID', async () => {
    const project = tempProject();
    const manager = await project.open();
    await expect(manager.checkpoint('msg-1')).rejects.toMatchObject({ code: 'INVALID_ID', message: expect.stringContaining('"msg-1"') });
    expect(await manager.rewindFiles('not-a-uuid', { dryRun: true })).toMatchObject({
      canRewind: false,
      errorCode: 'INVALID_ID',
      error: expect.stringContaining('"not-a-uuid" is not a valid user message id'),
    });
    await expect(manager.rewindFiles('not-a-uuid')).rejects.toMatchObject({ code: 'INVALID_ID' });
  });

  it('says when the id is a checkpoint of another session of the same project', async () => {
    const project = tempProject();
    const first = await project.open();
    const elsewhere = await first.checkpoint(newId());
    const second = await project.open();
    await second.checkpoint(newId());

    const preview = await second.rewindFiles(elsewhere, { dryRun: true });
    expect(preview).toMatchObject({ canRewind: false, errorCode: 'CHECKPOINT_IN_OTHER_SESSION' });
    expect(preview.error).toContain(first.sessionId);
    await expect(second.rewindFiles(elsewhere)).rejects.toMatchObject({ code: 'CHECKPOINT_IN_OTHER_SESSION' });
  });

  it('trackEdit before any checkpoint says to call checkpoint()', async () => {
    const project = tempProject();
    project.write('a.txt', 'a');
    const manager = await project.open();
    await expect(manager.trackEdit('a.txt')).rejects.toMatchObject({ code: 'NO_CHECKPOINT', message: expect.stringContaining('Call checkpoint(') });
  });

  it('refuses paths outside the project, in the store, empty or with NUL bytes', async () => {
    const project = tempProject();
    const storeInside = path.join(project.root, '.rewindable-store');
    const manager = await project.open({ storeDir: storeInside });
    await manager.checkpoint(newId());
    await expect(manager.trackEdit(path.join(project.outside, 'x.txt'))).rejects.toMatchObject({ code: 'PATH_OUTSIDE_PROJECT' });
    await expect(manager.trackEdit('/etc/passwd')).rejects.toMatchObject({ code: 'PATH_OUTSIDE_PROJECT' });
    await expect(manager.trackEdit('.rewindable-store/blobs/x')).rejects.toMatchObject({ code: 'PATH_IN_STORE' });
    await expect(manager.trackEdit('')).rejects.toMatchObject({ code: 'INVALID_PATH' });
    await expect(manager.trackEdit('a\0b')).rejects.toMatchObject({ code: 'INVALID_PATH' });
    // A lone surrogate would reach the filesystem as U+FFFD: 'a\uD800' and 'a\uD801' would be one file.
    await expect(manager.trackEdit('a\uD800.txt')).rejects.toMatchObject({ code: 'INVALID_PATH', message: expect.stringContaining('surrogate') });
    await expect(manager.tools.write({ file_path: 'b\uDFFF.txt', content: 'x' })).rejects.toMatchObject({ code: 'INVALID_PATH' });
    expect(fs.readdirSync(project.root).filter((name) => name.includes('\uFFFD'))).toEqual([]);
    expect((await manager.listCheckpoints())[0]!.files).toEqual([]);
    await manager.trackEdit('ok-\u{1F600}.txt'); // a surrogate pair is a character like any other
  });

  it('extra roots let files outside the project be tracked', async () => {
    const project = tempProject();
    fs.writeFileSync(path.join(project.outside, 'shared.txt'), 'shared\n');
    const manager = await project.open({ extraRoots: [project.outside] });
    const turn = await manager.checkpoint(newId());
    await manager.trackEdit(path.join(project.outside, 'shared.txt'));
    fs.writeFileSync(path.join(project.outside, 'shared.txt'), 'changed\n');
    await manager.rewindFiles(turn);
    expect(fs.readFileSync(path.join(project.outside, 'shared.txt'), 'utf8')).toBe('shared\n');
  });

  it('rejects a missing or file cwd, and bad options', () => {
    const project = tempProject();
    expect(() => new CheckpointManager({ cwd: path.join(project.root, 'nope') })).toThrow(expect.objectContaining({ code: 'CWD_NOT_FOUND' }));
    project.write('file.txt', 'x');
    expect(() => new CheckpointManager({ cwd: project.file('file.txt') })).toThrow(expect.objectContaining({ code: 'CWD_NOT_FOUND' }));
    expect(() => new CheckpointManager({} as never)).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS', message: expect.stringContaining('cwd') }));
    expect(() => new CheckpointManager({ cwd: project.root, sessionId: newId(), resume: newId() })).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS' }));
    expect(() => new CheckpointManager({ cwd: project.root, resume: 'abc' })).toThrow(expect.objectContaining({ code: 'INVALID_ID' }));
  });

  it('resume of a missing session and sessionId of an existing one', async () => {
    const project = tempProject();
    await expect(project.open({ resume: newId() })).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' });
    const manager = await project.open();
    await manager.checkpoint(newId());
    await manager.close();
    await expect(project.open({ sessionId: manager.sessionId })).rejects.toMatchObject({ code: 'SESSION_EXISTS' });
    // The failed opens released the lock: the session reopens fine.
    const resumed = await project.open({ resume: manager.sessionId });
    expect((await resumed.listCheckpoints()).length).toBe(1);
  });

  it('checkpoint() with the id of an older checkpoint is an error', async () => {
    const project = tempProject();
    const manager = await project.open();
    const first = await manager.checkpoint(newId());
    await manager.checkpoint(newId());
    await expect(manager.checkpoint(first)).rejects.toMatchObject({ code: 'CHECKPOINT_ID_REUSED' });
  });

  it('refuses files over the size cap with a clear error', async () => {
    const project = tempProject();
    project.write('big.bin', Buffer.alloc(2048));
    const manager = await project.open({ maxFileBytes: 1024 });
    await manager.checkpoint(newId());
    await expect(manager.trackEdit('big.bin')).rejects.toMatchObject({ code: 'FILE_TOO_LARGE', message: expect.stringContaining('maxFileBytes') });
  });

  it('a closed manager says so', async () => {
    const project = tempProject();
    const manager = await project.open();
    await manager.close();
    await expect(manager.checkpoint(newId())).rejects.toMatchObject({ code: 'CLOSED' });
  });

  it('a failed call leaves the store as it was', async () => {
    const project = tempProject();
    const manager = await project.open();
    await manager.checkpoint(newId());
    const before = snapshotTree(project.store);
    await manager.trackEdit('../x').catch(() => {});
    await manager.rewindFiles(newId()).catch(() => {});
    await manager.checkpoint('bad').catch(() => {});
    expect(snapshotTree(project.store)).toEqual(before);
  });
});
