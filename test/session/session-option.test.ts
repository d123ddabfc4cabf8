import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CheckpointManager, filesystemStorage, RewindableError } from '../../src/index.js';
import { memoryStorage } from '../../src/store/memory/memory-storage.js';
import { newId, tempProject } from '../helpers/temp-project.js';

describe('session: one option, one value per choice', () => {
  it('{ id } starts a new session, { resume } reopens it, { resume, readOnly } reads it without its lock', async () => {
    const project = tempProject();
    const id = newId();
    const created = await project.open({ session: { id } });
    expect(created.sessionId).toBe(id);
    const turn = await created.checkpoint(newId());
    const reader = await project.open({ session: { resume: id, readOnly: true } });
    expect(await reader.listCheckpoints()).toEqual([expect.objectContaining({ id: turn })]);
    await expect(reader.checkpoint(newId())).rejects.toMatchObject({ code: 'READ_ONLY' });
    await created.close();
    const resumed = await project.open({ session: { resume: id } });
    expect((await resumed.listCheckpoints()).map((checkpoint) => checkpoint.id)).toEqual([turn]);
    await resumed.close();
    await expect(project.open({ session: { id } })).rejects.toMatchObject({ code: 'SESSION_EXISTS' });
    expect((await project.open({ session: {} })).sessionId).not.toBe(id);
  });

  it("'continue' reopens the latest session with open(), and is INVALID_OPTIONS in the constructor", async () => {
    const project = tempProject();
    await expect(project.open({ session: 'continue' })).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' });
    const first = await project.open();
    await first.checkpoint(newId());
    await first.close();
    expect((await project.open({ session: 'continue' })).sessionId).toBe(first.sessionId);
    expect(() => new CheckpointManager({ cwd: project.root, storeDir: project.store, session: 'continue' })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTIONS', message: expect.stringContaining('CheckpointManager.open') }),
    );
  });

  it('malformed choices are INVALID_OPTIONS naming what to pass, and a malformed id is INVALID_ID', () => {
    const { root, store } = tempProject();
    const attempt = (session: unknown) => () => new CheckpointManager({ cwd: root, storeDir: store, session: session as never });
    const invalid = (text: string) => expect.objectContaining({ code: 'INVALID_OPTIONS', message: expect.stringContaining(text), details: { option: 'session' } });
    expect(attempt({ id: newId(), resume: newId() })).toThrow(invalid('not both'));
    expect(attempt({ id: newId(), readOnly: true })).toThrow(invalid('session.readOnly needs session.resume'));
    expect(attempt({ resume: newId(), readOnly: 'yes' })).toThrow(invalid('session.readOnly must be true or false'));
    expect(attempt({ resume: newId(), lock: false })).toThrow(invalid('session has no field "lock"'));
    expect(attempt('latest')).toThrow(invalid(`session must be { id } to start a new session, { resume } to reopen one, or 'continue'; got "latest"`));
    expect(attempt({ resume: 'abc' })).toThrow(expect.objectContaining({ code: 'INVALID_ID', details: { id: 'abc' } }));
    expect(attempt({ id: 7 })).toThrow(expect.objectContaining({ code: 'INVALID_ID' }));
  });

  it('the deprecated sessionId, resume, continue and readOnly still work, but not beside session', async () => {
    const project = tempProject();
    const id = newId();
    const created = await project.open({ sessionId: id });
    await created.checkpoint(newId());
    const reader = await project.open({ resume: id, readOnly: true });
    expect(reader.sessionId).toBe(id);
    await created.close();
    expect((await project.open({ continue: true })).sessionId).toBe(id);
    const both = { cwd: project.root, storeDir: project.store, session: { resume: id }, readOnly: true };
    expect(() => new CheckpointManager(both)).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS', message: expect.stringContaining('Pass session, or the deprecated readOnly, not both') }));
    await expect(CheckpointManager.open({ ...both, readOnly: undefined, continue: true })).rejects.toMatchObject({ code: 'INVALID_OPTIONS' });
    expect(() => new CheckpointManager({ cwd: project.root, readOnly: true })).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS', message: expect.stringContaining('readOnly needs resume') }));
    await expect(CheckpointManager.open({ cwd: project.root, storeDir: project.store, continue: true, resume: id })).rejects.toMatchObject({ code: 'INVALID_OPTIONS' });
  });
});

describe('durability is set in one place', () => {
  it("the manager takes the storage's durability, and the default store the manager's", async () => {
    const project = tempProject();
    const none = new CheckpointManager({ cwd: project.root, storage: filesystemStorage({ directory: project.store, durability: 'none' }) });
    expect(none.durability).toBe('none');
    await none.close();
    const full = new CheckpointManager({ cwd: project.root, storage: filesystemStorage({ directory: project.store }) });
    expect(full.durability).toBe('full');
    await full.close();
    const agreeing = new CheckpointManager({ cwd: project.root, durability: 'none', storage: filesystemStorage({ directory: project.store, durability: 'none' }) });
    expect(agreeing.durability).toBe('none');
    await agreeing.close();
    expect(new CheckpointManager({ cwd: project.root, storeDir: project.store, enabled: false }).durability).toBe('full');
    expect(new CheckpointManager({ cwd: project.root, storage: memoryStorage(), durability: 'none', enabled: false }).durability).toBe('none');
  });

  it('a manager durability that contradicts its storage is INVALID_OPTIONS, and nothing is opened', () => {
    const project = tempProject();
    const storage = filesystemStorage({ directory: project.store, durability: 'none' });
    expect(() => new CheckpointManager({ cwd: project.root, durability: 'full', storage })).toThrow(
      expect.objectContaining({
        code: 'INVALID_OPTIONS',
        message: "Invalid CheckpointManager options: durability 'full' contradicts the storage's own durability 'none'. Set it in one place: on the storage (filesystemStorage({ durability })), or on the manager with a storage that has none.",
        details: { option: 'durability' },
      }),
    );
    expect(fs.existsSync(project.store)).toBe(false);
  });
});

describe('error details carry what the failing call knew', () => {
  it('ids for unknown checkpoints, the other session for a foreign one, the option and path for bad options', async () => {
    const project = tempProject();
    const first = await project.open();
    const elsewhere = await first.checkpoint(newId());
    const second = await project.open();
    await second.checkpoint(newId());
    const unknown = newId();
    const notFound = await second.rewindFiles(unknown).catch((error: unknown) => error);
    expect(RewindableError.hasCode(notFound, 'CHECKPOINT_NOT_FOUND') && notFound.details).toEqual({ id: unknown });
    const foreign = await second.rewindFiles(elsewhere).catch((error: unknown) => error);
    expect(RewindableError.hasCode(foreign, 'CHECKPOINT_IN_OTHER_SESSION') && foreign.details).toEqual({ id: elsewhere, sessionId: first.sessionId });
    expect(RewindableError.hasCode(foreign, 'CHECKPOINT_NOT_FOUND')).toBe(false);
    expect(() => new CheckpointManager({ cwd: project.root, maxFileBytes: -1 })).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS', details: { option: 'maxFileBytes' } }));
    const missing = `${project.root}/missing`;
    expect(() => new CheckpointManager({ cwd: missing })).toThrow(expect.objectContaining({ code: 'CWD_NOT_FOUND', details: { path: missing } }));
  });
});
