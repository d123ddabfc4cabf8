/**
 * Child process for the lock test. Prints `ready`, waits for a line on stdin
 * (so several contenders open at the same moment), opens the session, and
 * reports. The winner takes a checkpoint and holds the session until it is
 * killed or its stdin closes.
 *
 * Usage: node lock-contender.mjs '{"root": ..., "store": ..., "sessionId": ...}'
 */
import { CheckpointManager } from '../../../src/index.js';

const { root, store, sessionId } = JSON.parse(process.argv[2]!) as { root: string; store: string; sessionId: string };
const say = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`);

say({ ready: true });
const lines = process.stdin[Symbol.asyncIterator]();
await lines.next();
try {
  const manager = await CheckpointManager.open({ cwd: root, storeDir: store, resume: sessionId, durability: 'none' });
  const checkpoint = await manager.checkpoint();
  say({ opened: true, checkpoint, pid: process.pid });
  await lines.next(); // hold the session until stdin ends
  await manager.close();
} catch (error) {
  say({ opened: false, code: (error as { code?: string }).code, message: (error as Error).message });
}
