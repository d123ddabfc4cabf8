import fs from 'node:fs';
import path from 'node:path';
import { AIMessage, HumanMessage, type BaseMessage, type ToolMessage } from '@langchain/core/messages';
import { fakeModel } from '@langchain/core/testing';
import { tool } from '@langchain/core/tools';
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import { createAgent } from 'langchain';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { checkpointIdFor, checkpointMiddleware, checkpointUserMessage, trackStructuredTool, type WriteNotRecordedWarning } from '../../src/integrations/langchain.js';
import { storeLosingWriteRecords } from '../helpers/failing-write-records.js';
import { storedRecords } from '../tools/tool-session.js';
import { agentProject, filesOf } from './helpers/agent-project.js';
import { toolCallsSince } from './helpers/tool-calls.js';

/** File tools as a LangChain harness writes them: plain fs, no tracking of their own. */
function fileTools(root: string) {
  const resolve = (file: string) => path.resolve(root, file);
  const writeFile = tool(
    async ({ file_path, content }) => {
      fs.mkdirSync(path.dirname(resolve(file_path)), { recursive: true });
      fs.writeFileSync(resolve(file_path), content);
      return `Wrote ${file_path}`;
    },
    { name: 'write_file', description: 'Write a whole file.', schema: z.object({ file_path: z.string(), content: z.string() }) },
  );
  const editFile = tool(
    async ({ file_path, old_string, new_string }) => {
      const text = fs.readFileSync(resolve(file_path), 'utf8');
      if (!text.includes(old_string)) throw new Error(`${old_string} not found in ${file_path}`);
      fs.writeFileSync(resolve(file_path), text.replace(old_string, new_string));
      return `Edited ${file_path}`;
    },
    { name: 'edit_file', description: 'Replace text in a file.', schema: z.object({ file_path: z.string(), old_string: z.string(), new_string: z.string() }) },
  );
  const saveJson = tool(
    async ({ target, value }) => {
      fs.writeFileSync(resolve(target), `${JSON.stringify(value)}\n`);
      return `Saved ${target}`;
    },
    { name: 'save_json', description: 'Save a JSON value.', schema: z.object({ target: z.string(), value: z.record(z.string(), z.unknown()) }) },
  );
  const readFile = tool(async ({ file_path }) => fs.readFileSync(resolve(file_path), 'utf8'), {
    name: 'read_file',
    description: 'Read a file.',
    schema: z.object({ file_path: z.string() }),
  });
  return { writeFile, editFile, saveJson, readFile };
}

function toolMessages(messages: BaseMessage[]): ToolMessage[] {
  return messages.filter((message): message is ToolMessage => message.type === 'tool');
}

/** An agent project whose store loses its connection on the records of tool writes, once told to. */
async function projectLosingWriteRecords() {
  let store!: ReturnType<typeof storeLosingWriteRecords>;
  const context = await agentProject((project) => {
    store = storeLosingWriteRecords(project.store);
    return { storage: store.storage };
  });
  const warnings: WriteNotRecordedWarning[] = [];
  return { ...context, store, warnings, onWarning: (warning: WriteNotRecordedWarning) => warnings.push(warning) };
}

/** What onWarning was told, without the message and cause. */
function warned(warnings: WriteNotRecordedWarning[]) {
  return warnings.map(({ code, tool, toolCallId, files }) => ({ code, tool, toolCallId, files }));
}

describe('LangChain: createAgent with fakeModel and checkpointMiddleware', () => {
  it('two user turns of file tools; the middleware checkpoints each human message; rewinding to the first restores every byte', async () => {
    const { project, manager, initial } = await agentProject();
    const { writeFile, editFile, saveJson, readFile } = fileTools(project.root);
    const model = fakeModel()
      .respondWithTools([
        { name: 'write_file', args: { file_path: 'src/new.ts', content: 'export const answer = 41;\n' }, id: 'call_1' },
        { name: 'edit_file', args: { file_path: 'notes.txt', old_string: 'pears', new_string: 'plums' }, id: 'call_2' },
      ])
      .respondWithTools([{ name: 'read_file', args: { file_path: 'logo.bin' }, id: 'call_3' }])
      .respond(new AIMessage('First request done.'))
      .respondWithTools([
        { name: 'edit_file', args: { file_path: 'src/new.ts', old_string: '41', new_string: '42' }, id: 'call_4' },
        { name: 'save_json', args: { target: 'analysis.ipynb', value: { replaced: true } }, id: 'call_5' },
        { name: 'write_file', args: { file_path: 'bin/run.sh', content: '#!/bin/sh\necho changed\n' }, id: 'call_6' },
      ])
      .respond(new AIMessage('Second request done.'));
    const agent = createAgent({
      model,
      tools: [writeFile, editFile, saveJson, readFile],
      middleware: [checkpointMiddleware(manager, { tools: { write_file: ['file_path'], edit_file: ['file_path'], save_json: ['target'] } })],
    });

    const first = await agent.invoke({ messages: [new HumanMessage({ id: 'human-turn-1', content: 'Add the answer, swap pears for plums' })] });
    expect(first.messages.at(-1)!.text).toBe('First request done.');
    expect(toolMessages(first.messages).map((message) => message.status)).toEqual(['success', 'success', 'success']);
    expect(project.read('notes.txt').toString()).toBe('Shopping list\r\n- apples\r\n- plums\r\n');
    const afterFirst = project.snapshot();

    const second = await agent.invoke({ messages: [...first.messages, new HumanMessage({ id: 'human-turn-2', content: 'Bump it, replace the notebook' })] });
    expect(second.messages.at(-1)!.text).toBe('Second request done.');
    expect(project.read('src/new.ts').toString()).toBe('export const answer = 42;\n');
    expect(project.read('analysis.ipynb').toString()).toBe('{"replaced":true}\n');

    expect((await manager.listCheckpoints()).map((checkpoint) => checkpoint.id)).toEqual([checkpointIdFor('human-turn-1'), checkpointIdFor('human-turn-2')]);
    await manager.rewindFiles(checkpointIdFor('human-turn-2'));
    expect(filesOf(project.snapshot())).toEqual(filesOf(afterFirst));
    await manager.rewindFiles(checkpointIdFor('human-turn-1'));
    expect(filesOf(project.snapshot())).toEqual(filesOf(initial));

    // Only the listed tools were tracked: the file the agent only read is not part of any checkpoint.
    const tracked = (await manager.listCheckpoints()).flatMap((checkpoint) => checkpoint.files);
    expect(tracked).not.toContain(project.file('logo.bin'));
  });

  it('records each write with the tool name and the tool call id, and the human message in the transcript', async () => {
    const { project, manager } = await agentProject();
    const { writeFile } = fileTools(project.root);
    const model = fakeModel()
      .respondWithTools([{ name: 'write_file', args: { file_path: 'a.txt', content: 'a\n' }, id: 'call_a' }])
      .respond(new AIMessage('ok'));
    const agent = createAgent({ model, tools: [writeFile], middleware: [checkpointMiddleware(manager)] });
    await agent.invoke({ messages: [new HumanMessage({ id: 'human-1', content: 'Write a' })] });
    // The ids read back through the public API: per file in a rewind and a diff, per turn in the transcript.
    expect(await toolCallsSince(manager, checkpointIdFor('human-1'))).toEqual({
      rewind: { 'a.txt': ['call_a'] },
      diff: { 'a.txt': ['call_a'] },
      turn: [{ toolCallId: 'call_a', tool: 'write_file', files: ['a.txt'] }],
    });
    await manager.close();
    const records = storedRecords(project);
    expect(records.filter((record) => record.type === 'write')).toEqual([expect.objectContaining({ path: 'a.txt', tool: 'write_file', toolCallId: 'call_a' })]);
    expect(records.find((record) => record.type === 'message')).toMatchObject({ uuid: checkpointIdFor('human-1'), message: { role: 'user', content: 'Write a' } });
  });

  it('refuses a call whose file cannot be backed up with an error ToolMessage; the tool never runs', async () => {
    const { project, manager } = await agentProject();
    const { writeFile } = fileTools(project.root);
    const escape = path.join(project.outside, 'escape.txt');
    const model = fakeModel()
      .respondWithTools([{ name: 'write_file', args: { file_path: escape, content: 'x' }, id: 'call_x' }])
      .respond(new AIMessage('gave up'));
    const agent = createAgent({ model, tools: [writeFile], middleware: [checkpointMiddleware(manager)] });
    const result = await agent.invoke({ messages: [new HumanMessage('escape')] });

    expect(fs.existsSync(escape)).toBe(false);
    const [refusal] = toolMessages(result.messages);
    expect(refusal!.status).toBe('error');
    expect(refusal!.tool_call_id).toBe('call_x');
    expect(refusal!.text).toMatch(/^rewindable could not back up .*escape\.txt before this write_file call, so the call was refused: .*outside the project root/);
    // The model saw it.
    expect(model.calls[1]!.messages.some((message) => message.type === 'tool' && /refused/.test(message.text))).toBe(true);
  });

  it('a call that ran reaches the model as its own ToolMessage when the record of its write fails; onWarning is told', async () => {
    const { project, manager, initial, store, warnings, onWarning } = await projectLosingWriteRecords();
    const { writeFile, editFile } = fileTools(project.root);
    const model = fakeModel()
      .respondWithTools([
        { name: 'write_file', args: { file_path: 'src/new.ts', content: 'export {};\n' }, id: 'call_w' },
        { name: 'edit_file', args: { file_path: 'notes.txt', old_string: 'pears', new_string: 'plums' }, id: 'call_e' },
      ])
      .respond(new AIMessage('done'));
    const agent = createAgent({ model, tools: [writeFile, editFile], middleware: [checkpointMiddleware(manager, { onWarning })] });
    const checkpointId = await checkpointUserMessage(manager, { role: 'user', content: 'go' }, { id: 'human-1' });
    store.loseConnection();
    const result = await agent.invoke({ messages: [new HumanMessage({ id: 'human-1', content: 'go' })] });

    expect(toolMessages(result.messages).map((message) => `${message.tool_call_id} ${message.status} ${message.text}`).sort()).toEqual([
      'call_e success Edited notes.txt',
      'call_w success Wrote src/new.ts',
    ]);
    expect(model.calls[1]!.messages.some((message) => /refused/.test(message.text))).toBe(false);
    expect(project.read('src/new.ts').toString()).toBe('export {};\n');
    expect(project.read('notes.txt').toString()).toBe('Shopping list\r\n- apples\r\n- plums\r\n');
    expect(warned(warnings).sort((left, right) => left.toolCallId!.localeCompare(right.toolCallId!))).toEqual([
      { code: 'write-not-recorded', tool: 'edit_file', toolCallId: 'call_e', files: [project.file('notes.txt')] },
      { code: 'write-not-recorded', tool: 'write_file', toolCallId: 'call_w', files: [project.file('src/new.ts')] },
    ]);

    store.reconnect();
    await manager.rewindFiles(checkpointId);
    expect(filesOf(project.snapshot())).toEqual(filesOf(initial));
  });

  it('leaves checkpoints to the harness with checkpoint: false', async () => {
    const { project, manager, initial } = await agentProject();
    const { writeFile } = fileTools(project.root);
    const model = fakeModel()
      .respondWithTools([{ name: 'write_file', args: { file_path: 'notes.txt', content: 'x\n' }, id: 'call_1' }])
      .respond(new AIMessage('ok'));
    const agent = createAgent({ model, tools: [writeFile], middleware: [checkpointMiddleware(manager, { checkpoint: false })] });
    const checkpointId = await checkpointUserMessage(manager, { role: 'user', content: 'overwrite' }, { id: 'harness-7' });
    await agent.invoke({ messages: [new HumanMessage({ id: 'human-1', content: 'overwrite' })] });
    expect((await manager.listCheckpoints()).map((checkpoint) => checkpoint.id)).toEqual([checkpointId]);
    await manager.rewindFiles(checkpointId);
    expect(filesOf(project.snapshot())).toEqual(filesOf(initial));
  });
});

describe('LangChain: trackStructuredTool in a plain LangGraph ToolNode', () => {
  it('tracks a wrapped tool over two turns of a model → tools graph, and rewinds exactly', async () => {
    const { project, manager, initial } = await agentProject();
    const { writeFile, saveJson } = fileTools(project.root);
    const tools = [trackStructuredTool(manager, writeFile), trackStructuredTool(manager, saveJson, { paths: ['target'] })];
    const model = fakeModel()
      .respondWithTools([{ name: 'write_file', args: { file_path: 'src/new.ts', content: 'one\n' }, id: 'call_1' }])
      .respond(new AIMessage('one done'))
      .respondWithTools([
        { name: 'save_json', args: { target: 'notes.txt', value: { n: 2 } }, id: 'call_2' },
        { name: 'write_file', args: { file_path: 'src/new.ts', content: 'two\n' }, id: 'call_3' },
      ])
      .respond(new AIMessage('two done'));
    const bound = model.bindTools(tools);
    const graph = new StateGraph(MessagesAnnotation)
      .addNode('agent', async (state) => ({ messages: [await bound.invoke(state.messages)] }))
      .addNode('tools', new ToolNode(tools))
      .addEdge(START, 'agent')
      .addConditionalEdges('agent', (state) => ((state.messages.at(-1) as AIMessage).tool_calls?.length ? 'tools' : END))
      .addEdge('tools', 'agent')
      .compile();

    const first = await checkpointUserMessage(manager, { role: 'user', content: 'one' }, { id: 'turn-1' });
    const afterOne = await graph.invoke({ messages: [new HumanMessage('one')] });
    const afterFirst = project.snapshot();
    const second = await checkpointUserMessage(manager, { role: 'user', content: 'two' }, { id: 'turn-2' });
    await graph.invoke({ messages: [...afterOne.messages, new HumanMessage('two')] });
    expect(project.read('src/new.ts').toString()).toBe('two\n');
    expect(project.read('notes.txt').toString()).toBe('{"n":2}\n');
    expect(await toolCallsSince(manager, first)).toEqual({
      rewind: { 'notes.txt': ['call_2'], 'src/new.ts': ['call_1', 'call_3'] },
      diff: { 'notes.txt': ['call_2'], 'src/new.ts': ['call_1', 'call_3'] },
      turn: [{ toolCallId: 'call_1', tool: 'write_file', files: ['src/new.ts'] }],
    });
    expect((await toolCallsSince(manager, second)).turn.map((call) => call.toolCallId)).toEqual(['call_2', 'call_3']);

    await manager.rewindFiles(second);
    expect(filesOf(project.snapshot())).toEqual(filesOf(afterFirst));
    await manager.rewindFiles(first);
    expect(filesOf(project.snapshot())).toEqual(filesOf(initial));
    await manager.close();
    const writes = storedRecords(project).filter((record) => record.type === 'write');
    expect(writes.map((record) => `${record.tool} ${record.path} ${record.toolCallId}`).sort()).toEqual([
      'save_json notes.txt call_2',
      'write_file src/new.ts call_1',
      'write_file src/new.ts call_3',
    ]);
  });

  it('a call that ran reaches the model as its result when the record of its write fails; onWarning is told', async () => {
    const { project, manager, store, warnings, onWarning } = await projectLosingWriteRecords();
    const { writeFile } = fileTools(project.root);
    const node = new ToolNode([trackStructuredTool(manager, writeFile, { onWarning })]);
    await checkpointUserMessage(manager, 'go');
    store.loseConnection();
    const output = await node.invoke({ messages: [new AIMessage({ content: '', tool_calls: [{ name: 'write_file', args: { file_path: 'a.txt', content: 'a\n' }, id: 'call_a' }] })] });
    const [message] = (output as { messages: ToolMessage[] }).messages;
    expect([message!.status, message!.text]).toEqual(['success', 'Wrote a.txt']);
    expect(project.read('a.txt').toString()).toBe('a\n');
    expect(warned(warnings)).toEqual([{ code: 'write-not-recorded', tool: 'write_file', toolCallId: 'call_a', files: [project.file('a.txt')] }]);
  });

  it('is the same tool: class, name, schema; a refused call reaches the model as an error and the tool never runs', async () => {
    const { project, manager } = await agentProject();
    const { writeFile } = fileTools(project.root);
    const tracked = trackStructuredTool(manager, writeFile);
    expect(tracked).toBeInstanceOf(writeFile.constructor);
    expect(tracked.name).toBe('write_file');
    expect(tracked.schema).toBe(writeFile.schema);

    const node = new ToolNode([tracked]);
    await checkpointUserMessage(manager, 'go');
    const escape = path.join(project.outside, 'escape.txt');
    const output = await node.invoke({ messages: [new AIMessage({ content: '', tool_calls: [{ name: 'write_file', args: { file_path: escape, content: 'x' }, id: 'call_x' }] })] });
    const [message] = (output as { messages: ToolMessage[] }).messages;
    expect(message!.status).toBe('error');
    expect(message!.text).toMatch(/rewindable could not back up .*escape\.txt before this write_file call, so the call was refused: .*outside the project root/);
    expect(fs.existsSync(escape)).toBe(false);
  });
});
