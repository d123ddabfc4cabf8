/**
 * The Claude Agent SDK with rewindable: hooks back up every file Claude's
 * Write, Edit and NotebookEdit tools change (subagents' too), keyed by the
 * user message's UUID. Talks to the real API: set ANTHROPIC_API_KEY, then
 * `npx tsx examples/claude-agent-sdk.ts`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { query, type SDKUserMessage } from '@anthropic-ai/claude-agent-sdk';
import { CheckpointManager } from 'rewindable';
import { createCheckpointHooks } from 'rewindable/claude-agent-sdk';

if (process.env.ANTHROPIC_API_KEY === undefined) {
  console.log('Set ANTHROPIC_API_KEY to run this example against the Claude API.');
  process.exit(0);
}

const project = fs.mkdtempSync(path.join(os.tmpdir(), 'rewindable-claude-'));
const store = fs.mkdtempSync(path.join(os.tmpdir(), 'rewindable-store-'));
fs.writeFileSync(path.join(project, 'greeting.txt'), 'Hello\n');
const manager = await CheckpointManager.open({ cwd: project, storeDir: store });

const userMessage: SDKUserMessage = {
  type: 'user',
  message: { role: 'user', content: 'Replace the text of greeting.txt with "Goodbye", and create farewell.txt saying "See you".' },
  parent_tool_use_id: null,
  uuid: randomUUID(),
};
async function* prompts() {
  yield userMessage;
}

// The two lines: the hooks, merged into your options, and the prompt stream passed through.
const checkpoints = createCheckpointHooks(manager);
for await (const message of query({ prompt: checkpoints.prompt(prompts()), options: checkpoints.options({ cwd: project, permissionMode: 'acceptEdits', maxTurns: 5 }) })) {
  if (message.type === 'result') console.log('Claude finished:', message.subtype);
}
console.log('files now:', fs.readdirSync(project));

// Rewind to just before the user message: greeting.txt back to "Hello", farewell.txt gone.
const preview = await manager.rewindFiles(userMessage.uuid!, { dryRun: true });
console.log('a rewind would change', preview.filesChanged);
await manager.rewindFiles(userMessage.uuid!);
console.log('after rewind:', fs.readdirSync(project), JSON.stringify(fs.readFileSync(path.join(project, 'greeting.txt'), 'utf8')));

await manager.close();
fs.rmSync(project, { recursive: true, force: true });
fs.rmSync(store, { recursive: true, force: true });
