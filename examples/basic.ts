/**
 * The smallest useful integration: a checkpoint per user message, a backup
 * before every write, and a rewind. Run with `npx tsx examples/basic.ts`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { CheckpointManager } from 'rewindable';

const project = fs.mkdtempSync(path.join(os.tmpdir(), 'rewindable-basic-'));
const store = fs.mkdtempSync(path.join(os.tmpdir(), 'rewindable-store-'));
fs.writeFileSync(path.join(project, 'notes.txt'), 'first draft\n');

const manager = new CheckpointManager({ cwd: project, storeDir: store });

// A user message arrives: take a checkpoint keyed by its UUID.
const userMessageId = randomUUID();
await manager.checkpoint(userMessageId);

// The agent's tool is about to write: back the file up first.
await manager.trackEdit('notes.txt');
fs.writeFileSync(path.join(project, 'notes.txt'), 'rewritten by the agent\n');

// Preview, then rewind.
const preview = await manager.rewindFiles(userMessageId, { dryRun: true });
console.log('would change', preview.filesChanged, `+${preview.insertions} -${preview.deletions}`);
await manager.rewindFiles(userMessageId);
console.log(fs.readFileSync(path.join(project, 'notes.txt'), 'utf8')); // "first draft"

await manager.close();
fs.rmSync(project, { recursive: true, force: true });
fs.rmSync(store, { recursive: true, force: true });
