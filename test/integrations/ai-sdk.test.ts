import fs from 'node:fs';
import path from 'node:path';
import { generateText, stepCountIs, tool, type ModelMessage, type ToolSet, type UIMessage } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { RewindableError } from '../../src/index.js';
import { checkpointIdFor, checkpointUserMessage, fileTools, trackTools, writeTool, type WriteNotRecordedWarning } from '../../src/integrations/ai-sdk.js';
import { storeLosingWriteRecords } from '../helpers/failing-write-records.js';
import { storedRecords } from '../tools/tool-session.js';
import { agentProject, filesOf } from './helpers/agent-project.js';
import { toolCallsSince } from './helpers/tool-calls.js';

type ScriptedCall = { id: string; tool: string; input: Record<string, unknown> };

/** One model step: tool calls (then the loop runs them and asks again), or a final text. */
function step(calls: ScriptedCall[] | string) {
  const usage = {
    inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: 5, text: 5, reasoning: undefined },
  };
  if (typeof calls === 'string') {
    return { content: [{ type: 'text' as const, text: calls }], finishReason: { unified: 'stop' as const, raw: 'stop' }, usage, warnings: [] };
  }
  return {
    content: calls.map((call) => ({ type: 'tool-call' as const, toolCallId: call.id, toolName: call.tool, input: JSON.stringify(call.input) })),
    finishReason: { unified: 'tool-calls' as const, raw: 'tool_use' },
    usage,
    warnings: [],
  };
}

/** A UIMessage as useChat sends it: an id that is not a UUID. */
function userMessage(id: string, text: string): UIMessage {
  return { id, role: 'user', parts: [{ type: 'text', text }] };
}

/** A custom tool that writes with plain fs: tracked only through trackTools. */
function appendLineTool(root: string) {
  return tool({
    description: 'Append a line to a file.',
    inputSchema: z.object({ target: z.string(), line: z.string() }),
    execute: async ({ target, line }) => {
      const file = path.join(root, target);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.appendFileSync(file, `${line}\n`);
      return { appended: line };
    },
  });
}

describe('AI SDK: generateText with MockLanguageModelV3', () => {
  it('two user turns of Write, Edit, NotebookEdit and a custom tool; rewinding to the first turn restores every byte', async () => {
    const { project, manager, initial } = await agentProject();
    const tools = { ...fileTools(manager), ...trackTools(manager, { appendLine: appendLineTool(project.root) }, { paths: { appendLine: ['target'] } }) };
    const model = new MockLanguageModelV3({
      doGenerate: [
        step([
          { id: 'call-1', tool: 'Write', input: { file_path: 'src/new.ts', content: 'export const answer = 41;\n' } },
          { id: 'call-2', tool: 'Edit', input: { file_path: 'notes.txt', old_string: '- pears', new_string: '- plums' } },
        ]),
        step([{ id: 'call-3', tool: 'appendLine', input: { target: 'logs/agent.log', line: 'turn one' } }]),
        step('Done with the first request.'),
        step([
          { id: 'call-4', tool: 'Edit', input: { file_path: 'src/new.ts', old_string: '41', new_string: '42' } },
          { id: 'call-5', tool: 'Write', input: { file_path: 'bin/run.sh', content: '#!/bin/sh\necho changed\n' } },
          { id: 'call-6', tool: 'NotebookEdit', input: { notebook_path: 'analysis.ipynb', cell_id: '5e6f7a8b', new_source: 'import polars as pl' } },
          { id: 'call-7', tool: 'appendLine', input: { target: 'logs/agent.log', line: 'turn two' } },
        ]),
        step('Done with the second request.'),
      ],
    });

    const messages: ModelMessage[] = [];
    const runTurn = async (message: UIMessage) => {
      await checkpointUserMessage(manager, message);
      messages.push({ role: 'user', content: (message.parts[0] as { text: string }).text });
      const result = await generateText({ model, tools, messages, stopWhen: stepCountIs(5) });
      messages.push(...result.response.messages);
      return result;
    };

    const first = await runTurn(userMessage('Gd7kz1PqR2mXa9Bc', 'Add the answer and swap pears for plums'));
    expect(first.text).toBe('Done with the first request.');
    expect(first.steps.flatMap((entry) => entry.content).filter((part) => part.type === 'tool-error')).toEqual([]);
    expect(project.read('src/new.ts').toString()).toBe('export const answer = 41;\n');
    expect(project.read('notes.txt').toString()).toBe('Shopping list\r\n- apples\r\n- plums\r\n');
    const afterFirst = project.snapshot();

    const second = await runTurn(userMessage('Hx8la2QrS3nYb0Cd', 'Bump the answer, change the script, use polars'));
    expect(second.text).toBe('Done with the second request.');
    expect(project.read('src/new.ts').toString()).toBe('export const answer = 42;\n');
    expect(project.read('logs/agent.log').toString()).toBe('turn one\nturn two\n');
    expect(project.read('analysis.ipynb').toString()).toContain('import polars as pl');

    const toSecond = await manager.rewindFiles(checkpointIdFor('Hx8la2QrS3nYb0Cd'));
    expect(toSecond.canRewind).toBe(true);
    expect(project.snapshot()).toEqual(afterFirst);

    const toFirst = await manager.rewindFiles(checkpointIdFor('Gd7kz1PqR2mXa9Bc'));
    expect(toFirst.canRewind).toBe(true);
    expect(filesOf(project.snapshot())).toEqual(filesOf(initial));
    expect(project.exists('src/new.ts')).toBe(false);
  });

  it('records each write with its tool name and the model’s tool call id, and each checkpoint under the message id', async () => {
    const { project, manager } = await agentProject();
    const tools = { ...fileTools(manager), ...trackTools(manager, { appendLine: appendLineTool(project.root) }, { paths: { appendLine: ['target'] } }) };
    const model = new MockLanguageModelV3({
      doGenerate: [
        step([
          { id: 'call-w', tool: 'Write', input: { file_path: 'a.txt', content: 'a\n' } },
          { id: 'call-a', tool: 'appendLine', input: { target: 'b.txt', line: 'b' } },
        ]),
        step('ok'),
      ],
    });
    const checkpointId = await checkpointUserMessage(manager, userMessage('msg-1', 'go'));
    await generateText({ model, tools, prompt: 'go', stopWhen: stepCountIs(3) });
    // The ids read back through the public API: per file in a rewind and a diff, per turn in the transcript.
    expect(await toolCallsSince(manager, checkpointId)).toEqual({
      rewind: { 'a.txt': ['call-w'], 'b.txt': ['call-a'] },
      diff: { 'a.txt': ['call-w'], 'b.txt': ['call-a'] },
      turn: [
        { toolCallId: 'call-a', tool: 'appendLine', files: ['b.txt'] },
        { toolCallId: 'call-w', tool: 'Write', files: ['a.txt'] },
      ],
    });
    await manager.close();

    const records = storedRecords(project);
    const writes = records.filter((record) => record.type === 'write').map(({ path, tool, toolCallId }) => ({ path, tool, toolCallId }));
    expect(writes.sort((left, right) => String(left.path).localeCompare(String(right.path)))).toEqual([
      { path: 'a.txt', tool: 'Write', toolCallId: 'call-w' },
      { path: 'b.txt', tool: 'appendLine', toolCallId: 'call-a' },
    ]);
    expect(records.filter((record) => record.type === 'checkpoint').map((record) => record.id)).toEqual([checkpointId]);
    expect(checkpointId).toBe(checkpointIdFor('msg-1'));
    expect(records.find((record) => record.type === 'message')).toMatchObject({ uuid: checkpointId, role: 'user', message: { id: 'msg-1' } });
  });

  it('refuses a call whose file cannot be backed up: execute never runs and the model gets the reason', async () => {
    const { project, manager } = await agentProject();
    let executed = false;
    const tools = trackTools(manager, {
      saveFile: tool({
        inputSchema: z.object({ path: z.string(), content: z.string() }),
        execute: async () => {
          executed = true;
          return 'saved';
        },
      }),
    });
    const outside = path.join(project.outside, 'escape.txt');
    const model = new MockLanguageModelV3({ doGenerate: [step([{ id: 'call-x', tool: 'saveFile', input: { path: outside, content: 'x' } }]), step('gave up')] });
    await checkpointUserMessage(manager, userMessage('msg-1', 'save it'));
    const result = await generateText({ model, tools, prompt: 'save it', stopWhen: stepCountIs(3) });

    expect(executed).toBe(false);
    const errors = result.steps.flatMap((entry) => entry.content).filter((part) => part.type === 'tool-error');
    expect(errors).toHaveLength(1);
    const error = (errors[0] as { error: unknown }).error;
    expect(RewindableError.isInstance(error) && error.code).toBe('PATH_OUTSIDE_PROJECT');
    expect((error as Error).message).toMatch(/^rewindable could not back up .*escape\.txt before this saveFile call, so the call was refused: .*outside the project root/);
    // The model was told why in the next request.
    expect(JSON.stringify(model.doGenerateCalls[1]!.prompt)).toMatch(/outside the project root/);
  });

  it('fileTools refuse a file they cannot back up in the documented words, and report their own failures as they are', async () => {
    const { project, manager } = await agentProject();
    const outside = path.join(project.outside, 'escape.txt');
    fs.writeFileSync(path.join(project.outside, 'target.txt'), 'outside\n');
    fs.symlinkSync(path.join(project.outside, 'target.txt'), project.file('link.txt'));
    fs.symlinkSync(path.join(project.outside, 'target.txt'), project.file('link.ipynb'));
    const before = project.snapshot();
    const model = new MockLanguageModelV3({
      doGenerate: [
        step([
          { id: 'call-out', tool: 'Write', input: { file_path: outside, content: 'x\n' } },
          { id: 'call-link', tool: 'Edit', input: { file_path: 'link.txt', old_string: 'outside', new_string: 'inside' } },
          { id: 'call-cell', tool: 'NotebookEdit', input: { notebook_path: 'link.ipynb', new_source: 'x', cell_type: 'code', edit_mode: 'insert' } },
          { id: 'call-miss', tool: 'Edit', input: { file_path: 'notes.txt', old_string: 'bananas', new_string: 'kiwis' } },
        ]),
        step('gave up'),
      ],
    });
    await checkpointUserMessage(manager, userMessage('msg-1', 'try'));
    const result = await generateText({ model, tools: fileTools(manager), prompt: 'try', stopWhen: stepCountIs(3) });

    const errors = new Map(
      result.steps
        .flatMap((entry) => entry.content)
        .flatMap((part) => (part.type === 'tool-error' ? [[part.toolCallId, part.error as RewindableError] as const] : [])),
    );
    expect(errors.get('call-out')!.code).toBe('PATH_OUTSIDE_PROJECT');
    expect(errors.get('call-out')!.message).toMatch(/^rewindable could not back up .*escape\.txt before this Write call, so the call was refused: .*outside the project root/);
    expect(errors.get('call-link')!.code).toBe('PATH_IS_LINK');
    expect(errors.get('call-link')!.message).toMatch(/^rewindable could not back up link\.txt before this Edit call, so the call was refused: .*symbolic link/);
    expect(errors.get('call-cell')!.message).toMatch(/^rewindable could not back up link\.ipynb before this NotebookEdit call, so the call was refused: .*symbolic link/);
    // A failure of the tool itself is not a refusal: the file could be backed up, the edit could not be made.
    expect(errors.get('call-miss')!.code).toBe('TOOL_FAILED');
    expect(errors.get('call-miss')!.message).toMatch(/^Edit failed: /);
    // The model read the refusals in its next request, and nothing outside the project changed.
    expect(JSON.stringify(model.doGenerateCalls[1]!.prompt)).toMatch(/rewindable could not back up link\.txt before this Edit call, so the call was refused/);
    expect(fs.existsSync(outside)).toBe(false);
    expect(fs.readFileSync(path.join(project.outside, 'target.txt'), 'utf8')).toBe('outside\n');
    expect(project.snapshot()).toEqual(before);
  });

  it('a call that ran reaches the model as it ran, result or error, when the record of its write fails; onWarning is told, and the rewind still restores every byte', async () => {
    let store!: ReturnType<typeof storeLosingWriteRecords>;
    const { project, manager, initial } = await agentProject((project) => {
      store = storeLosingWriteRecords(project.store);
      return { storage: store.storage };
    });
    const warnings: WriteNotRecordedWarning[] = [];
    const onWarning = (warning: WriteNotRecordedWarning) => warnings.push(warning);
    const generate = tool({
      inputSchema: z.object({ file_path: z.string() }),
      async *execute({ file_path }) {
        fs.writeFileSync(project.file(file_path), 'generated\n');
        yield { status: 'done' as const };
      },
    });
    const halfDone = tool({
      inputSchema: z.object({ path: z.string() }),
      execute: async ({ path: target }): Promise<string> => {
        fs.writeFileSync(project.file(target), 'half\n');
        throw new Error('the formatter crashed after writing');
      },
    });
    const tools = {
      ...fileTools(manager, { onWarning }),
      ...trackTools(manager, { appendLine: appendLineTool(project.root), generate, halfDone }, { paths: { appendLine: ['target'] }, onWarning }),
    };
    const model = new MockLanguageModelV3({
      doGenerate: [
        step([
          { id: 'call-w', tool: 'Write', input: { file_path: 'src/new.ts', content: 'export {};\n' } },
          { id: 'call-a', tool: 'appendLine', input: { target: 'logs/agent.log', line: 'ran' } },
          { id: 'call-g', tool: 'generate', input: { file_path: 'generated.txt' } },
          { id: 'call-h', tool: 'halfDone', input: { path: 'half.txt' } },
          { id: 'call-e', tool: 'Edit', input: { file_path: 'notes.txt', old_string: 'pears', new_string: 'plums' } },
        ]),
        step('done'),
      ],
    });
    const checkpointId = await checkpointUserMessage(manager, userMessage('msg-1', 'go'));
    store.loseConnection();
    const result = await generateText({ model, tools, prompt: 'go', stopWhen: stepCountIs(3) });

    // The calls that wrote their files are reported as they ran: three results, and the error of the one that failed.
    const outcomes = result.steps[0]!.content.flatMap((part) => (part.type === 'tool-result' || part.type === 'tool-error' ? [[part.toolCallId, part] as const] : []));
    const byCall = new Map(outcomes);
    expect(outcomes.map(([id, part]) => `${id} ${part.type}`).sort()).toEqual(['call-a tool-result', 'call-e tool-error', 'call-g tool-result', 'call-h tool-error', 'call-w tool-result']);
    expect(project.read('src/new.ts').toString()).toBe('export {};\n');
    expect(project.read('logs/agent.log').toString()).toBe('ran\n');
    expect(project.read('generated.txt').toString()).toBe('generated\n');
    expect(byCall.get('call-w')).toMatchObject({ output: { type: 'create', message: 'Created src/new.ts (1 line).' } });
    expect(byCall.get('call-a')).toMatchObject({ output: { appended: 'ran' } });
    expect((byCall.get('call-h') as { error: Error }).error.message).toBe('the formatter crashed after writing');
    expect(project.read('half.txt').toString()).toBe('half\n');
    // The one refusal is of the call that did not run: an existing file's first backup is stored with the record of its write.
    expect((byCall.get('call-e') as { error: Error }).error.message).toMatch(/^rewindable could not back up notes\.txt before this Edit call, so the call was refused: .*connection to the store was lost/);
    expect(project.read('notes.txt')).toEqual(Buffer.from('Shopping list\r\n- apples\r\n- pears\r\n'));
    const nextPrompt = JSON.stringify(model.doGenerateCalls[1]!.prompt);
    expect(nextPrompt).toContain('Created src/new.ts (1 line).');
    expect(nextPrompt.match(/so the call was refused/g)).toHaveLength(1);

    // The missing records went to onWarning, one per call, naming the call and its files.
    expect(warnings.map(({ code, tool, toolCallId, files }) => ({ code, tool, toolCallId, files })).sort((left, right) => left.toolCallId!.localeCompare(right.toolCallId!))).toEqual([
      { code: 'write-not-recorded', tool: 'appendLine', toolCallId: 'call-a', files: [project.file('logs/agent.log')] },
      { code: 'write-not-recorded', tool: 'generate', toolCallId: 'call-g', files: [project.file('generated.txt')] },
      { code: 'write-not-recorded', tool: 'halfDone', toolCallId: 'call-h', files: [project.file('half.txt')] },
      { code: 'write-not-recorded', tool: 'Write', toolCallId: 'call-w', files: [project.file('src/new.ts')] },
    ]);
    const written = warnings.find((warning) => warning.tool === 'Write')!;
    expect(written.message).toMatch(/^rewindable could not record what Write wrote to .*src\/new\.ts, so a dry run may report that write as a conflict .*: .*connection to the store was lost\. .*The call itself ran/);
    expect(RewindableError.isInstance(written.cause) && written.cause.code).toBe('STORE_IO');

    // The backups were taken before the calls ran: the rewind puts every file back.
    store.reconnect();
    await manager.rewindFiles(checkpointId);
    expect(filesOf(project.snapshot())).toEqual(filesOf(initial));
  });

  it('refuses calls before the first checkpoint, naming the fix', async () => {
    const { project, manager } = await agentProject();
    const model = new MockLanguageModelV3({ doGenerate: [step([{ id: 'call-1', tool: 'Write', input: { file_path: 'a.txt', content: 'a' } }]), step('no')] });
    const result = await generateText({ model, tools: fileTools(manager), prompt: 'write', stopWhen: stepCountIs(3) });
    const errors = result.steps.flatMap((entry) => entry.content).filter((part) => part.type === 'tool-error');
    expect(String((errors[0] as { error: unknown }).error)).toMatch(/Call checkpoint\(userMessageId\)/);
    expect(project.exists('a.txt')).toBe(false);
  });

  it('tracks a streaming tool before its first value and records its write after the last', async () => {
    const { project, manager, initial } = await agentProject();
    const tools = trackTools(manager, {
      generate: tool({
        inputSchema: z.object({ file_path: z.string() }),
        async *execute({ file_path }) {
          yield { status: 'writing' as const };
          fs.writeFileSync(project.file(file_path), 'generated\n');
          yield { status: 'done' as const };
        },
      }),
    });
    const model = new MockLanguageModelV3({ doGenerate: [step([{ id: 'call-s', tool: 'generate', input: { file_path: 'notes.txt' } }]), step('ok')] });
    const checkpointId = await checkpointUserMessage(manager, userMessage('msg-1', 'generate'));
    const result = await generateText({ model, tools, prompt: 'generate', stopWhen: stepCountIs(3) });
    expect(result.steps[0]!.toolResults.map((entry) => entry.output)).toEqual([{ status: 'done' }]);
    expect(project.read('notes.txt').toString()).toBe('generated\n');

    // The write was recorded after the file changed, so the dry run sees no conflict.
    const preview = await manager.rewindFiles(checkpointId, { dryRun: true });
    expect(preview.conflicts).toEqual([]);
    await manager.rewindFiles(checkpointId);
    expect(filesOf(project.snapshot())).toEqual(filesOf(initial));
  });

  it('returns tools without execute, and the file tools, unchanged', () => {
    return agentProject().then(({ manager }) => {
      const clientSide = tool({ inputSchema: z.object({ file_path: z.string() }) });
      const files = fileTools(manager);
      const tracked = trackTools(manager, { clientSide, ...files } satisfies ToolSet);
      expect(tracked.clientSide).toBe(clientSide);
      expect(tracked.Write).toBe(files.Write);
      const approved = { ...writeTool(manager), needsApproval: true };
      expect(trackTools(manager, approved)).toBe(approved);
    });
  });

  it('wraps a single tool, taking paths from file_path, notebook_path and path by default', async () => {
    const { project, manager, initial } = await agentProject();
    const save = trackTools(
      manager,
      tool({
        inputSchema: z.object({ path: z.string(), content: z.string() }),
        execute: async ({ path: target, content }) => {
          fs.writeFileSync(project.file(target), content);
          return 'ok';
        },
      }),
    );
    const checkpointId = await checkpointUserMessage(manager, { role: 'user', content: 'save' }, { id: 'turn-1' });
    await save.execute!({ path: 'logo.bin', content: 'not binary any more' }, { toolCallId: 'direct-1', messages: [] });
    expect(project.read('logo.bin').toString()).toBe('not binary any more');
    await manager.rewindFiles(checkpointId);
    expect(filesOf(project.snapshot())).toEqual(filesOf(initial));
  });
});
