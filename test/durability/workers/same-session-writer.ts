/**
 * Child process for the test of two projects writing sessions of the same id.
 * Starts the session `sessionId` in its project, takes a checkpoint, tracks
 * and overwrites the first file (so its pack is open), prints `ready`, waits
 * for a line on stdin (so both writers go on at the same moment), then tracks
 * and overwrites every other file, one acknowledged backup after another.
 *
 * Usage: node same-session-writer.mjs '{"root": ..., "store": ..., "sessionId": ..., "files": [...]}'
 */
import fs from 'node:fs';
import path from 'node:path';
import { CheckpointManager } from '../../../src/index.js';

const { root, store, sessionId, files } = JSON.parse(process.argv[2]!) as { root: string; store: string; sessionId: string; files: string[] };
const say = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`);

async function trackAndOverwrite(manager: CheckpointManager, file: string): Promise<void> {
  await manager.trackEdit(file);
  fs.writeFileSync(path.join(root, file), `${file} as the agent left it\n`);
}

const manager = await CheckpointManager.open({ cwd: root, storeDir: store, sessionId, durability: 'none' });
const checkpoint = await manager.checkpoint();
await trackAndOverwrite(manager, files[0]!);
say({ ready: true, checkpoint });
await process.stdin[Symbol.asyncIterator]().next();
for (const file of files.slice(1)) await trackAndOverwrite(manager, file);
await manager.close();
say({ done: true });
