/**
 * Child process that runs `cleanup()` on a store and stops once, just before
 * the first filesystem call that matches `pause` (a call name and a path or
 * path prefix), so that the test can act in exactly that window. It prints
 * `paused` and blocks (synchronously: nothing else of the clean-up runs) until
 * the file `resumeFile` exists, then prints the clean-up's result. With
 * `collectGarbageOnly`, it runs only the filesystem store's `collectGarbage`
 * (no session is named, no grace period), to stop inside its own listing.
 *
 * Usage: node paused-cleanup.mjs '{"store": ..., "pause": {"calls": [...], "path": ...}, "resumeFile": ..., "collectGarbageOnly"?: true}'
 */
import fs from 'node:fs';
import { cleanup, filesystemStorage } from '../../../src/index.js';
import { instrumentFs, type CallName } from '../helpers/fs-instrument.js';

interface PausedCleanupConfig {
  store: string;
  pause: { calls: CallName[]; path?: string; pathPrefix?: string };
  resumeFile: string;
  collectGarbageOnly?: boolean;
}

const { store, pause, resumeFile, collectGarbageOnly } = JSON.parse(process.argv[2]!) as PausedCleanupConfig;
const say = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`);
const sleeper = new Int32Array(new SharedArrayBuffer(4));
let paused = false;

instrumentFs(pause.calls, (name, args) => {
  const target = String(args[0]);
  if (paused || !(pause.path === undefined || target === pause.path) || !(pause.pathPrefix === undefined || target.startsWith(pause.pathPrefix))) return undefined;
  paused = true;
  say({ paused: { call: name, path: target } });
  while (!fs.existsSync(resumeFile)) Atomics.wait(sleeper, 0, 0, 10);
  return undefined;
});

try {
  say({ result: collectGarbageOnly === true ? await filesystemStorage({ directory: store }).collectGarbage(new Set(), { graceMs: 0 }) : await cleanup({ storeDir: store }) });
} catch (error) {
  say({ error: { code: (error as { code?: string }).code, message: (error as Error).message } });
}
