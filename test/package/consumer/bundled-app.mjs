// Bundled with esbuild (ESM, platform node) by test/package.test.ts: an application that never captures.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { CheckpointManager } from 'rewindable';

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'rewindable-bundled-'));
const project = path.join(scratch, 'project');
fs.mkdirSync(project);
fs.writeFileSync(path.join(project, 'notes.txt'), 'first draft\n');
const manager = await CheckpointManager.open({ cwd: project, storeDir: path.join(scratch, 'store') });
const checkpoint = randomUUID();
await manager.checkpoint(checkpoint);
await manager.tools.write({ file_path: 'notes.txt', content: 'rewritten\n' });
await manager.rewindFiles(checkpoint);
await manager.close();
process.stdout.write(fs.readFileSync(path.join(project, 'notes.txt'), 'utf8'));
fs.rmSync(scratch, { recursive: true, force: true });
