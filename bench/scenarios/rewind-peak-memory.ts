import { spawnSync } from 'node:child_process';
import * as esbuild from 'esbuild';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CheckpointManager } from '../lib/library.js';
import type { ScenarioReport } from '../lib/results.js';
import type { Scenario } from '../lib/scenario.js';
import { sourceFile } from '../lib/source-text.js';
import { removeTree } from '../lib/workspace.js';

const fileBytes = 1_000_000;
/** The bundled CommonJS dependencies (fast-glob ...) call require(). */
const requireShim = "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);";
const childScript = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'children', 'rewind-peak-memory.ts');

interface ChildReport {
  beforeOpenKiB: number;
  openedKiB: number;
  peakKiB: number;
  maxRssKiB: number;
  filesChanged: number;
  rewindMs: number;
}

/**
 * The peak resident memory of a process rewinding 2,000
 * files of 1 MB (2 GB of content), measured in a child process that does
 * nothing else.
 */
export const rewindPeakMemory: Scenario = {
  id: 'memory',
  summary: 'peak RSS of a child process rewinding 2,000 files of 1 MB',
  async run(context) {
    const fileCount = context.quick ? 100 : 2000;
    const directory = context.workspace.directory('memory');
    const root = path.join(directory, 'project');
    const storeDirectory = path.join(directory, 'store');
    try {
      context.log(`memory: writing ${fileCount} files of 1 MB`);
      // One megabyte of source-like text; each file starts at a different place in it, so no two are alike.
      const base = Buffer.from(sourceFile(2000, fileBytes).slice(0, fileBytes));
      const files = Array.from({ length: fileCount }, (_, index) => path.join(root, `dir-${Math.floor(index / 100)}`, `asset-${index}.ts`));
      for (const [index, file] of files.entries()) {
        fs.mkdirSync(path.dirname(file), { recursive: true });
        const offset = (index * 4099) % fileBytes;
        const header = Buffer.from(`// File ${index}.\n`);
        fs.writeFileSync(file, Buffer.concat([header, base.subarray(offset), base.subarray(0, offset)]).subarray(0, fileBytes));
      }
      context.log('memory: tracking them (backing 2 GB up)');
      const manager = await CheckpointManager.open({ cwd: root, storeDir: storeDirectory, durability: 'none' });
      const checkpointId = await manager.checkpoint();
      for (const file of files) await manager.trackEdit(file);
      await manager.checkpoint();
      await manager.close();
      // Change every file (a few bytes in place), so the rewind restores all of them.
      for (const [index, file] of files.entries()) {
        const fd = fs.openSync(file, 'r+');
        fs.writeSync(fd, `/* changed ${index} */`, 200);
        fs.closeSync(fd);
      }
      context.log('memory: rewinding in a child process');
      // One JavaScript file with the library inside, as a user's process would load the built package.
      const bundle = path.join(directory, 'rewind-peak-memory.mjs');
      await esbuild.build({ entryPoints: [childScript], bundle: true, platform: 'node', format: 'esm', target: 'node20', banner: { js: requireShim }, outfile: bundle, logLevel: 'error' });
      const child = spawnSync(process.execPath, [bundle, root, storeDirectory, manager.sessionId, checkpointId], {
        encoding: 'utf8',
        maxBuffer: 16 * 1024 * 1024,
      });
      if (child.status !== 0) throw new Error(`the rewind child failed (${child.status}): ${child.stderr}`);
      const measured = JSON.parse(child.stdout.trim().split('\n').at(-1)!) as ChildReport;
      if (measured.filesChanged !== fileCount) throw new Error(`the rewind changed ${measured.filesChanged} files, expected ${fileCount}`);
      const megabytes = (kib: number) => (kib * 1024) / 1e6;
      const report: ScenarioReport = {
        id: 'memory',
        title: `Peak memory rewinding ${fileCount.toLocaleString('en-US')} files of 1 MB`,
        method: [
          `${fileCount.toLocaleString('en-US')} files of ${fileBytes.toLocaleString('en-US')} bytes of source-like text (${((fileCount * fileBytes) / 1e9).toFixed(1)} GB), tracked in one checkpoint, then each changed in place. ` +
            "Durability 'none' (the memory a rewind needs does not depend on fsync; it keeps the run short).",
          'A child process (bench/children/rewind-peak-memory.ts, bundled with esbuild and run by plain `node`, as a user\'s process runs the built package) opens the session and runs the real rewind ' +
            '(which also backs up the current content of every file first), then reports VmHWM from /proc/self/status: the peak resident set over its whole life, Node.js itself included.',
          `The child's resident set before opening the session was ${megabytes(measured.beforeOpenKiB).toFixed(1)} MB, after opening it ${megabytes(measured.openedKiB).toFixed(1)} MB; the rewind took ${(measured.rewindMs / 1000).toFixed(1)} s.`,
        ],
        rows: [
          {
            label: `${fileCount.toLocaleString('en-US')} files of 1 MB`,
            rewindable: { name: 'peak RSS (VmHWM) of the rewinding process', value: megabytes(measured.peakKiB), unit: 'MB' },
            target: { kind: 'value-at-most', value: 200 },
          },
        ],
      };
      return [report];
    } finally {
      removeTree(directory);
    }
  },
};
