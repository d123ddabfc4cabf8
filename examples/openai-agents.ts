/**
 * OpenAI Agents JS with rewindable: a function tool that backs its file up
 * before writing, a checkpoint per user message, and a rewind. Runs offline
 * with a scripted Model: `npx tsx examples/openai-agents.ts`. With a real
 * model, drop `model` from the agent (and set OPENAI_API_KEY).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Agent, Runner, tool, Usage, type AgentOutputItem, type Model } from '@openai/agents';
import { z } from 'zod';
import { CheckpointManager } from 'rewindable';
import { checkpointIdFor, checkpointUserMessage, trackFunctionTool } from 'rewindable/openai-agents';

const project = fs.mkdtempSync(path.join(os.tmpdir(), 'rewindable-openai-'));
const store = fs.mkdtempSync(path.join(os.tmpdir(), 'rewindable-store-'));
fs.writeFileSync(path.join(project, 'config.json'), '{"debug":false}\n');
const manager = await CheckpointManager.open({ cwd: project, storeDir: store });

const writeFile = tool({
  name: 'write_file',
  description: 'Write a whole file.',
  parameters: z.object({ path: z.string(), content: z.string() }),
  execute: async (input) => {
    fs.writeFileSync(path.join(project, input.path), input.content);
    return `wrote ${input.path}`;
  },
});

// A scripted model for the example: one tool call, then an answer.
const script: AgentOutputItem[][] = [
  [{ type: 'function_call', callId: 'call_1', name: 'write_file', arguments: JSON.stringify({ path: 'config.json', content: '{"debug":true}\n' }), status: 'completed' }],
  [{ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Debugging is on.' }] }],
];
const model: Model = {
  getResponse: async () => ({ usage: new Usage(), output: script.shift()! }),
  getStreamedResponse: () => {
    throw new Error('This example does not stream.');
  },
};

// The one line: the tool, tracked (`path` is found by default).
const agent = new Agent({ name: 'Config editor', instructions: 'Edit config files.', model, tools: [trackFunctionTool(manager, writeFile)] });

// A user message arrives: checkpoint it under your id for it, then run.
await checkpointUserMessage(manager, 'Turn debugging on', { id: 'msg_01' });
const result = await new Runner({ tracingDisabled: true }).run(agent, 'Turn debugging on');
console.log(result.finalOutput, '→', fs.readFileSync(path.join(project, 'config.json'), 'utf8').trim());

await manager.rewindFiles(checkpointIdFor('msg_01'));
console.log('after rewind:', fs.readFileSync(path.join(project, 'config.json'), 'utf8').trim());

await manager.close();
fs.rmSync(project, { recursive: true, force: true });
fs.rmSync(store, { recursive: true, force: true });
