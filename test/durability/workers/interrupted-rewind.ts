/**
 * Child process for the interrupted-rewind test: a session whose agent edited
 * three files, then a rewind of them that stops just before its second file
 * is put in place, either killed there (`stop: 'kill'`, SIGKILL) or hanging
 * there with the session still held (`stop: 'hang'`, until the test kills it).
 *
 * With `resume`, the session exists already (another process made those
 * edits): it is resumed, and only the rewind runs here.
 *
 * Usage: node interrupted-rewind.mjs '{"root", "store", "sessionId", "first", "stop", "resume"?}'
 */
import fs from 'node:fs';
import path from 'node:path';
import { CheckpointManager } from '../../../src/index.js';
import { instrumentFs } from '../helpers/fs-instrument.js';

const config = JSON.parse(process.argv[2]!) as { root: string; store: string; sessionId: string; first: string; stop: 'kill' | 'hang'; resume?: boolean };
const report = (value: object) => process.stdout.write(`${JSON.stringify(value)}\n`);

const manager = await CheckpointManager.open({ cwd: config.root, storeDir: config.store, ...(config.resume === true ? { resume: config.sessionId } : { sessionId: config.sessionId }) });
if (config.resume !== true) {
  await manager.checkpoint(config.first);
  for (const name of ['a.txt', 'b.txt', 'c.txt']) await manager.tools.write({ file_path: name, content: `${name}: agent\n` });
  await manager.checkpoint();
}

let rewinding = false;
let placed = 0;
instrumentFs(['renameSync'], (_name, args) => {
  // A rewind puts each file in place by renaming its temporary file over it.
  if (!rewinding || !String(args[0]).endsWith('.rewindable-tmp')) return undefined;
  placed += 1;
  if (placed < 2) return undefined;
  report({ stopped: path.basename(String(args[1])) });
  if (config.stop === 'kill') process.kill(process.pid, 'SIGKILL');
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0); // hangs here, holding the session
  return undefined;
});
rewinding = true;
await manager.rewindFiles(config.first);
fs.writeSync(2, 'the rewind was expected to stop before its end\n');
process.exit(1);
