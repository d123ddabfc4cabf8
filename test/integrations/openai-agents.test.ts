import fs from 'node:fs';
import path from 'node:path';
import {
  Agent,
  applyDiff,
  applyPatchTool,
  Runner,
  RunState,
  tool,
  Usage,
  type AgentInputItem,
  type AgentOutputItem,
  type ApplyPatchOperation,
  type Editor,
  type Model,
  type ModelRequest,
  type ModelResponse,
} from '@openai/agents';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { CheckpointManager } from '../../src/index.js';
import { checkpointIdFor, checkpointUserMessage, trackApplyPatchTool, trackEditor, trackFunctionTool, type WriteNotRecordedWarning } from '../../src/integrations/openai-agents.js';
import { storeLosingWriteRecords } from '../helpers/failing-write-records.js';
import { storedRecords } from '../tools/tool-session.js';
import { agentProject, filesOf } from './helpers/agent-project.js';
import { toolCallsSince } from './helpers/tool-calls.js';

/** A Model that plays back scripted responses, one per request, and keeps the requests. */
class ScriptedModel implements Model {
  readonly requests: ModelRequest[] = [];
  constructor(private readonly responses: AgentOutputItem[][]) {}

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.requests.push(request);
    const output = this.responses.shift();
    if (output === undefined) throw new Error('The script has no more responses.');
    return { usage: new Usage(), output, responseId: `resp_${this.requests.length}` };
  }

  // eslint-disable-next-line require-yield -- the runner streams only when asked to; these tests never do
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error('Not scripted: run without stream.');
  }
}

function functionCall(callId: string, name: string, input: Record<string, unknown>): AgentOutputItem {
  return { type: 'function_call', callId, name, arguments: JSON.stringify(input), status: 'completed' };
}

function patchCall(callId: string, operation: ApplyPatchOperation): AgentOutputItem {
  return { type: 'apply_patch_call', callId, status: 'completed', operation };
}

function reply(text: string): AgentOutputItem {
  return { type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text }] };
}

/** Function tools that write with plain fs, as a harness's own tools would. */
function fileFunctionTools(root: string, options: { needsApproval?: boolean } = {}) {
  const writeFileTool = tool({
    name: 'write_file',
    description: 'Write a whole file.',
    parameters: z.object({ path: z.string(), content: z.string() }),
    needsApproval: options.needsApproval ?? false,
    execute: async ({ path: target, content }) => {
      fs.mkdirSync(path.dirname(path.join(root, target)), { recursive: true });
      fs.writeFileSync(path.join(root, target), content);
      return `wrote ${target}`;
    },
  });
  const replaceTool = tool({
    name: 'replace_text',
    description: 'Replace text in a file.',
    parameters: z.object({ target: z.string(), search: z.string(), replacement: z.string() }),
    execute: async ({ target, search, replacement }) => {
      const file = path.join(root, target);
      fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace(search, replacement));
      return `edited ${target}`;
    },
  });
  return { writeFileTool, replaceTool };
}

/** An apply_patch editor over the project, using the SDK's own V4A diff applier. */
function workspaceEditor(root: string): Editor {
  return {
    async createFile(operation) {
      const file = path.join(root, operation.path);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, applyDiff('', operation.diff, 'create'));
      return { status: 'completed', output: `Created ${operation.path}` };
    },
    async updateFile(operation) {
      const file = path.join(root, operation.path);
      const updated = applyDiff(fs.readFileSync(file, 'utf8'), operation.diff);
      if (operation.moveTo !== undefined) fs.rmSync(file);
      fs.writeFileSync(path.join(root, operation.moveTo ?? operation.path), updated);
      return { status: 'completed', output: `Updated ${operation.path}` };
    },
    async deleteFile(operation) {
      fs.rmSync(path.join(root, operation.path));
      return { status: 'completed', output: `Deleted ${operation.path}` };
    },
  };
}

async function runTurn(manager: CheckpointManager, runner: Runner, agent: Agent, history: AgentInputItem[], messageId: string, text: string) {
  const input: AgentInputItem[] = [...history, { role: 'user', content: text }];
  await checkpointUserMessage(manager, { role: 'user', content: text }, { id: messageId });
  const result = await runner.run(agent, input);
  return { result, history: result.history };
}

describe('OpenAI Agents JS: Runner with a scripted Model', () => {
  it('two user turns of function tools and apply_patch; rewinding to the first turn restores every byte', async () => {
    const { project, manager, initial } = await agentProject();
    const { writeFileTool, replaceTool } = fileFunctionTools(project.root);
    const model = new ScriptedModel([
      [functionCall('call_1', 'write_file', { path: 'src/new.ts', content: 'export const answer = 41;\n' }), functionCall('call_2', 'replace_text', { target: 'notes.txt', search: 'pears', replacement: 'plums' })],
      [patchCall('call_3', { type: 'create_file', path: 'docs/guide.md', diff: '+# Guide\n+First version.\n' })],
      [reply('First request done.')],
      [
        patchCall('call_4', { type: 'update_file', path: 'docs/guide.md', diff: '@@\n # Guide\n-First version.\n+Second version.\n', moveTo: 'docs/manual.md' }),
        patchCall('call_5', { type: 'delete_file', path: 'logo.bin' }),
        functionCall('call_6', 'write_file', { path: 'bin/run.sh', content: '#!/bin/sh\necho changed\n' }),
      ],
      [reply('Second request done.')],
    ]);
    const agent = new Agent({
      name: 'Coder',
      instructions: 'Edit files.',
      model,
      tools: [
        trackFunctionTool(manager, writeFileTool),
        trackFunctionTool(manager, replaceTool, { paths: ['target'] }),
        trackApplyPatchTool(manager, applyPatchTool({ editor: workspaceEditor(project.root) })),
      ],
    });
    const runner = new Runner({ tracingDisabled: true });

    const first = await runTurn(manager, runner, agent, [], 'msg_turn_1', 'Add the answer and the guide');
    expect(first.result.finalOutput).toBe('First request done.');
    expect(project.read('notes.txt').toString()).toBe('Shopping list\r\n- apples\r\n- plums\r\n');
    expect(project.read('docs/guide.md').toString()).toBe('# Guide\nFirst version.');
    const afterFirst = project.snapshot();

    const second = await runTurn(manager, runner, agent, first.history, 'msg_turn_2', 'Rename the guide, drop the logo');
    expect(second.result.finalOutput).toBe('Second request done.');
    expect(project.exists('docs/guide.md')).toBe(false);
    expect(project.read('docs/manual.md').toString()).toBe('# Guide\nSecond version.');
    expect(project.exists('logo.bin')).toBe(false);

    await manager.rewindFiles(checkpointIdFor('msg_turn_2'));
    expect(filesOf(project.snapshot())).toEqual(filesOf(afterFirst));
    await manager.rewindFiles(checkpointIdFor('msg_turn_1'));
    expect(filesOf(project.snapshot())).toEqual(filesOf(initial));
  });

  it('records each write with the tool name and the call id, function tools and apply_patch alike', async () => {
    const { project, manager } = await agentProject();
    const { writeFileTool } = fileFunctionTools(project.root);
    const model = new ScriptedModel([
      [functionCall('call_w', 'write_file', { path: 'a.txt', content: 'a\n' }), patchCall('call_p', { type: 'create_file', path: 'b.txt', diff: '+b\n' })],
      [reply('ok')],
    ]);
    const agent = new Agent({
      name: 'Coder',
      model,
      tools: [trackFunctionTool(manager, writeFileTool), trackApplyPatchTool(manager, applyPatchTool({ editor: workspaceEditor(project.root) }))],
    });
    await runTurn(manager, new Runner({ tracingDisabled: true }), agent, [], 'msg_1', 'go');
    // The ids read back through the public API: per file in a rewind and a diff, per turn in the transcript.
    expect(await toolCallsSince(manager, checkpointIdFor('msg_1'))).toEqual({
      rewind: { 'a.txt': ['call_w'], 'b.txt': ['call_p'] },
      diff: { 'a.txt': ['call_w'], 'b.txt': ['call_p'] },
      turn: [
        { toolCallId: 'call_p', tool: 'apply_patch', files: ['b.txt'] },
        { toolCallId: 'call_w', tool: 'write_file', files: ['a.txt'] },
      ],
    });
    await manager.close();
    const writes = storedRecords(project)
      .filter((record) => record.type === 'write')
      .map((record) => `${record.path} ${record.tool} ${record.toolCallId}`);
    expect(writes.sort()).toEqual(['a.txt write_file call_w', 'b.txt apply_patch call_p']);
  });

  it('records the call id of writes approved after the run state was serialized and restored, apply_patch and function tools alike', async () => {
    const { project, manager, initial } = await agentProject();
    const { writeFileTool } = fileFunctionTools(project.root, { needsApproval: true });
    const model = new ScriptedModel([
      [
        patchCall('call_patch', { type: 'update_file', path: 'notes.txt', diff: '@@\n Shopping list\r\n-- apples\r\n+- kiwis\r\n' }),
        functionCall('call_write', 'write_file', { path: 'src/new.ts', content: 'export {};\n' }),
      ],
      [reply('done after approval')],
    ]);
    const createAgent = () =>
      new Agent({
        name: 'Coder',
        model,
        tools: [
          trackApplyPatchTool(manager, applyPatchTool({ editor: workspaceEditor(project.root), needsApproval: true })),
          trackFunctionTool(manager, writeFileTool),
        ],
      });
    const runner = new Runner({ tracingDisabled: true });
    const checkpointId = await checkpointUserMessage(manager, { role: 'user', content: 'edit' }, { id: 'msg_1' });
    const interrupted = await runner.run(createAgent(), 'edit');
    expect(interrupted.interruptions.map((item) => item.rawItem.type)).toEqual(['apply_patch_call', 'function_call']);
    expect(project.snapshot()).toEqual(initial);

    // The human-in-the-loop flow: the state is stored as a string, and approved later, by another agent object.
    const serialized = interrupted.state.toString();
    const agent = createAgent();
    const restored = await RunState.fromString(agent, serialized);
    for (const approval of restored.getInterruptions()) restored.approve(approval);
    const resumed = await runner.run(agent, restored);
    expect(resumed.finalOutput).toBe('done after approval');
    expect(project.read('notes.txt').toString()).toContain('- kiwis');
    expect(project.read('src/new.ts').toString()).toBe('export {};\n');

    await manager.close();
    const writes = storedRecords(project)
      .filter((record) => record.type === 'write')
      .map((record) => `${record.path} ${record.tool} ${record.toolCallId}`);
    expect(writes.sort()).toEqual(['notes.txt apply_patch call_patch', 'src/new.ts write_file call_write']);
    const reopened = await project.open({ resume: manager.sessionId });
    await reopened.rewindFiles(checkpointId);
    expect(filesOf(project.snapshot())).toEqual(filesOf(initial));
  });

  it('refuses a call whose file cannot be backed up: the tool never runs and the model reads the reason', async () => {
    const { project, manager } = await agentProject();
    let executed = 0;
    const save = tool({
      name: 'save',
      description: 'Save a file.',
      parameters: z.object({ path: z.string() }),
      execute: async () => {
        executed += 1;
        return 'saved';
      },
    });
    const escape = path.join(project.outside, 'escape.txt');
    const model = new ScriptedModel([
      [functionCall('call_x', 'save', { path: escape }), patchCall('call_y', { type: 'create_file', path: escape, diff: '+x\n' })],
      [reply('could not')],
    ]);
    const editorCalls: string[] = [];
    const editor = workspaceEditor(project.root);
    const agent = new Agent({
      name: 'Coder',
      model,
      tools: [
        trackFunctionTool(manager, save),
        trackApplyPatchTool(manager, applyPatchTool({ editor: { ...editor, createFile: async (operation) => (editorCalls.push(operation.path), editor.createFile(operation)) } })),
      ],
    });
    await runTurn(manager, new Runner({ tracingDisabled: true }), agent, [], 'msg_1', 'escape');

    expect(executed).toBe(0);
    expect(editorCalls).toEqual([]);
    expect(fs.existsSync(escape)).toBe(false);
    const toolOutputs = JSON.stringify((model.requests[1]!.input as AgentInputItem[]).filter((item) => item.type === 'function_call_result' || item.type === 'apply_patch_call_output'));
    expect(toolOutputs).toMatch(/rewindable could not back up [^"]*escape\.txt before this save call, so the call was refused: [^"]*outside the project root/);
    expect(toolOutputs).toMatch(/"status":"failed".*before this apply_patch call, so the call was refused/);
  });

  it('a call that ran reaches the model as its output when the record of its write fails, function tools and apply_patch alike; onWarning is told', async () => {
    let store!: ReturnType<typeof storeLosingWriteRecords>;
    const { project, manager, initial } = await agentProject((project) => {
      store = storeLosingWriteRecords(project.store);
      return { storage: store.storage };
    });
    const warnings: WriteNotRecordedWarning[] = [];
    const onWarning = (warning: WriteNotRecordedWarning) => warnings.push(warning);
    const { writeFileTool } = fileFunctionTools(project.root);
    const model = new ScriptedModel([
      [
        functionCall('call_write', 'write_file', { path: 'src/new.ts', content: 'export {};\n' }),
        patchCall('call_patch', { type: 'update_file', path: 'notes.txt', diff: '@@\n Shopping list\r\n-- apples\r\n+- kiwis\r\n' }),
      ],
      [reply('done')],
    ]);
    const agent = new Agent({
      name: 'Coder',
      model,
      tools: [trackFunctionTool(manager, writeFileTool, { onWarning }), trackApplyPatchTool(manager, applyPatchTool({ editor: workspaceEditor(project.root) }), { onWarning })],
    });
    const checkpointId = await checkpointUserMessage(manager, { role: 'user', content: 'go' }, { id: 'msg_1' });
    store.loseConnection();
    const result = await new Runner({ tracingDisabled: true }).run(agent, 'go');

    expect(result.finalOutput).toBe('done');
    const outputs = (model.requests[1]!.input as AgentInputItem[]).filter((item) => item.type === 'function_call_result' || item.type === 'apply_patch_call_output');
    expect(JSON.stringify(outputs)).toMatch(/"wrote src\/new\.ts"/);
    expect(JSON.stringify(outputs)).toMatch(/"status":"completed".*Updated notes\.txt|Updated notes\.txt.*"status":"completed"/);
    expect(JSON.stringify(outputs)).not.toMatch(/refused|rewindable/);
    expect(project.read('src/new.ts').toString()).toBe('export {};\n');
    expect(project.read('notes.txt').toString()).toContain('- kiwis');
    expect(warnings.map(({ code, tool, toolCallId, files }) => ({ code, tool, toolCallId, files })).sort((left, right) => left.tool.localeCompare(right.tool))).toEqual([
      { code: 'write-not-recorded', tool: 'apply_patch', toolCallId: 'call_patch', files: [project.file('notes.txt')] },
      { code: 'write-not-recorded', tool: 'write_file', toolCallId: 'call_write', files: [project.file('src/new.ts')] },
    ]);

    store.reconnect();
    await manager.rewindFiles(checkpointId);
    expect(filesOf(project.snapshot())).toEqual(filesOf(initial));
  });

  it('throws instead for a tool with an output schema, whose errors never reach the model as text', async () => {
    const { project, manager } = await agentProject();
    const structured = tool({
      name: 'save',
      description: 'Save.',
      parameters: z.object({ path: z.string() }),
      outputSchema: z.object({ saved: z.boolean() }),
      execute: async () => ({ saved: true }),
    });
    const model = new ScriptedModel([[functionCall('call_x', 'save', { path: path.join(project.outside, 'x.txt') })], [reply('no')]]);
    const agent = new Agent({ name: 'Coder', model, tools: [trackFunctionTool(manager, structured)] });
    await checkpointUserMessage(manager, 'go');
    await expect(new Runner({ tracingDisabled: true }).run(agent, 'go')).rejects.toThrow(/outside the project root/);
  });

  it('trackEditor backs up files for a bare editor, resolving paths with the paths option', async () => {
    const { project, manager, initial } = await agentProject();
    const editor = trackEditor(manager, workspaceEditor(project.root), { paths: (operation) => path.join(project.root, operation.path) });
    const checkpointId = await checkpointUserMessage(manager, 'edit', { id: 'turn-1' });
    await editor.updateFile({ type: 'update_file', path: 'notes.txt', diff: '@@\n Shopping list\r\n-- apples\r\n+- kiwis\r\n' });
    await editor.deleteFile({ type: 'delete_file', path: 'bin/run.sh' });
    expect(project.exists('bin/run.sh')).toBe(false);
    await manager.rewindFiles(checkpointId);
    expect(filesOf(project.snapshot())).toEqual(filesOf(initial));
  });
});
