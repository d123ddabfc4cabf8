import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { afterAll } from 'vitest';

/**
 * Child workers are bundled (library sources included) into one plain ESM file
 * per test run. The crash and race tests start hundreds of child processes,
 * and a bundle starts in about a fifth of the time `node --import tsx` takes.
 * The bundle goes to a temporary directory, never to dist/.
 */

const workersDirectory = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'workers');
const built = new Map<string, Promise<string>>();
let outputDirectory: string | undefined;

/** Path of the bundled worker `name` (a file in test/durability/workers, without extension). */
export function bundledWorker(name: string): Promise<string> {
  let bundle = built.get(name);
  if (bundle === undefined) {
    bundle = buildWorker(name);
    built.set(name, bundle);
  }
  return bundle;
}

async function buildWorker(name: string): Promise<string> {
  if (outputDirectory === undefined) outputDirectory = fs.mkdtempSync(path.join(os.tmpdir(), 'rewindable-workers-'));
  const outfile = path.join(outputDirectory, `${name}.mjs`);
  await build({
    entryPoints: [path.join(workersDirectory, `${name}.ts`)],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile,
    logLevel: 'error',
    // Some bundled dependencies are CommonJS; give them a require in ESM.
    banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
  });
  return outfile;
}

// Test files run in worker processes that may be stopped without an exit event: clean up after each file.
afterAll(() => {
  if (outputDirectory !== undefined) fs.rmSync(outputDirectory, { recursive: true, force: true });
  outputDirectory = undefined;
  built.clear();
});
