/**
 * The AI SDK with rewindable: Write/Edit tools that back files up, any tool
 * made trackable, a checkpoint per user message, and a rewind. Runs offline
 * with the AI SDK's mock model: `npx tsx examples/ai-sdk.ts`. With a real
 * model, only `model` changes.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { generateText, stepCountIs, tool, type UIMessage } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { CheckpointManager } from 'rewindable';
import { checkpointIdFor, checkpointUserMessage, fileTools, trackTools } from 'rewindable/ai-sdk';

const project = fs.mkdtempSync(path.join(os.tmpdir(), 'rewindable-ai-sdk-'));
const store = fs.mkdtempSync(path.join(os.tmpdir(), 'rewindable-store-'));
fs.writeFileSync(path.join(project, 'todo.md'), '- write the docs\n');
const manager = await CheckpointManager.open({ cwd: project, storeDir: store });

// Your own tool: tell trackTools which input field names the file it writes.
const appendLog = tool({
  description: 'Append a line to a log file.',
  inputSchema: z.object({ logFile: z.string(), line: z.string() }),
  execute: async ({ logFile, line }) => fs.appendFileSync(path.join(project, logFile), `${line}\n`),
});
const tools = { ...fileTools(manager), ...trackTools(manager, { appendLog }, { paths: { appendLog: ['logFile'] } }) };

// A scripted model for the example; use e.g. openai('gpt-5') in your app.
const model = new MockLanguageModelV3({
  doGenerate: [
    {
      content: [
        { type: 'tool-call', toolCallId: 'call-1', toolName: 'Edit', input: JSON.stringify({ file_path: 'todo.md', old_string: 'docs', new_string: 'tests' }) },
        { type: 'tool-call', toolCallId: 'call-2', toolName: 'appendLog', input: JSON.stringify({ logFile: 'agent.log', line: 'edited todo.md' }) },
      ],
      finishReason: { unified: 'tool-calls', raw: undefined },
      usage: { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } },
      warnings: [],
    },
    {
      content: [{ type: 'text', text: 'Updated the to-do list.' }],
      finishReason: { unified: 'stop', raw: undefined },
      usage: { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } },
      warnings: [],
    },
  ],
});

// A user message arrives (as useChat sends it): checkpoint it, then run the agent.
const message: UIMessage = { id: 'Gd7kz1PqR2mXa9Bc', role: 'user', parts: [{ type: 'text', text: 'Change docs to tests' }] };
await checkpointUserMessage(manager, message);
const result = await generateText({ model, tools, prompt: 'Change docs to tests', stopWhen: stepCountIs(5) });
console.log(result.text, '→', fs.readFileSync(path.join(project, 'todo.md'), 'utf8').trim());

// Undo everything the agent did since that message.
await manager.rewindFiles(checkpointIdFor(message.id));
console.log('after rewind:', fs.readFileSync(path.join(project, 'todo.md'), 'utf8').trim(), '| agent.log exists:', fs.existsSync(path.join(project, 'agent.log')));

await manager.close();
fs.rmSync(project, { recursive: true, force: true });
fs.rmSync(store, { recursive: true, force: true });
