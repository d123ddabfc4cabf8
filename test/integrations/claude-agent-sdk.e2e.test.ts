import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { query, type HookCallback, type SDKMessage, type SDKUserMessage } from '@anthropic-ai/claude-agent-sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { createCheckpointHooks, withCheckpoints, type CheckpointEvent, type CheckpointWarning } from '../../src/integrations/claude-agent-sdk.js';
import { storedRecords } from '../tools/tool-session.js';
import { agentProject, filesOf } from './helpers/agent-project.js';
import { claudeEnvironment, promptStream } from './helpers/claude-environment.js';
import { toolCallsSince } from './helpers/tool-calls.js';
import { scriptByPrompt, startFakeAnthropicApi, type FakeAnthropicApi, type ScriptedBlock } from './helpers/fake-anthropic-api.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

function toolUse(id: string, name: string, input: Record<string, unknown>): ScriptedBlock[] {
  return [{ type: 'tool_use', id, name, input }];
}

function userMessage(text: string, more: Partial<SDKUserMessage> = {}): SDKUserMessage {
  return { type: 'user', message: { role: 'user', content: text }, parent_tool_use_id: null, uuid: randomUUID(), ...more };
}

async function startApi(turns: Record<string, ScriptedBlock[][]>, holdBack?: (blocks: ScriptedBlock[]) => Promise<void> | undefined): Promise<FakeAnthropicApi> {
  const script = scriptByPrompt(turns);
  const api = await startFakeAnthropicApi(async (request) => {
    const blocks = await script(request);
    await holdBack?.(blocks);
    return blocks;
  });
  cleanups.push(() => api.close());
  return api;
}

/** Runs the streamed messages one turn at a time (the next one once the last turn's result came), then ends the stream. */
async function converse(conversation: AsyncIterable<SDKMessage>, prompts: ReturnType<typeof promptStream>, messages: SDKUserMessage[], onMessage: (message: SDKMessage) => void = () => {}) {
  const snapshots: SDKMessage[] = [];
  const queue = [...messages];
  prompts.push(queue.shift());
  for await (const message of conversation) {
    onMessage(message);
    if (message.type !== 'result') continue;
    snapshots.push(message);
    prompts.push(queue.shift());
  }
  return snapshots.map((result) => (result.type === 'result' ? result.subtype : ''));
}

function environment(api: FakeAnthropicApi) {
  const claude = claudeEnvironment(api.url);
  cleanups.push(() => claude.remove());
  return claude;
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('Claude Agent SDK end to end: query() and the real CLI against a fake Messages API', () => {
  it('backs up the files of Write, Edit, NotebookEdit and a subagent’s Write before they change, over two turns, and rewinds them exactly', async () => {
    const { project, manager, initial } = await agentProject();
    const root = project.root;
    const file = (relative: string) => path.join(root, relative);
    const outside = path.join(project.outside, 'escape.txt');
    const api = await startApi({
      'TURN-ONE': [
        toolUse('toolu_w1', 'Write', { file_path: file('src/answer.ts'), content: 'export const answer = 41;\n' }),
        toolUse('toolu_r1', 'Read', { file_path: file('notes.txt') }),
        toolUse('toolu_e1', 'Edit', { file_path: file('notes.txt'), old_string: '- pears', new_string: '- plums' }),
      ],
      'TURN-TWO': [
        toolUse('toolu_e2', 'Edit', { file_path: file('src/answer.ts'), old_string: '41', new_string: '42' }),
        toolUse('toolu_t2', 'Task', { description: 'Write a log', prompt: 'SUBAGENT-JOB: write the log', subagent_type: 'general-purpose', run_in_background: false }),
        toolUse('toolu_x2', 'Write', { file_path: outside, content: 'should never be written\n' }),
        toolUse('toolu_r2', 'Read', { file_path: file('analysis.ipynb') }),
        toolUse('toolu_n2', 'NotebookEdit', { notebook_path: file('analysis.ipynb'), cell_id: '5e6f7a8b', new_source: 'import polars as pl' }),
      ],
      'SUBAGENT-JOB': [toolUse('toolu_s1', 'Write', { file_path: file('logs/subagent.txt'), content: 'written by a subagent\n' })],
    });
    const claude = environment(api);
    const events: CheckpointEvent[] = [];
    const checkpoints = createCheckpointHooks(manager, { onCheckpoint: (event) => events.push(event) });
    const prompts = promptStream();
    const first = userMessage('TURN-ONE: add the answer, swap pears for plums');
    const second = userMessage('TURN-TWO: bump the answer, log it, use polars');
    const stderr: string[] = [];
    const conversation = query({
      prompt: checkpoints.prompt(prompts.messages()),
      options: checkpoints.options({ cwd: root, permissionMode: 'acceptEdits', settingSources: [], env: claude.env, stderr: (line) => stderr.push(line) }),
    });
    cleanups.push(() => conversation.close());

    const results: SDKMessage[] = [];
    let afterFirst: Record<string, string> | undefined;
    prompts.push(first);
    for await (const message of conversation) {
      if (message.type !== 'result') continue;
      results.push(message);
      if (results.length === 1) {
        afterFirst = project.snapshot();
        prompts.push(second);
      } else {
        prompts.push(undefined);
      }
    }
    expect(results.map((result) => (result.type === 'result' ? result.subtype : ''))).toEqual(['success', 'success']);

    // The turns ran: the files changed on disk.
    expect(afterFirst!['src/answer.ts']).toBe(`644 ${Buffer.from('export const answer = 41;\n').toString('base64')}`);
    expect(project.read('src/answer.ts').toString()).toBe('export const answer = 42;\n');
    expect(project.read('notes.txt').toString()).toBe('Shopping list\r\n- apples\r\n- plums\r\n');
    expect(project.read('logs/subagent.txt').toString()).toBe('written by a subagent\n');
    expect(project.read('analysis.ipynb').toString()).toContain('import polars as pl');

    // The write outside the project was denied, and Claude was told why.
    expect(fs.existsSync(outside)).toBe(false);
    const denial = JSON.stringify(api.requests.map((request) => request.messages.at(-1)));
    expect(denial).toMatch(/rewindable could not back up [^"]*escape\.txt before this Write call, so the call was refused/);

    // Checkpoints are keyed by the user messages' UUIDs.
    expect(events.map((event) => [event.checkpointId, event.source])).toEqual([
      [first.uuid, 'message'],
      [second.uuid, 'message'],
    ]);

    // The hooks backed each file up before its first change, and recorded every write with its tool use id.
    await manager.close();
    const records = storedRecords(project);
    const backups = Object.fromEntries(
      records.filter((record) => record.type === 'track').map((record) => [record.path, { checkpointId: record.checkpointId, state: record.state }]),
    );
    expect(backups).toEqual({
      'src/answer.ts': { checkpointId: first.uuid, state: { kind: 'absent' } },
      'notes.txt': { checkpointId: first.uuid, state: expect.objectContaining({ kind: 'file', sha256: sha256(Buffer.from(initialBytes(initial, 'notes.txt'))) }) },
      'logs/subagent.txt': { checkpointId: second.uuid, state: { kind: 'absent' } },
      'analysis.ipynb': { checkpointId: second.uuid, state: expect.objectContaining({ kind: 'file', sha256: sha256(initialBytes(initial, 'analysis.ipynb')) }) },
    });
    const writes = records.filter((record) => record.type === 'write').map((record) => `${record.tool} ${record.path} ${record.toolCallId}`);
    expect(writes.sort()).toEqual(
      ['Edit notes.txt toolu_e1', 'Edit src/answer.ts toolu_e2', 'NotebookEdit analysis.ipynb toolu_n2', 'Write logs/subagent.txt toolu_s1', 'Write src/answer.ts toolu_w1'].sort(),
    );

    // The ids read back through the public API: per file in a rewind and a diff, per turn in the transcript.
    const reopened = await project.open({ resume: manager.sessionId });
    const sinceSecond = await toolCallsSince(reopened, second.uuid!);
    const secondTurnFiles = { 'analysis.ipynb': ['toolu_n2'], 'logs/subagent.txt': ['toolu_s1'], 'src/answer.ts': ['toolu_e2'] };
    expect(sinceSecond.rewind).toEqual(secondTurnFiles);
    expect(sinceSecond.diff).toEqual(secondTurnFiles);
    expect(sinceSecond.turn).toEqual([
      { toolCallId: 'toolu_e2', tool: 'Edit', files: ['src/answer.ts'] },
      { toolCallId: 'toolu_n2', tool: 'NotebookEdit', files: ['analysis.ipynb'] },
      { toolCallId: 'toolu_s1', tool: 'Write', files: ['logs/subagent.txt'] },
    ]);
    expect((await toolCallsSince(reopened, first.uuid!)).rewind).toEqual({ ...secondTurnFiles, 'notes.txt': ['toolu_e1'], 'src/answer.ts': ['toolu_w1', 'toolu_e2'] });

    // Rewinds restore every byte and mode: to the second turn, then to the first.
    await reopened.rewindFiles(second.uuid!);
    expect(filesOf(project.snapshot())).toEqual(filesOf(afterFirst!));
    await reopened.rewindFiles(first.uuid!);
    expect(filesOf(project.snapshot())).toEqual(filesOf(initial));
    expect(api.otherRoutes).toEqual([]);
  });

  it('keys the checkpoint of a message with pasted content by its uuid, and a later message with the same text gets its own', async () => {
    const { project, manager, initial } = await agentProject();
    const api = await startApi({
      'PASTED-LIST': [toolUse('toolu_e1', 'Edit', { file_path: project.file('notes.txt'), old_string: '- pears', new_string: '- plums' })],
      'TIDY-TURN': [toolUse('toolu_w2', 'Write', { file_path: project.file('tidy.txt'), content: 'tidied\n' })],
    });
    const claude = environment(api);
    const events: CheckpointEvent[] = [];
    const warnings: CheckpointWarning[] = [];
    const checkpoints = createCheckpointHooks(manager, { onCheckpoint: (event) => events.push(event), onWarning: (warning) => warnings.push(warning) });
    const prompts = promptStream();
    const pasted = userMessage('TIDY-TURN: tidy the notes', { pasted_content: ['PASTED-LIST\n- apples\n- plums'] });
    const again = userMessage('TIDY-TURN: tidy the notes');
    const conversation = query({ prompt: checkpoints.prompt(prompts.messages()), options: checkpoints.options({ cwd: project.root, permissionMode: 'acceptEdits', settingSources: [], env: claude.env }) });
    cleanups.push(() => conversation.close());
    let afterFirst: Record<string, string> | undefined;
    const results = await converse(conversation, prompts, [pasted, again], (message) => {
      if (message.type === 'result' && afterFirst === undefined) afterFirst = project.snapshot();
    });
    expect(results).toEqual(['success', 'success']);
    // The CLI did rewrite the prompt: the pasted text comes after the typed text.
    expect(events[0]!.prompt).toMatch(/^TIDY-TURN: tidy the notes\s+(<pasted_content[^>]*>\s*)?PASTED-LIST/);

    expect(events.map((event) => [event.checkpointId, event.source])).toEqual([
      [pasted.uuid, 'message'],
      [again.uuid, 'message'],
    ]);
    expect(warnings).toEqual([]);
    expect((await manager.listCheckpoints()).map((checkpoint) => checkpoint.id)).toEqual([pasted.uuid, again.uuid]);
    await manager.rewindFiles(again.uuid!);
    expect(filesOf(project.snapshot())).toEqual(filesOf(afterFirst!));
    await manager.rewindFiles(pasted.uuid!);
    expect(filesOf(project.snapshot())).toEqual(filesOf(initial));
  });

  it('takes no checkpoint for the notification of a background subagent (the default): the turn’s files stay with its user message', async () => {
    const { project, manager, initial } = await agentProject();
    let notified!: () => void;
    const notification = new Promise<void>((resolve) => (notified = resolve));
    const api = await startApi(
      {
        'TURN-ONE': [toolUse('toolu_w1', 'Write', { file_path: project.file('one.txt'), content: 'one\n' })],
        'TURN-TWO': [
          toolUse('toolu_t2', 'Task', { description: 'Write a log', prompt: 'SUBAGENT-JOB: write the log', subagent_type: 'general-purpose' }),
          toolUse('toolu_w2', 'Write', { file_path: project.file('two.txt'), content: 'two\n' }),
          toolUse('toolu_w3', 'Write', { file_path: project.file('while-notified.txt'), content: 'three\n' }),
          toolUse('toolu_w4', 'Write', { file_path: project.file('after-notified.txt'), content: 'four\n' }),
        ],
        'SUBAGENT-JOB': [toolUse('toolu_s1', 'Write', { file_path: project.file('logs/subagent.txt'), content: 'written in the background\n' })],
      },
      // The main agent's third step waits until the subagent has finished, so its notification arrives mid-turn.
      (blocks) => (blocks.some((block) => block.type === 'tool_use' && block.id === 'toolu_w3') ? notification : undefined),
    );
    const claude = environment(api);
    const submitted: string[] = [];
    const events: CheckpointEvent[] = [];
    const checkpoints = createCheckpointHooks(manager, { onCheckpoint: (event) => events.push(event) });
    const seePrompt: HookCallback = async (input) => (input.hook_event_name === 'UserPromptSubmit' && submitted.push(input.prompt), {});
    const prompts = promptStream();
    const first = userMessage('TURN-ONE: write one');
    const second = userMessage('TURN-TWO: log in the background, then write two');
    const conversation = query({
      prompt: checkpoints.prompt(prompts.messages()),
      options: checkpoints.options({ cwd: project.root, permissionMode: 'acceptEdits', settingSources: [], env: claude.env, hooks: { UserPromptSubmit: [{ hooks: [seePrompt] }] } }),
    });
    cleanups.push(() => conversation.close());
    let afterFirst: Record<string, string> | undefined;
    const results = await converse(conversation, prompts, [first, second], (message) => {
      if (message.type === 'result' && afterFirst === undefined) afterFirst = project.snapshot();
      if (message.type === 'system' && message.subtype === 'task_notification') notified();
    });
    expect(results).toEqual(['success', 'success']);
    for (const name of ['one.txt', 'two.txt', 'while-notified.txt', 'after-notified.txt', 'logs/subagent.txt']) expect(project.exists(name)).toBe(true);
    // The CLI did hand the notification to UserPromptSubmit.
    expect(submitted.filter((prompt) => prompt.startsWith('<task-notification>'))).toHaveLength(1);

    // No checkpoint and no transcript entry for it: two user messages, two checkpoints.
    expect(events.map((event) => event.checkpointId)).toEqual([first.uuid, second.uuid]);
    expect((await manager.listCheckpoints()).map((checkpoint) => checkpoint.id)).toEqual([first.uuid, second.uuid]);
    const transcript = await manager.getTranscript();
    expect(transcript.map((entry) => [entry.type, entry.uuid])).toEqual([
      ['user', first.uuid],
      ['user', second.uuid],
    ]);
    expect(transcript[1]!.files).toEqual(['after-notified.txt', 'logs/subagent.txt', 'two.txt', 'while-notified.txt'].map((name) => project.file(name)));

    await manager.rewindFiles(second.uuid!);
    expect(filesOf(project.snapshot())).toEqual(filesOf(afterFirst!));
    await manager.rewindFiles(first.uuid!);
    expect(filesOf(project.snapshot())).toEqual(filesOf(initial));
  });

  it('keys the checkpoint of a user message that starts with <task-notification> (a pasted log) by its uuid: rewinding to it undoes just its turn', async () => {
    const { project, manager, initial } = await agentProject();
    const api = await startApi({
      'TURN-ONE': [toolUse('toolu_e1', 'Edit', { file_path: project.file('notes.txt'), old_string: '- pears', new_string: '- plums' })],
      'TURN-TWO': [toolUse('toolu_e2', 'Edit', { file_path: project.file('notes.txt'), old_string: '- plums', new_string: '- kiwis' })],
    });
    const claude = environment(api);
    const events: CheckpointEvent[] = [];
    const warnings: CheckpointWarning[] = [];
    const checkpoints = createCheckpointHooks(manager, { onCheckpoint: (event) => events.push(event), onWarning: (warning) => warnings.push(warning) });
    const prompts = promptStream();
    const first = userMessage('TURN-ONE: swap pears for plums');
    const pasted = userMessage('<task-notification>a log the user pasted</task-notification>\nTURN-TWO: now kiwis, please');
    const conversation = query({ prompt: checkpoints.prompt(prompts.messages()), options: checkpoints.options({ cwd: project.root, permissionMode: 'acceptEdits', settingSources: [], env: claude.env }) });
    cleanups.push(() => conversation.close());
    let afterFirst: Record<string, string> | undefined;
    const results = await converse(conversation, prompts, [first, pasted], (message) => {
      if (message.type === 'result' && afterFirst === undefined) afterFirst = project.snapshot();
    });
    expect(results).toEqual(['success', 'success']);
    expect(project.read('notes.txt').toString()).toBe('Shopping list\r\n- apples\r\n- kiwis\r\n');

    expect(events.map((event) => [event.checkpointId, event.source])).toEqual([
      [first.uuid, 'message'],
      [pasted.uuid, 'message'],
    ]);
    expect(warnings).toEqual([]);
    expect((await manager.listCheckpoints()).map((checkpoint) => checkpoint.id)).toEqual([first.uuid, pasted.uuid]);
    await manager.rewindFiles(pasted.uuid!);
    expect(filesOf(project.snapshot())).toEqual(filesOf(afterFirst!));
    await manager.rewindFiles(first.uuid!);
    expect(filesOf(project.snapshot())).toEqual(filesOf(initial));
  });

  it('with a plain string prompt and withCheckpoints, keys the checkpoint by the prompt_id the CLI stores with the user message', async () => {
    const { project, manager, initial } = await agentProject();
    const api = await startApi({ 'ONLY-TURN': [toolUse('toolu_w1', 'Write', { file_path: project.file('notes.txt'), content: 'replaced\n' })] });
    const claude = environment(api);
    let sessionId = '';
    for await (const message of query({ prompt: 'ONLY-TURN: replace the notes', options: withCheckpoints(manager, { cwd: project.root, permissionMode: 'acceptEdits', settingSources: [], env: claude.env }) })) {
      if (message.type === 'result') sessionId = message.session_id;
    }
    expect(project.read('notes.txt').toString()).toBe('replaced\n');

    const [checkpoint] = await manager.listCheckpoints();
    const transcript = fs.readdirSync(path.join(claude.configDirectory, 'projects'), { recursive: true, encoding: 'utf8' }).find((name) => name.endsWith(`${sessionId}.jsonl`))!;
    const userEntry = fs
      .readFileSync(path.join(claude.configDirectory, 'projects', transcript), 'utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as { type: string; promptId?: string; message?: unknown })
      .find((entry) => entry.type === 'user' && JSON.stringify(entry.message).includes('ONLY-TURN'));
    expect(userEntry?.promptId).toBe(checkpoint!.id);

    await manager.rewindFiles(checkpoint!.id);
    expect(filesOf(project.snapshot())).toEqual(filesOf(initial));
  });

  it('blocks the prompt when its checkpoint cannot be taken: the model is never asked, nothing is written', async () => {
    const { project, manager, initial } = await agentProject();
    const api = await startApi({ 'BLOCKED-TURN': [toolUse('toolu_w1', 'Write', { file_path: project.file('notes.txt'), content: 'replaced\n' })] });
    const claude = environment(api);
    await manager.close(); // every call now fails with CLOSED
    const messages: SDKMessage[] = [];
    for await (const message of query({ prompt: 'BLOCKED-TURN: replace the notes', options: withCheckpoints(manager, { cwd: project.root, permissionMode: 'acceptEdits', settingSources: [], env: claude.env }) })) {
      messages.push(message);
    }
    expect(api.requests).toEqual([]);
    expect(project.snapshot()).toEqual(initial);
    expect(JSON.stringify(messages)).toMatch(/rewindable could not take the checkpoint of this prompt, so it was not run: .*closed/);
  });
});

function initialBytes(snapshot: Record<string, string>, name: string): Buffer {
  return Buffer.from(snapshot[name]!.split(' ')[1]!, 'base64');
}
