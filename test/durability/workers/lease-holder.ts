/**
 * Child process that holds a session, optionally as if it ran on another
 * host: with `hostname`, `os.hostname()` answers that name (the library asks
 * it when it writes a lock and when it judges one). The store's lease is
 * `lockLeaseMs`. Prints `holding`; then each line on stdin names a file to
 * track, and gets `tracked` or the error back. Closes the session when stdin ends.
 *
 * Usage: node lease-holder.mjs '{"root": ..., "store": ..., "sessionId": ..., "hostname"?: ..., "lockLeaseMs"?: ...}'
 */
import os from 'node:os';
import { CheckpointManager, filesystemStorage } from '../../../src/index.js';

interface LeaseHolderConfig {
  root: string;
  store: string;
  sessionId: string;
  hostname?: string;
  lockLeaseMs?: number;
}

const config = JSON.parse(process.argv[2]!) as LeaseHolderConfig;
const say = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`);
const fakeHostname = config.hostname;
if (fakeHostname !== undefined) os.hostname = () => fakeHostname;

const storage = filesystemStorage({ directory: config.store, durability: 'none', ...(config.lockLeaseMs !== undefined ? { lockLeaseMs: config.lockLeaseMs } : {}) });
const manager = await CheckpointManager.open({ cwd: config.root, storage, resume: config.sessionId });
say({ holding: true, pid: process.pid });
let buffered = '';
for await (const chunk of process.stdin) {
  buffered += String(chunk);
  for (let newline = buffered.indexOf('\n'); newline !== -1; newline = buffered.indexOf('\n')) {
    const file = buffered.slice(0, newline);
    buffered = buffered.slice(newline + 1);
    try {
      await manager.trackEdit(file);
      say({ tracked: file });
    } catch (error) {
      say({ error: { code: (error as { code?: string }).code, message: (error as Error).message } });
    }
  }
}
await manager.close();
await storage.close();
