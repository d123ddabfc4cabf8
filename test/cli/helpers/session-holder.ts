/**
 * A child process that opens a session for writing (taking its lock) and
 * keeps it open until killed. Usage: node --import tsx session-holder.ts '<options json>'
 * Prints `holding` once the session is open.
 */
import { CheckpointManager, type CheckpointManagerOptions } from '../../../src/index.js';

const options = JSON.parse(process.argv[2]!) as CheckpointManagerOptions;
await CheckpointManager.open(options);
// A pending promise alone does not keep Node running; a timer does.
setInterval(() => {}, 60_000);
process.stdout.write('holding\n');
