import path from 'node:path';
import { query, type SDKMessage, type SDKUserMessage } from '@anthropic-ai/claude-agent-sdk';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { rewindOutputSchema } from '../../src/mcp/output-schemas.js';
import { buildCli, type BuiltCli } from '../cli/helpers/built-cli.js';
import { bundledClaudeCode, claudeEnvironment } from '../integrations/helpers/claude-environment.js';
import { scriptByPrompt, startFakeAnthropicApi, type MessagesRequest } from '../integrations/helpers/fake-anthropic-api.js';
import { promptedSession } from './helpers/prompted-session.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

let cli: BuiltCli;
beforeAll(async () => {
  cli = await buildCli();
});
afterAll(() => cli.remove());

/** One user message, then the end of the prompt stream once its turn has a result. */
async function* onePrompt(text: string, done: Promise<void>): AsyncGenerator<SDKUserMessage> {
  yield { type: 'user', message: { role: 'user', content: text }, parent_tool_use_id: null };
  await done;
}

/** The tool results Claude Code sent the model, by tool use id, as the text the model read. */
function toolResults(requests: readonly MessagesRequest[]): Map<string, string> {
  const results = new Map<string, string>();
  for (const request of requests) {
    for (const message of request.messages) {
      if (typeof message.content === 'string') continue;
      for (const block of message.content as Array<{ type: string; tool_use_id?: string; content?: unknown; is_error?: boolean }>) {
        if (block.type !== 'tool_result' || block.tool_use_id === undefined) continue;
        const content = typeof block.content === 'string' ? block.content : JSON.stringify(block.content);
        results.set(block.tool_use_id, `${block.is_error === true ? '[error] ' : ''}${content}`);
      }
    }
  }
  return results;
}

describe.runIf(bundledClaudeCode() !== undefined)('Claude Code end to end: the model previews and rewinds through rewindable mcp', () => {
  it('a rewind without a preview is refused; preview_rewind then rewind_files puts the files back byte for byte', async () => {
    const { project, sessionId, first, atFirst, atEnd } = await promptedSession();
    const api = await startFakeAnthropicApi(
      scriptByPrompt({
        'UNDO-IT': [
          [{ type: 'tool_use', id: 'toolu_hasty', name: 'mcp__rewindable__rewind_files', input: { checkpointId: first } }],
          [{ type: 'tool_use', id: 'toolu_preview', name: 'mcp__rewindable__preview_rewind', input: { checkpointId: first } }],
          [{ type: 'tool_use', id: 'toolu_rewind', name: 'mcp__rewindable__rewind_files', input: { checkpointId: first } }],
          [{ type: 'text', text: 'The files are back as they were.' }],
        ],
      }),
    );
    cleanups.push(() => api.close());
    const claude = claudeEnvironment(api.url);
    cleanups.push(() => claude.remove());

    let finish: () => void = () => {};
    const done = new Promise<void>((resolve) => (finish = resolve));
    const stderr: string[] = [];
    const conversation = query({
      prompt: onePrompt('UNDO-IT: put the files back as they were before my first message', done),
      options: {
        cwd: project.root,
        env: claude.env,
        settingSources: [],
        mcpServers: { rewindable: { type: 'stdio', command: process.execPath, args: [cli.bin, 'mcp', '--cwd', project.root, '--store', project.store] } },
        // The user's grant, as `claude --allowedTools` gives it: these two run without a prompt, every other tool would ask.
        allowedTools: ['mcp__rewindable__preview_rewind', 'mcp__rewindable__rewind_files'],
        permissionMode: 'default',
        stderr: (line) => stderr.push(line),
      },
    });
    cleanups.push(() => conversation.close());

    const messages: SDKMessage[] = [];
    for await (const message of conversation) {
      messages.push(message);
      if (message.type === 'result') finish();
    }

    const init = messages.find((message) => message.type === 'system' && message.subtype === 'init');
    expect(init?.type === 'system' && init.subtype === 'init' ? init.mcp_servers : undefined).toMatchObject([{ name: 'rewindable', status: 'connected' }]);
    expect(messages.filter((message) => message.type === 'result').map((message) => (message.type === 'result' ? message.subtype : ''))).toEqual(['success']);

    // What the model read, in the next request: Claude Code hands it the structured content (as JSON), not the text
    // content, so the counts, the per-file detail and the summary's words are all there.
    const results = toolResults(api.requests);
    // The hasty rewind came back as a tool error with its code, and wrote nothing (the preview that follows sees every change).
    expect(results.get('toolu_hasty')).toMatch(/^\[error\] .*PREVIEW_REQUIRED: No preview of a rewind of session/);
    const preview = rewindOutputSchema.parse(JSON.parse(results.get('toolu_preview')!));
    expect(preview).toMatchObject({ sessionId, checkpointId: first, dryRun: true, insertions: 4, deletions: 2 });
    expect(preview.summary).toContain('4 files, +4 -2 lines. Show the user this preview; to apply it, call rewind_files');
    expect(preview.files.map((file) => [path.relative(project.root, file.path), file.action, file.insertions, file.deletions])).toEqual([
      ['README.md', 'recreate', 3, 0],
      ['run.sh', 'chmod', 0, 0],
      ['src/farewell.ts', 'delete', 0, 1],
      ['src/greet.ts', 'restore', 1, 1],
    ]);
    expect(preview.files.find((file) => file.path.endsWith('greet.ts'))?.diff).toContain('+  return `Hello, ${name}`;');
    const rewind = rewindOutputSchema.parse(JSON.parse(results.get('toolu_rewind')!));
    expect(rewind).toMatchObject({ rewound: true, insertions: 4, deletions: 2 });
    expect(rewind.summary).toContain(`To undo: undo_rewind with undoCheckpointId ${rewind.undoCheckpointId}.`);

    // On disk: every byte and mode as before the first message; the agent's end state is gone.
    expect(project.snapshot()).toEqual(atFirst);
    expect(project.snapshot()).not.toEqual(atEnd);
    expect(api.otherRoutes).toEqual([]);
  });
});
