/**
 * One "machine" of the cross-host test: a child process that drives a session
 * through a mirrored store (filesystem here, PostgreSQL as the remote), then
 * closes it, which waits until the database has everything.
 * Usage: node --import tsx mirror-worker.ts '<json>'; prints one JSON line per step.
 */
import fs from 'node:fs';
import path from 'node:path';
import { CheckpointManager, filesystemStorage } from '../../../src/index.js';
import { mirroredStorage } from '../../../src/store/mirror/mirrored-storage.js';
import { postgresStorage } from '../../../src/store/postgres/postgres-storage.js';

export type MirrorWorkerStep =
  | { do: 'checkpoint'; id: string }
  | { do: 'track'; path: string }
  | { do: 'write'; path: string; base64: string }
  | { do: 'remove'; path: string }
  | { do: 'rewind'; id: string; dryRun?: boolean };

export interface MirrorWorkerScript {
  cwd: string;
  storeDir: string;
  connection: string;
  sessionId?: string;
  resume?: string;
  steps: MirrorWorkerStep[];
}

const script = JSON.parse(process.argv[2]!) as MirrorWorkerScript;
const say = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`);
const storage = mirroredStorage({
  local: filesystemStorage({ directory: script.storeDir }),
  remote: postgresStorage({ connection: script.connection }),
});
const manager = await CheckpointManager.open({
  cwd: script.cwd,
  storage,
  ...(script.sessionId !== undefined ? { sessionId: script.sessionId } : {}),
  ...(script.resume !== undefined ? { resume: script.resume } : {}),
});
say({ opened: manager.sessionId });
for (const step of script.steps) {
  const target = path.join(script.cwd, 'path' in step ? step.path : '');
  switch (step.do) {
    case 'checkpoint':
      say({ checkpoint: await manager.checkpoint(step.id) });
      break;
    case 'track':
      await manager.trackEdit(step.path);
      break;
    case 'write':
      fs.mkdirSync(path.dirname(target), { recursive: true });
      fs.writeFileSync(target, Buffer.from(step.base64, 'base64'));
      break;
    case 'remove':
      fs.rmSync(target);
      break;
    case 'rewind':
      say({ rewind: await manager.rewindFiles(step.id, { dryRun: step.dryRun ?? false }) });
      break;
  }
}
await manager.close();
await storage.close();
say({ closed: true });
