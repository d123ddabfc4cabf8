/**
 * Child process for the hard-link race test: in a tight loop, moves the
 * tracked file aside, renames a fresh hard link of a canary outside the
 * project over its name, then puts the tracked file back (with the mode the
 * rewind is to undo), while the test process rewinds. The tracked file is
 * never a hard link itself, so every check the rewind makes of it can pass,
 * and the canary is under its name for a moment in each round.
 *
 * Usage: node link-swapper.mjs '{"file": ..., "canary": ..., "stopFile": ..., "mode": n}'
 * Prints `started` as it starts, and one JSON line with its counts when the stop file appears.
 */
import fs from 'node:fs';
import path from 'node:path';

interface LinkSwapperConfig {
  /** The tracked file. */
  file: string;
  /** A file outside the project, whose mode and bytes must never change. */
  canary: string;
  stopFile: string;
  /** The mode the tracked file is given back each round: the rewind then has a chmod to make. */
  mode: number;
}

const config = JSON.parse(process.argv[2]!) as LinkSwapperConfig;
const directory = path.dirname(config.file);
const aside = path.join(directory, '.tracked-aside');
const link = path.join(directory, '.canary-link');
const pause = new Int32Array(new SharedArrayBuffer(4));

let swaps = 0;
let errors = 0;
process.stdout.write('started\n');
for (let iteration = 0; ; iteration += 1) {
  if (iteration % 200 === 0 && fs.existsSync(config.stopFile)) break;
  try {
    fs.linkSync(config.canary, link);
    fs.renameSync(config.file, aside);
    fs.renameSync(link, config.file);
    fs.chmodSync(aside, config.mode);
    // The canary stays under the name for up to a third of a millisecond, the tracked file for up to one:
    // most rewinds get past their checks, and some find the canary there when they act.
    Atomics.wait(pause, 0, 0, Math.random() / 3);
    fs.renameSync(aside, config.file);
    swaps += 1;
    Atomics.wait(pause, 0, 0, Math.random());
  } catch {
    errors += 1;
    // Put the layout back whatever step failed: the tracked file under its name, no link left over.
    if (fs.existsSync(aside)) fs.renameSync(aside, config.file);
    fs.rmSync(link, { force: true });
  }
}
process.stdout.write(`${JSON.stringify({ swaps, errors })}\n`);
