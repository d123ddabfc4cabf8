// Bundled with esbuild (ESM, platform node, the createRequire banner) by test/package.test.ts: an application with a capture scope.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { CheckpointManager } from 'rewindable';

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'rewindable-bundled-capture-'));
const project = path.join(scratch, 'project');
fs.mkdirSync(project);
fs.writeFileSync(path.join(project, 'notes.txt'), 'first draft\n');
const manager = await CheckpointManager.open({ cwd: project, storeDir: path.join(scratch, 'store'), capture: true });
const checkpoint = randomUUID();
await manager.checkpoint(checkpoint);
// A shell command's doing: no tool was told, the capture scope sees it.
fs.writeFileSync(path.join(project, 'notes.txt'), 'formatted\n');
fs.writeFileSync(path.join(project, 'generated.txt'), 'generated\n');
await manager.checkpoint(randomUUID());
await manager.rewindFiles(checkpoint);
await manager.close();
process.stdout.write(JSON.stringify(fs.readdirSync(project).sort().map((name) => [name, fs.readFileSync(path.join(project, name), 'utf8')])));
fs.rmSync(scratch, { recursive: true, force: true });
