import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CheckpointManager, listSessions } from '../../src/index.js';
import { newId, tempProject } from '../helpers/temp-project.js';

const upper = (id: string) => id.toUpperCase();

describe('ids are UUIDs whatever the case of their hex digits', () => {
  it('a checkpoint taken with an uppercase id is found, rewound and listed by either spelling, in lowercase', async () => {
    const project = tempProject();
    const manager = await project.open();
    const turn = newId();
    expect(await manager.checkpoint(upper(turn))).toBe(turn);
    // Taking it again with the other spelling is the same checkpoint, not a second one.
    expect(await manager.checkpoint(turn)).toBe(turn);
    await manager.trackEdit(project.file('a.txt'));
    fs.writeFileSync(project.file('a.txt'), 'made by the agent\n');
    expect(await manager.hasCheckpoint(turn)).toBe(true);
    expect(await manager.hasCheckpoint(upper(turn))).toBe(true);
    expect((await manager.listCheckpoints()).map((checkpoint) => checkpoint.id)).toEqual([turn]);
    expect(await manager.listCheckpoints()).toHaveLength(1);
    const preview = await manager.rewindFiles(upper(turn), { dryRun: true });
    expect(preview).toMatchObject({ canRewind: true, filesChanged: [project.file('a.txt')] });
    expect(await manager.diffFiles(upper(turn))).toHaveLength(1);
    await manager.rewindFiles(turn);
    expect(fs.existsSync(project.file('a.txt'))).toBe(false);
    await manager.close();
  });

  it('one session whatever the case of its id: a second spelling is SESSION_EXISTS, resume finds it, one file in the store', async () => {
    const project = tempProject();
    const id = newId();
    const created = await project.open({ session: { id: upper(id) } });
    expect(created.sessionId).toBe(id);
    await created.checkpoint(newId());
    await created.close();
    await expect(project.open({ session: { id } })).rejects.toMatchObject({ code: 'SESSION_EXISTS' });
    const resumed = await project.open({ session: { resume: upper(id) } });
    expect(resumed.sessionId).toBe(id);
    expect(await resumed.listCheckpoints()).toHaveLength(1);
    await resumed.close();
    const sessions = await listSessions({ cwd: project.root, storeDir: project.store });
    expect(sessions.map((session) => session.sessionId)).toEqual([id]);
    const named = fs.readdirSync(project.store, { recursive: true, encoding: 'utf8' }).filter((name) => path.basename(name).toLowerCase().includes(id));
    expect(named.length).toBeGreaterThan(0);
    expect(named.every((name) => !name.includes(upper(id)))).toBe(true);
  });

  it('messages: an uppercase uuid is its checkpoint, a rewind of the conversation finds it, parents match by either spelling', async () => {
    const project = tempProject();
    const manager = await project.open();
    const first = newId();
    const second = newId();
    const recorded = await manager.recordUserMessage({ role: 'user', content: 'one' }, { uuid: upper(first) });
    expect(recorded.uuid).toBe(first);
    await manager.recordMessage({ type: 'assistant', message: 'ok', parentUuid: upper(first) });
    await manager.recordUserMessage({ role: 'user', content: 'two' }, { uuid: upper(second) });
    expect((await manager.listCheckpoints()).map((checkpoint) => checkpoint.id)).toEqual([first, second]);
    // Recording the same message again, spelled the other way, is idempotent.
    await manager.recordUserMessage({ role: 'user', content: 'two' }, { uuid: second });
    expect(await manager.getTranscript()).toHaveLength(3);
    const rewound = await manager.rewind(upper(second), { scope: 'conversation' });
    expect(rewound.status).toBe('success');
    expect((await manager.getTranscript()).map((entry) => entry.uuid)).toEqual([first, expect.any(String)]);
    // parentUuid: null still starts a new root.
    const root = await manager.recordMessage({ type: 'assistant', message: 'a new root', parentUuid: null });
    expect(root.parentUuid).toBeNull();
    expect((await manager.listBranches()).length).toBe(2);
    const fork = await CheckpointManager.fork({ cwd: project.root, storeDir: project.store, fromSession: upper(manager.sessionId), atMessage: upper(first) });
    expect((await fork.getTranscript()).map((entry) => entry.uuid)).toEqual([first]);
    await fork.close();
    await manager.close();
  });

  it('a malformed id is still INVALID_ID, in any case', async () => {
    const project = tempProject();
    const manager = await project.open();
    await expect(manager.checkpoint('NOT-A-UUID')).rejects.toMatchObject({ code: 'INVALID_ID' });
    await expect(manager.rewindFiles('G0000000-0000-4000-8000-000000000000')).rejects.toMatchObject({ code: 'INVALID_ID' });
    await manager.close();
  });
});
