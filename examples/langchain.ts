/**
 * LangChain.js with rewindable: one middleware checkpoints each human
 * message and backs up the files of the agent's file tools. Runs offline
 * with LangChain's fake model: `npx tsx examples/langchain.ts`. With a real
 * model, only `model` changes.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { fakeModel } from '@langchain/core/testing';
import { tool } from '@langchain/core/tools';
import { createAgent } from 'langchain';
import { z } from 'zod';
import { CheckpointManager } from 'rewindable';
import { checkpointIdFor, checkpointMiddleware } from 'rewindable/langchain';

const project = fs.mkdtempSync(path.join(os.tmpdir(), 'rewindable-langchain-'));
const store = fs.mkdtempSync(path.join(os.tmpdir(), 'rewindable-store-'));
fs.writeFileSync(path.join(project, 'README.md'), '# Demo\n');
const manager = await CheckpointManager.open({ cwd: project, storeDir: store });

const writeFile = tool(
  async ({ file_path, content }) => {
    fs.writeFileSync(path.join(project, file_path), content);
    return `Wrote ${file_path}`;
  },
  { name: 'write_file', description: 'Write a whole file.', schema: z.object({ file_path: z.string(), content: z.string() }) },
);

// A scripted model for the example; use e.g. new ChatAnthropic(...) in your app.
const model = fakeModel()
  .respondWithTools([{ name: 'write_file', args: { file_path: 'README.md', content: '# Demo\n\nNow with docs.\n' }, id: 'call_1' }])
  .respond(new AIMessage('README updated.'));

// The one line: the middleware (write_file is one of the tool names it tracks by default).
const agent = createAgent({ model, tools: [writeFile], middleware: [checkpointMiddleware(manager)] });

const result = await agent.invoke({ messages: [new HumanMessage({ id: 'human-1', content: 'Document the demo' })] });
console.log(result.messages.at(-1)!.text, '→', JSON.stringify(fs.readFileSync(path.join(project, 'README.md'), 'utf8')));

// The checkpoint is keyed by the human message's id.
await manager.rewindFiles(checkpointIdFor('human-1'));
console.log('after rewind:', JSON.stringify(fs.readFileSync(path.join(project, 'README.md'), 'utf8')));

await manager.close();
fs.rmSync(project, { recursive: true, force: true });
fs.rmSync(store, { recursive: true, force: true });
