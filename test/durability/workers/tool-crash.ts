/**
 * Child process for the tool crash test: opens a session, takes a checkpoint,
 * then makes each built-in tool's first write into a directory the session
 * tracks nothing in, and SIGKILLs itself just before the Nth filesystem call
 * the library makes during those tool calls.
 *
 * Usage: node tool-crash.mjs '{"root": ..., "store": ..., "sessionId": ..., "killAt": n | null}'
 * Prints `{"finished": true, "calls": n}` when it was not killed.
 */
import { CheckpointManager } from '../../../src/index.js';
import { instrumentFs, mutatingCalls } from '../helpers/fs-instrument.js';
import { toolCrashCalls } from '../helpers/tool-crash-scenario.js';

const config = JSON.parse(process.argv[2]!) as { root: string; store: string; sessionId: string; killAt: number | null };
let counting = false;
let calls = 0;
instrumentFs(mutatingCalls, () => {
  if (!counting) return undefined;
  calls += 1;
  if (calls === config.killAt) process.kill(process.pid, 'SIGKILL');
  return undefined;
});

const manager = await CheckpointManager.open({ cwd: config.root, storeDir: config.store, sessionId: config.sessionId, durability: 'full' });
await manager.checkpoint();
counting = true;
await toolCrashCalls(manager);
counting = false;
await manager.close();
process.stdout.write(`${JSON.stringify({ finished: true, calls })}\n`);
