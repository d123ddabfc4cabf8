// Opens a manager with the capture journal, takes checkpoints, and never closes it: the process must still exit.
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { CheckpointManager } from '../../../src/index.js';

const [root, store] = process.argv.slice(2) as [string, string];
const manager = await CheckpointManager.open({ cwd: root, storeDir: store, durability: 'none', capture: { journal: true } });
await manager.checkpoint(randomUUID());
fs.writeFileSync(path.join(root, 'later.txt'), 'later\n');
await manager.checkpoint(randomUUID());
fs.appendFileSync(path.join(root, 'later.txt'), 'again\n');
await manager.checkpoint(randomUUID());
process.stdout.write(`${JSON.stringify({ via: manager.lastScan?.via, modified: manager.lastScan?.modified.length })}\n`);
