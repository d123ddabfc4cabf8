import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CheckpointManager, cleanup, encodeProjectKey, listSessions } from '../../src/index.js';
import { newId, snapshotTree, tempProject } from '../helpers/temp-project.js';

async function twoTurns() {
  const project = tempProject();
  project.write('notes.md', 'v0\n');
  const manager = await project.open();
  const one = await manager.recordUserMessage('first');
  await manager.trackEdit('notes.md');
  project.write('notes.md', 'v1\n');
  const answerOne = await manager.recordMessage({ type: 'assistant', message: 'did one' });
  const two = await manager.recordUserMessage('second');
  await manager.trackEdit('notes.md');
  project.write('notes.md', 'v2\n');
  await manager.trackEdit('extra.txt');
  project.write('extra.txt', 'extra\n');
  await manager.recordMessage({ type: 'assistant', message: 'did two' });
  return { project, manager, one, answerOne, two };
}

describe('rewind(id, { scope, dryRun })', () => {
  it("scope 'files' is rewindFiles and leaves the conversation", async () => {
    const { project, manager, two } = await twoTurns();
    const leafBefore = (await manager.getTranscript()).at(-1)!.uuid;
    const result = await manager.rewind(two.uuid, { scope: 'files' });
    expect(result).toMatchObject({ status: 'success', scope: 'files', files: { canRewind: true, filesChanged: [project.file('extra.txt'), project.file('notes.md')] } });
    expect(result.conversation).toBeUndefined();
    expect(project.read('notes.md').toString()).toBe('v1\n');
    expect((await manager.getTranscript()).at(-1)!.uuid).toBe(leafBefore);
  });

  it("scope 'conversation' moves the leaf and leaves the files", async () => {
    const { project, manager, two, answerOne } = await twoTurns();
    const files = project.snapshot();
    const result = await manager.rewind(two.uuid, { scope: 'conversation' });
    expect(result).toMatchObject({ status: 'success', conversation: { leafUuid: answerOne.uuid } });
    expect(result.files).toBeUndefined();
    expect(project.snapshot()).toEqual(files);
  });

  it("scope 'both' (the default) does both; a dry run reports 'ready' and changes nothing", async () => {
    const { project, manager, one } = await twoTurns();
    const files = project.snapshot();
    const transcript = await manager.getTranscript();
    const preview = await manager.rewind(one.uuid, { dryRun: true });
    expect(preview).toMatchObject({ status: 'ready', scope: 'both', dryRun: true, files: { insertions: 1, deletions: 2 }, conversation: { leafUuid: null, messages: [] } });
    expect(project.snapshot()).toEqual(files);
    expect(await manager.getTranscript()).toEqual(transcript);

    const result = await manager.rewind(one.uuid);
    expect(result).toMatchObject({ status: 'success', conversation: { leafUuid: null, rewoundMessage: { message: 'first' } } });
    expect(project.read('notes.md').toString()).toBe('v0\n');
    expect(project.exists('extra.txt')).toBe(false);
    expect(await manager.getTranscript()).toEqual([]);
  });

  it("reports 'partial' with per-file failures when some files cannot be restored", async () => {
    const { project, manager, one } = await twoTurns();
    fs.rmSync(project.file('extra.txt'));
    fs.symlinkSync(path.join(project.outside), project.file('extra.txt'));
    const result = await manager.rewind(one.uuid);
    expect(result.status).toBe('partial');
    expect(result.failures).toEqual([expect.objectContaining({ path: project.file('extra.txt'), reason: 'symlink' })]);
    expect(project.read('notes.md').toString()).toBe('v0\n');
    expect(result.conversation?.leafUuid).toBeNull();
  });

  it("a dry run is 'rejected' and a real run rejects with the same code and message, changing nothing, when the message has no checkpoint or the manager is disabled", async () => {
    const { project, manager, answerOne } = await twoTurns();
    const files = project.snapshot();
    const orphan = await manager.recordMessage({ type: 'user', message: 'recorded without a checkpoint', parentUuid: answerOne.uuid });
    const notFound = { errorCode: 'CHECKPOINT_NOT_FOUND', error: 'No file checkpoint found for this message.' };
    expect(await manager.rewind(orphan.uuid, { dryRun: true })).toMatchObject({ status: 'rejected', dryRun: true, ...notFound });
    await expect(manager.rewind(orphan.uuid)).rejects.toMatchObject({ code: notFound.errorCode, message: notFound.error });
    expect(project.snapshot()).toEqual(files);
    expect((await manager.getTranscript()).at(-1)!.uuid).toBe(orphan.uuid);
    expect(await manager.rewind(orphan.uuid, { scope: 'conversation' })).toMatchObject({ status: 'success' });
    expect(project.snapshot()).toEqual(files);
    const disabled = new CheckpointManager({ cwd: project.root, enabled: false });
    expect(await disabled.rewind(newId(), { dryRun: true })).toMatchObject({ status: 'rejected', errorCode: 'NOT_ENABLED', error: 'File rewinding is not enabled.' });
    await expect(disabled.rewind(newId())).rejects.toMatchObject({ code: 'NOT_ENABLED', message: 'File rewinding is not enabled.' });
    expect(await manager.rewind(orphan.uuid, { scope: 'everything' as never, dryRun: true })).toMatchObject({ status: 'rejected', errorCode: 'INVALID_OPTIONS' });
    await expect(manager.rewind(orphan.uuid, { scope: 'everything' as never })).rejects.toMatchObject({ code: 'INVALID_OPTIONS' });
  });
});

describe('fork', () => {
  it('starts a new session from a message, with the transcript and file checkpoints up to it', async () => {
    const { project, manager, one, answerOne, two } = await twoTurns();
    await manager.close();

    const fork = await CheckpointManager.fork({ cwd: project.root, storeDir: project.store, durability: 'none', fromSession: manager.sessionId, atMessage: two.uuid });
    expect(fork.sessionId).not.toBe(manager.sessionId);
    expect((await fork.getTranscript()).map((message) => message.uuid)).toEqual([one.uuid, answerOne.uuid, two.uuid]);
    expect((await fork.listCheckpoints()).map((checkpoint) => checkpoint.id)).toEqual([one.uuid, two.uuid]);

    // The fork can rewind: to before message one, and to before message two.
    await fork.rewind(two.uuid, { scope: 'files' });
    expect(project.read('notes.md').toString()).toBe('v1\n');
    expect(project.exists('extra.txt')).toBe(false); // created in the turn of message two
    await fork.rewind(one.uuid, { scope: 'files' });
    expect(project.read('notes.md').toString()).toBe('v0\n');
    const summaries = await listSessions({ cwd: project.root, storeDir: project.store });
    expect(summaries.find((summary) => summary.sessionId === fork.sessionId)?.forkedFrom).toEqual({ sessionId: manager.sessionId, messageId: two.uuid });
    await fork.close();
  });

  it('keeps working after the source session is cleaned up (it owns copies of its backups)', async () => {
    const { project, manager, one } = await twoTurns();
    await manager.close();
    const fork = await CheckpointManager.fork({ cwd: project.root, storeDir: project.store, fromSession: manager.sessionId, atMessage: one.uuid });
    await fork.close();
    const logs = path.join(project.store, 'projects', encodeProjectKey(project.root));
    const old = new Date(Date.now() - 40 * 24 * 60 * 60 * 1000);
    fs.utimesSync(path.join(logs, `${manager.sessionId}.jsonl`), old, old);
    fs.utimesSync(path.join(project.store, 'blobs', 'packs', encodeProjectKey(project.root), `${manager.sessionId}.pack`), old, old);
    expect((await cleanup({ storeDir: project.store })).sessionsRemoved.map((session) => session.sessionId)).toEqual([manager.sessionId]);

    project.write('notes.md', 'changed later\n');
    const reopened = await project.open({ resume: fork.sessionId });
    await reopened.rewind(one.uuid, { scope: 'files' });
    expect(project.read('notes.md').toString()).toBe('v0\n');
  });

  it('refuses a fork point that is not in the source transcript', async () => {
    const { project, manager } = await twoTurns();
    await manager.close();
    await expect(CheckpointManager.fork({ cwd: project.root, storeDir: project.store, fromSession: manager.sessionId, atMessage: newId() })).rejects.toMatchObject({ code: 'MESSAGE_NOT_FOUND' });
  });
});

describe('project isolation', () => {
  it('sessions of different project directories never mix', async () => {
    const first = tempProject();
    const second = tempProject();
    const a = await CheckpointManager.open({ cwd: first.root, storeDir: first.store });
    await a.recordUserMessage('in the first project');
    await a.close();
    expect(await listSessions({ cwd: second.root, storeDir: first.store })).toEqual([]);
    await expect(CheckpointManager.open({ cwd: second.root, storeDir: first.store, resume: a.sessionId })).rejects.toMatchObject({ code: 'PROJECT_MISMATCH' });
  });

  it('a moved project keeps its sessions: resume from the new place follows the stored real path', async () => {
    const project = tempProject();
    project.write('src/app.ts', 'v0\n');
    const manager = await project.open();
    const turn = await manager.recordUserMessage('edit the app');
    await manager.trackEdit('src/app.ts');
    project.write('src/app.ts', 'v1\n');
    await manager.close();

    const movedRoot = `${project.root}-moved`;
    fs.renameSync(project.root, movedRoot);
    try {
      const resumed = await CheckpointManager.open({ cwd: movedRoot, storeDir: project.store, resume: manager.sessionId, durability: 'none' });
      expect((await resumed.getTranscript()).map((message) => message.uuid)).toEqual([turn.uuid]);
      await resumed.rewind(turn.uuid, { scope: 'files' });
      expect(fs.readFileSync(path.join(movedRoot, 'src/app.ts'), 'utf8')).toBe('v0\n');
      await resumed.close();
      expect((await listSessions({ cwd: movedRoot, storeDir: project.store })).map((session) => session.sessionId)).toEqual([manager.sessionId]);
      expect(snapshotTree(path.join(project.store, 'projects'))).not.toHaveProperty(`${encodeProjectKey(project.root)}/${manager.sessionId}.jsonl`);
    } finally {
      fs.renameSync(movedRoot, project.root);
    }
  });
});
