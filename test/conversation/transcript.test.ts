import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CheckpointManager, encodeProjectKey, listSessions } from '../../src/index.js';
import { runWorker } from '../helpers/child.js';
import { newId, tempProject } from '../helpers/temp-project.js';

const userText = (text: string) => ({ role: 'user', content: text });

describe('the conversation beside the checkpoints', () => {
  it('records messages with uuid, parent links, timestamps and types, and checkpoints user messages', async () => {
    const project = tempProject();
    const manager = await project.open();
    const first = await manager.recordUserMessage(userText('make a file'));
    await manager.trackEdit('a.txt');
    project.write('a.txt', 'a\n');
    const reply = await manager.recordMessage({ type: 'assistant', message: { role: 'assistant', content: [{ type: 'text', text: 'done' }] } });
    const second = await manager.recordUserMessage('plain strings work too');

    expect(first).toMatchObject({ type: 'user', parentUuid: null, message: userText('make a file') });
    expect(reply.parentUuid).toBe(first.uuid);
    expect(second.parentUuid).toBe(reply.uuid);
    expect(Date.parse(first.timestamp)).not.toBeNaN();
    expect((await manager.listCheckpoints()).map((checkpoint) => checkpoint.id)).toEqual([first.uuid, second.uuid]);
    const transcript = await manager.getTranscript();
    expect(transcript.map((message) => message.uuid)).toEqual([first.uuid, reply.uuid, second.uuid]);
    expect(transcript[0]!.files).toEqual([project.file('a.txt')]);
    expect(transcript[1]!.files).toBeUndefined();
  });

  it('a three-turn session killed and resumed in another process has an identical transcript', async () => {
    const project = tempProject();
    const sessionId = newId();
    const turns = [newId(), newId(), newId()];
    const child = runWorker({
      options: { cwd: project.root, storeDir: project.store, sessionId },
      steps: [
        ...turns.flatMap((uuid, index) => [
          { do: 'user-message', uuid, text: `turn ${index}` },
          { do: 'track', path: `f${index}.txt` },
          { do: 'write', path: `f${index}.txt`, content: `${index}\n` },
          { do: 'message', uuid: newId(), type: 'assistant', text: `answer ${index}` },
        ]),
        { do: 'transcript' },
        { do: 'signal', text: 'recorded' },
        { do: 'hang' },
      ],
    });
    const printed = await child.waitFor((line) => 'transcript' in line);
    await child.waitFor((line) => line.signal === 'recorded');
    child.child.kill('SIGKILL');
    await child.done;

    const resumed = await project.open({ resume: sessionId });
    expect(JSON.parse(JSON.stringify(await resumed.getTranscript()))).toEqual(printed.transcript);
    await resumed.rewind(turns[0]!, { scope: 'files' });
    for (const index of [0, 1, 2]) expect(project.exists(`f${index}.txt`)).toBe(false);
  });

  it('continue reopens the project’s most recent session', async () => {
    const project = tempProject();
    const older = await project.open();
    await older.recordUserMessage('older');
    await older.close();
    const newer = await project.open();
    await newer.recordUserMessage('newer');
    await newer.close();
    const logs = path.join(project.store, 'projects', encodeProjectKey(project.root));
    const past = new Date(Date.now() - 60_000);
    fs.utimesSync(path.join(logs, `${older.sessionId}.jsonl`), past, past);

    const continued = await CheckpointManager.open({ cwd: project.root, storeDir: project.store, continue: true });
    expect(continued.sessionId).toBe(newer.sessionId);
    expect((await continued.getTranscript()).map((message) => message.message)).toEqual(['newer']);
    await continued.close();

    const summaries = await listSessions({ cwd: project.root, storeDir: project.store });
    expect(summaries.map((summary) => [summary.sessionId, summary.firstPrompt, summary.messages])).toEqual([
      [newer.sessionId, 'newer', 1],
      [older.sessionId, 'older', 1],
    ]);

    const empty = tempProject();
    await expect(CheckpointManager.open({ cwd: empty.root, storeDir: empty.store, continue: true })).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' });
    expect(() => new CheckpointManager({ cwd: empty.root, continue: true })).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS' }));
  });

  it('a conversation rewind moves the active leaf; a new branch keeps the old one readable', async () => {
    const project = tempProject();
    const manager = await project.open();
    const one = await manager.recordUserMessage('one');
    const answerOne = await manager.recordMessage({ type: 'assistant', message: 'answer one' });
    const two = await manager.recordUserMessage('two');
    const answerTwo = await manager.recordMessage({ type: 'assistant', message: 'answer two' });

    const rewound = await manager.rewind(two.uuid, { scope: 'conversation' });
    expect(rewound).toMatchObject({ status: 'success', scope: 'conversation', conversation: { leafUuid: answerOne.uuid, rewoundMessage: { uuid: two.uuid } } });
    expect(rewound.conversation!.messages.map((message) => message.uuid)).toEqual([one.uuid, answerOne.uuid]);

    const retry = await manager.recordUserMessage('two, differently');
    expect(retry.parentUuid).toBe(answerOne.uuid);
    expect((await manager.getTranscript()).map((message) => message.message)).toEqual(['one', 'answer one', 'two, differently']);
    const branches = await manager.listBranches();
    expect(branches.map((branch) => [branch.leafUuid, branch.active, branch.length])).toEqual([
      [answerTwo.uuid, false, 4],
      [retry.uuid, true, 3],
    ]);
    expect((await manager.getTranscript({ leafUuid: answerTwo.uuid })).map((message) => message.message)).toEqual(['one', 'answer one', 'two', 'answer two']);

    await manager.close();
    const resumed = await project.open({ resume: manager.sessionId });
    expect((await resumed.getTranscript()).map((message) => message.uuid)).toEqual([one.uuid, answerOne.uuid, retry.uuid]);
    expect((await resumed.listBranches()).length).toBe(2);
  });

  it('recording a message twice with the same uuid is idempotent; a different one with that uuid is refused', async () => {
    const project = tempProject();
    const manager = await project.open();
    const uuid = newId();
    const first = await manager.recordMessage({ type: 'user', uuid, message: { content: 'hi', n: 1 } });
    const again = await manager.recordMessage({ type: 'user', uuid, message: { content: 'hi', n: 1 } });
    expect(again).toEqual(first);
    await expect(manager.recordMessage({ type: 'user', uuid, message: { content: 'changed' } })).rejects.toMatchObject({ code: 'MESSAGE_CONFLICT' });
    await manager.recordUserMessage({ content: 'hi', n: 1 }, { uuid }); // same message: takes its checkpoint, no duplicate
    expect((await manager.getTranscript()).length).toBe(1);
    expect((await manager.listCheckpoints()).map((checkpoint) => checkpoint.id)).toEqual([uuid]);
  });

  it('refuses a parent that does not exist, unknown and foreign message ids, and malformed messages', async () => {
    const project = tempProject();
    const manager = await project.open();
    const other = await project.open();
    const foreign = await other.recordUserMessage('in another session');
    await manager.recordUserMessage('mine');

    await expect(manager.recordMessage({ type: 'assistant', message: 'x', parentUuid: newId() })).rejects.toMatchObject({ code: 'MESSAGE_NOT_FOUND' });
    await expect(manager.recordMessage({ type: '', message: 'x' })).rejects.toMatchObject({ code: 'INVALID_MESSAGE' });
    await expect(manager.recordMessage({ type: 'user', message: 'x', uuid: 'nope' })).rejects.toMatchObject({ code: 'INVALID_ID' });
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    await expect(manager.recordMessage({ type: 'user', message: circular })).rejects.toMatchObject({ code: 'INVALID_MESSAGE' });

    await expect(manager.rewind(newId(), { scope: 'conversation' })).rejects.toMatchObject({ code: 'MESSAGE_NOT_FOUND' });
    expect(await manager.rewind(newId(), { scope: 'conversation', dryRun: true })).toMatchObject({ status: 'rejected', errorCode: 'MESSAGE_NOT_FOUND' });
    await expect(manager.rewind(foreign.uuid, { scope: 'files' })).rejects.toMatchObject({ code: 'CHECKPOINT_IN_OTHER_SESSION' });
    expect(await manager.rewind(foreign.uuid, { scope: 'files', dryRun: true })).toMatchObject({ status: 'rejected', errorCode: 'CHECKPOINT_IN_OTHER_SESSION' });
    await expect(manager.rewind('not-a-uuid')).rejects.toMatchObject({ code: 'INVALID_ID' });
    expect(await manager.rewind('not-a-uuid', { dryRun: true })).toMatchObject({ status: 'rejected', errorCode: 'INVALID_ID' });
    const assistant = await manager.recordMessage({ type: 'assistant', message: 'reply' });
    await expect(manager.rewind(assistant.uuid, { scope: 'conversation' })).rejects.toMatchObject({ code: 'INVALID_MESSAGE' });
    expect(await manager.rewind(assistant.uuid, { scope: 'conversation', dryRun: true })).toMatchObject({ status: 'rejected', errorCode: 'INVALID_MESSAGE' });
    expect((await manager.getTranscript()).length).toBe(2);
  });

  it('a transcript with a torn last line reopens without it', async () => {
    const project = tempProject();
    const manager = await project.open();
    await manager.recordUserMessage('kept');
    await manager.close();
    const log = path.join(project.store, 'projects', encodeProjectKey(project.root), `${manager.sessionId}.jsonl`);
    fs.appendFileSync(log, '{"type":"message","uuid":"');
    const resumed = await project.open({ resume: manager.sessionId });
    expect((await resumed.getTranscript()).map((message) => message.message)).toEqual(['kept']);
    await resumed.recordMessage({ type: 'assistant', message: 'after the tear' });
    await resumed.close();
    const again = await project.open({ resume: manager.sessionId });
    expect((await again.getTranscript()).map((message) => message.message)).toEqual(['kept', 'after the tear']);
  });
});
