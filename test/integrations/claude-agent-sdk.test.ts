import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { HookCallback, HookCallbackMatcher, HookInput, HookJSONOutput, PostToolUseHookInput, PreToolUseHookInput, SDKUserMessage, UserPromptSubmitHookInput } from '@anthropic-ai/claude-agent-sdk';
import { describe, expect, it } from 'vitest';
import type { CheckpointManager } from '../../src/index.js';
import { createCheckpointHooks, mergeHooks, withCheckpoints, type CheckpointEvent, type CheckpointHooks, type CheckpointHooksOptions, type CheckpointWarning } from '../../src/integrations/claude-agent-sdk.js';
import { storeLosingWriteRecords } from '../helpers/failing-write-records.js';
import { storedRecords } from '../tools/tool-session.js';
import { agentProject, filesOf } from './helpers/agent-project.js';

const sessionId = '0f9e8d7c-6b5a-4938-8271-605f4e3d2c1b';

function base(cwd: string) {
  return { session_id: sessionId, transcript_path: path.join(cwd, '.transcript.jsonl'), cwd, permission_mode: 'acceptEdits' };
}

function promptInput(cwd: string, prompt: string, promptId: string = randomUUID()): UserPromptSubmitHookInput {
  return { ...base(cwd), prompt_id: promptId, hook_event_name: 'UserPromptSubmit', prompt };
}

function preToolUse(cwd: string, toolName: string, toolInput: Record<string, unknown>, toolUseId: string, extra: Partial<PreToolUseHookInput> = {}): PreToolUseHookInput {
  return { ...base(cwd), hook_event_name: 'PreToolUse', tool_name: toolName, tool_input: toolInput, tool_use_id: toolUseId, ...extra };
}

function postToolUse(pre: PreToolUseHookInput): PostToolUseHookInput {
  const { hook_event_name: _event, ...rest } = pre;
  return { ...rest, hook_event_name: 'PostToolUse', tool_response: { type: 'update' } };
}

/** Runs every hook the bundle registers for the input's event whose matcher matches its tool, as the CLI does. */
async function fire(hooks: CheckpointHooks, input: HookInput): Promise<HookJSONOutput[]> {
  const matchers: HookCallbackMatcher[] = hooks.hooks[input.hook_event_name] ?? [];
  const toolName = 'tool_name' in input ? input.tool_name : undefined;
  const outputs: HookJSONOutput[] = [];
  for (const matcher of matchers) {
    if (matcher.matcher !== undefined && toolName !== undefined && !new RegExp(`^(?:${matcher.matcher})$`).test(toolName)) continue;
    for (const callback of matcher.hooks) {
      outputs.push(await callback(input, 'tool_use_id' in input ? input.tool_use_id : undefined, { signal: new AbortController().signal }));
    }
  }
  return outputs;
}

/** A Write call as Claude Code makes it: PreToolUse, the write itself, PostToolUse. */
async function write(hooks: CheckpointHooks, cwd: string, relative: string, content: string, toolUseId: string, extra: Partial<PreToolUseHookInput> = {}) {
  const pre = preToolUse(cwd, 'Write', { file_path: path.join(cwd, relative), content }, toolUseId, extra);
  const outputs = await fire(hooks, pre);
  const denied = outputs.find((output) => 'hookSpecificOutput' in output && output.hookSpecificOutput?.hookEventName === 'PreToolUse' && output.hookSpecificOutput.permissionDecision === 'deny');
  if (denied !== undefined) return denied;
  fs.mkdirSync(path.dirname(path.join(cwd, relative)), { recursive: true });
  fs.writeFileSync(path.join(cwd, relative), content);
  await fire(hooks, postToolUse(pre));
  return undefined;
}

function userMessage(text: string): SDKUserMessage {
  return { type: 'user', message: { role: 'user', content: text }, parent_tool_use_id: null, uuid: randomUUID() };
}

async function setup(options: CheckpointHooksOptions = {}) {
  const context = await agentProject();
  const events: CheckpointEvent[] = [];
  const hooks = createCheckpointHooks(context.manager, { ...options, onCheckpoint: (event) => events.push(event) });
  return { ...context, hooks, events, root: context.project.root };
}

async function checkpointIds(manager: CheckpointManager): Promise<string[]> {
  return (await manager.listCheckpoints()).map((checkpoint) => checkpoint.id);
}

describe('Claude Agent SDK hooks, called with inputs of the SDK’s shape', () => {
  it('checkpoints each prompt under its prompt_id and restores the files of the turns after it', async () => {
    const { project, manager, hooks, events, root, initial } = await setup();
    const firstPrompt = randomUUID();
    expect(await fire(hooks, promptInput(root, 'Create the answer', firstPrompt))).toEqual([{}]);
    expect(await write(hooks, root, 'src/answer.ts', 'export const answer = 41;\n', 'toolu_01')).toBeUndefined();
    expect(await write(hooks, root, 'notes.txt', 'rewritten\n', 'toolu_02')).toBeUndefined();
    const afterFirst = project.snapshot();

    const secondPrompt = randomUUID();
    await fire(hooks, promptInput(root, 'Bump it', secondPrompt));
    await write(hooks, root, 'src/answer.ts', 'export const answer = 42;\n', 'toolu_03');
    await write(hooks, root, 'bin/run.sh', '#!/bin/sh\necho changed\n', 'toolu_04');

    expect(events.map(({ checkpointId, source, prompt }) => ({ checkpointId, source, prompt }))).toEqual([
      { checkpointId: firstPrompt, source: 'prompt-id', prompt: 'Create the answer' },
      { checkpointId: secondPrompt, source: 'prompt-id', prompt: 'Bump it' },
    ]);
    await manager.rewindFiles(secondPrompt);
    expect(project.snapshot()).toEqual(afterFirst);
    await manager.rewindFiles(firstPrompt);
    expect(filesOf(project.snapshot())).toEqual(filesOf(initial));
  });

  it('records each write with the tool name and the tool use id, and the prompt in the transcript', async () => {
    const { project, manager, hooks, root } = await setup();
    const promptId = randomUUID();
    await fire(hooks, promptInput(root, 'Write it', promptId));
    await write(hooks, root, 'a.txt', 'a\n', 'toolu_01A');
    await manager.close();
    const records = storedRecords(project);
    expect(records.filter((record) => record.type === 'write')).toEqual([expect.objectContaining({ path: 'a.txt', tool: 'Write', toolCallId: 'toolu_01A' })]);
    expect(records.filter((record) => record.type === 'track')).toEqual([expect.objectContaining({ path: 'a.txt', checkpointId: promptId, state: { kind: 'absent' } })]);
    expect(records.find((record) => record.type === 'message')).toMatchObject({ uuid: promptId, role: 'user', message: { role: 'user', content: 'Write it' } });
  });

  it('keys checkpoints by the UUIDs of the user messages streamed through prompt()', async () => {
    const { manager, hooks, events, root } = await setup();
    const uuid = randomUUID();
    const messages: SDKUserMessage[] = [
      { type: 'user', message: { role: 'user', content: [{ type: 'text', text: 'First part' }, { type: 'text', text: 'second part' }] }, parent_tool_use_id: null, uuid },
      { type: 'user', message: { role: 'user', content: 'No uuid given' }, parent_tool_use_id: null },
      { type: 'user', message: { role: 'user', content: 'queued, no query' }, parent_tool_use_id: null, shouldQuery: false },
    ];
    const passed: SDKUserMessage[] = [];
    for await (const message of hooks.prompt(toAsync(messages))) passed.push(message);
    expect(passed[0]).toEqual(messages[0]);
    expect(passed[1]).toEqual({ ...messages[1], uuid: expect.any(String) });
    expect(passed[2]).toBe(messages[2]);

    // The CLI joins the text blocks with newlines, and submits the prompts in order.
    await fire(hooks, promptInput(root, 'First part\nsecond part'));
    await fire(hooks, promptInput(root, 'No uuid given'));
    expect(events.map((event) => [event.checkpointId, event.source])).toEqual([
      [uuid, 'message'],
      [passed[1]!.uuid, 'message'],
    ]);
    expect(await checkpointIds(manager)).toEqual([uuid, passed[1]!.uuid]);
  });

  it('keys a prompt the CLI made of several streamed messages by the last of them, and never gives a passed-over message’s uuid to a later prompt', async () => {
    const { manager, hooks, events, root } = await setup();
    const [one, two, three, twoAgain] = ['one', 'two', 'three', 'two'].map((text) => userMessage(text));
    for await (const _message of hooks.prompt(toAsync([one!, two!, three!, twoAgain!]))) {
      // passed through to the CLI
    }
    await fire(hooks, promptInput(root, 'one\n\ntwo')); // sent close together: one prompt, keyed by the last message
    await fire(hooks, promptInput(root, 'two')); // the second "two": "three" was passed over, and is forgotten
    const late = randomUUID();
    await fire(hooks, promptInput(root, 'three', late));
    expect(events.map((event) => [event.checkpointId, event.source])).toEqual([
      [two!.uuid, 'message'],
      [twoAgain!.uuid, 'message'],
      [late, 'prompt-id'],
    ]);
    expect(await checkpointIds(manager)).toEqual([two!.uuid, twoAgain!.uuid, late]);
  });

  it('warns when a prompt matches none of the streamed messages, keys it by its prompt_id, and forgets the messages it used up', async () => {
    const { manager, root } = await setup();
    const warnings: CheckpointWarning[] = [];
    const hooks = createCheckpointHooks(manager, { onWarning: (warning) => warnings.push(warning) });
    const first = userMessage('fix the build');
    const second = userMessage('fix the build');
    const messages = hooks.prompt(toAsync([first, second]))[Symbol.asyncIterator]();
    await messages.next();
    // A rewording these hooks do not foresee: the message's text is in the prompt, but the prompt is not the message.
    const promptId = randomUUID();
    const [output] = await fire(hooks, promptInput(root, 'fix the build\n\n(expanded by a plugin)', promptId));
    expect(output).toEqual({ systemMessage: expect.stringMatching(new RegExp(`^rewindable could not match this prompt to any of the 1 user message streamed to query\\(\\).*its checkpoint is ${promptId}.*${first.uuid}`)) });
    expect(warnings).toEqual([{ code: 'prompt-not-matched', message: (output as { systemMessage: string }).systemMessage, checkpointId: promptId, messageIds: [first.uuid], sessionId }]);

    await messages.next();
    await fire(hooks, promptInput(root, 'fix the build'));
    expect(await checkpointIds(manager)).toEqual([promptId, second.uuid]);
  });

  it('takes no checkpoint and records no message for a prompt the CLI makes itself (source "system", a task notification)', async () => {
    const { manager, hooks, events, root } = await setup();
    const promptId = randomUUID();
    await fire(hooks, promptInput(root, 'Start', promptId));
    await fire(hooks, { ...promptInput(root, 'A peer session says hello'), source: 'system' });
    await fire(hooks, promptInput(root, '<task-notification>\n<task-id>a1</task-id>\n<status>completed</status>\n</task-notification>'));
    await write(hooks, root, 'late.txt', 'written after the notification\n', 'toolu_01');
    expect(events.map((event) => event.checkpointId)).toEqual([promptId]);
    expect(await checkpointIds(manager)).toEqual([promptId]);
    expect((await manager.getTranscript()).map((entry) => [entry.uuid, entry.files])).toEqual([[promptId, [path.join(root, 'late.txt')]]]);
  });

  it('takes the checkpoint of a streamed user message that starts with <task-notification> (a paste, not the CLI’s notification), keyed by its uuid', async () => {
    const { manager, hooks, events, root } = await setup();
    const pasted = userMessage('<task-notification>a log the user pasted</task-notification>\nWhat went wrong here?');
    for await (const _message of hooks.prompt(toAsync([pasted]))) {
      // passed through to the CLI
    }
    // A CLI that sends no source: only the prompt's text tells the two apart.
    await fire(hooks, promptInput(root, '<task-notification>a log the user pasted</task-notification>\nWhat went wrong here?'));
    await write(hooks, root, 'fixed.txt', 'fixed\n', 'toolu_01');
    await fire(hooks, promptInput(root, '<task-notification>\n<task-id>a1</task-id>\n<status>completed</status>\n</task-notification>'));
    expect(events.map((event) => [event.checkpointId, event.source])).toEqual([[pasted.uuid, 'message']]);
    expect(await checkpointIds(manager)).toEqual([pasted.uuid]);
    expect((await manager.getTranscript()).map((entry) => [entry.uuid, entry.files])).toEqual([[pasted.uuid, [path.join(root, 'fixed.txt')]]]);
  });

  it('tells onWarning, and the user as the systemMessage, when a tool wrote but its write could not be recorded', async () => {
    let store!: ReturnType<typeof storeLosingWriteRecords>;
    const { project, manager, initial } = await agentProject((project) => {
      store = storeLosingWriteRecords(project.store);
      return { storage: store.storage };
    });
    const warnings: CheckpointWarning[] = [];
    const hooks = createCheckpointHooks(manager, { onWarning: (warning) => warnings.push(warning) });
    const promptId = randomUUID();
    await fire(hooks, promptInput(project.root, 'Go', promptId));
    store.loseConnection();
    const pre = preToolUse(project.root, 'Write', { file_path: project.file('new.txt'), content: 'new\n' }, 'toolu_01');
    expect(await fire(hooks, pre)).toEqual([{}]);
    project.write('new.txt', 'new\n');
    const outputs = await fire(hooks, postToolUse(pre));

    expect(outputs).toEqual([{ systemMessage: expect.stringMatching(/^rewindable could not record what Write wrote to .*new\.txt, so a dry run may report that write as a conflict .*The call itself ran/) }]);
    expect(warnings).toEqual([
      {
        code: 'write-not-recorded',
        message: (outputs[0] as { systemMessage: string }).systemMessage,
        tool: 'Write',
        toolCallId: 'toolu_01',
        files: [project.file('new.txt')],
        cause: expect.objectContaining({ code: 'STORE_IO' }),
      },
    ]);
    store.reconnect();
    await manager.rewindFiles(promptId);
    expect(filesOf(project.snapshot())).toEqual(filesOf(initial));
  });

  it('does not retake a checkpoint for a prompt submitted again, which would fold the turn’s edits into it', async () => {
    const { project, manager, hooks, root, initial } = await setup();
    const promptId = randomUUID();
    await fire(hooks, promptInput(root, 'Go', promptId));
    await write(hooks, root, 'notes.txt', 'changed\n', 'toolu_01');
    await fire(hooks, promptInput(root, 'Go', promptId));
    expect(await checkpointIds(manager)).toEqual([promptId]);
    await manager.rewindFiles(promptId);
    expect(filesOf(project.snapshot())).toEqual(filesOf(initial));
  });

  it('tracks Edit and NotebookEdit by their path fields, and leaves other tools alone', async () => {
    const { manager, hooks, root } = await setup();
    await fire(hooks, promptInput(root, 'Go'));
    await fire(hooks, preToolUse(root, 'Edit', { file_path: path.join(root, 'notes.txt'), old_string: 'apples', new_string: 'kiwis' }, 'toolu_e'));
    await fire(hooks, preToolUse(root, 'NotebookEdit', { notebook_path: path.join(root, 'analysis.ipynb'), cell_id: 'a1b2c3d4', new_source: '# New' }, 'toolu_n'));
    expect(await fire(hooks, preToolUse(root, 'Read', { file_path: path.join(root, 'logo.bin') }, 'toolu_r'))).toEqual([]);
    const [checkpoint] = await manager.listCheckpoints();
    expect(checkpoint!.files.sort()).toEqual([path.join(root, 'analysis.ipynb'), path.join(root, 'notes.txt')]);
  });

  it('tracks the file tools of subagents (inputs with agent_id), unless told not to', async () => {
    const subagent = { agent_id: 'a2a16cfcef0387824', agent_type: 'general-purpose' };
    const tracking = await setup();
    await fire(tracking.hooks, promptInput(tracking.root, 'Delegate'));
    await write(tracking.hooks, tracking.root, 'from-subagent.txt', 'x\n', 'toolu_s', subagent);
    const [checkpoint] = await tracking.manager.listCheckpoints();
    expect(checkpoint!.files).toEqual([path.join(tracking.root, 'from-subagent.txt')]);

    const ignoring = await setup({ trackSubagents: false });
    await fire(ignoring.hooks, promptInput(ignoring.root, 'Delegate'));
    expect(await fire(ignoring.hooks, preToolUse(ignoring.root, 'Write', { file_path: path.join(ignoring.root, 'x.txt'), content: '' }, 'toolu_s', subagent))).toEqual([{}]);
    const [untracked] = await ignoring.manager.listCheckpoints();
    expect(untracked!.files).toEqual([]);
  });

  it('denies a write it cannot back up, with the reason, instead of letting it run untracked', async () => {
    const { project, hooks, root } = await setup();
    await fire(hooks, promptInput(root, 'Go'));
    const outside = path.join(project.outside, 'escape.txt');
    const [output] = await fire(hooks, preToolUse(root, 'Write', { file_path: outside, content: 'x' }, 'toolu_x'));
    expect(output).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'deny',
        permissionDecisionReason: expect.stringMatching(/^rewindable could not back up .*escape\.txt before this Write call, so the call was refused: .*outside the project root/),
      },
    });

    fs.symlinkSync(path.join(project.outside, 'target.txt'), project.file('link.txt'));
    const [linkOutput] = await fire(hooks, preToolUse(root, 'Edit', { file_path: project.file('link.txt'), old_string: 'a', new_string: 'b' }, 'toolu_l'));
    expect(JSON.stringify(linkOutput)).toMatch(/symbolic link/);
  });

  it('denies writes before any checkpoint (the prompt hook never ran)', async () => {
    const { hooks, root } = await setup();
    const [output] = await fire(hooks, preToolUse(root, 'Write', { file_path: path.join(root, 'a.txt'), content: 'a' }, 'toolu_1'));
    expect(JSON.stringify(output)).toMatch(/"permissionDecision":"deny".*Call checkpoint\(userMessageId\)/);
  });

  it('lets writes outside the project run untracked with outsideProject: "allow"', async () => {
    const { project, hooks, root } = await setup({ outsideProject: 'allow' });
    await fire(hooks, promptInput(root, 'Plan'));
    const plan = path.join(project.outside, 'plans', 'plan.md');
    const pre = preToolUse(root, 'Write', { file_path: plan, content: '# Plan' }, 'toolu_p');
    expect(await fire(hooks, pre)).toEqual([{}]);
    expect(await fire(hooks, postToolUse(pre))).toEqual([{}]);
    // Inside the project, tracking still applies and still refuses what it cannot back up.
    fs.symlinkSync(plan, project.file('plan-link.md'));
    const [linkOutput] = await fire(hooks, preToolUse(root, 'Write', { file_path: project.file('plan-link.md'), content: 'x' }, 'toolu_q'));
    expect(JSON.stringify(linkOutput)).toMatch(/"permissionDecision":"deny"/);
  });

  it('tracks more tools (MCP tools) by name with their own path fields', async () => {
    const { manager, hooks, root } = await setup({ tools: { mcp__files__save: ['target'], mcp__files__move: (input) => [String(input.from), String(input.to)] } });
    await fire(hooks, promptInput(root, 'Go'));
    await fire(hooks, preToolUse(root, 'mcp__files__save', { target: 'saved.txt' }, 'toolu_1'));
    await fire(hooks, preToolUse(root, 'mcp__files__move', { from: 'notes.txt', to: 'moved.txt' }, 'toolu_2'));
    const [checkpoint] = await manager.listCheckpoints();
    expect(checkpoint!.files.sort()).toEqual(['moved.txt', 'notes.txt', 'saved.txt'].map((name) => path.join(root, name)));
  });

  it('blocks a prompt whose checkpoint cannot be taken', async () => {
    const { manager, hooks, root } = await setup();
    await manager.close();
    const [output] = await fire(hooks, promptInput(root, 'Go'));
    expect(output).toEqual({ decision: 'block', reason: expect.stringMatching(/^rewindable could not take the checkpoint of this prompt, so it was not run: .*closed/) });
  });

  it('merges into the user’s options and hooks without dropping any', async () => {
    const { manager } = await setup();
    const mine: HookCallback = async () => ({});
    const options = withCheckpoints(manager, {
      cwd: '/somewhere',
      permissionMode: 'acceptEdits',
      hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [mine] }], Stop: [{ hooks: [mine] }] },
    });
    expect(options.cwd).toBe('/somewhere');
    expect(options.permissionMode).toBe('acceptEdits');
    expect(options.hooks.PreToolUse!.map((matcher) => matcher.matcher)).toEqual(['Bash', 'Write|Edit|NotebookEdit']);
    expect(options.hooks.Stop![0]!.hooks).toEqual([mine]);
    expect(Object.keys(options.hooks).sort()).toEqual(['PostToolUse', 'PreToolUse', 'Stop', 'UserPromptSubmit']);
    expect(mergeHooks(undefined, { Stop: [{ hooks: [mine] }] }, { Stop: [{ hooks: [mine] }] }).Stop).toHaveLength(2);
  });
});

async function* toAsync<T>(items: T[]): AsyncGenerator<T> {
  for (const item of items) yield item;
}
