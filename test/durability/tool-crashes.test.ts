import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { CheckpointManager } from '../../src/index.js';
import { bundledWorker } from './helpers/bundle.js';
import { forEachLimited, runChild } from './helpers/child-process.js';
import type { FileSet } from './helpers/crash-scenario.js';
import { createMemorySandbox, type Sandbox } from './helpers/sandbox.js';
import { toolCrashFiles } from './helpers/tool-crash-scenario.js';

/**
 * A tool killed in the middle of its write leaves at most its temporary file,
 * and the next open of the session sweeps it, also when the write was the
 * session's first in that directory. A child process makes the first Write,
 * Edit and NotebookEdit into directories the session tracks nothing in
 * (tool-crash-scenario.ts) and SIGKILLs itself before each filesystem call
 * the library makes in them, one run per call.
 */

const sessionId = '00000000-0000-4000-8000-0000000070c1';
let worker: string;
/** The files after the tool calls, and the library fs calls they made, from a run without a kill. */
let finalFiles: FileSet;
let totalCalls: number;

beforeAll(async () => {
  worker = await bundledWorker('tool-crash');
  const sandbox = createMemorySandbox();
  try {
    sandbox.writeFiles(toolCrashFiles);
    const run = await runChild(worker, { root: sandbox.root, store: sandbox.store, sessionId, killAt: null });
    expect(run.stderr).toBe('');
    expect(run.lines.at(-1)).toMatchObject({ finished: true });
    totalCalls = run.lines.at(-1)!.calls as number;
    finalFiles = sandbox.files();
  } finally {
    sandbox.dispose();
  }
}, 60_000);

/** Kills the child before library fs call `killAt`, reopens the session, and checks what it left. */
async function killAndReopen(killAt: number): Promise<void> {
  const sandbox: Sandbox = createMemorySandbox();
  try {
    sandbox.writeFiles(toolCrashFiles);
    const run = await runChild(worker, { root: sandbox.root, store: sandbox.store, sessionId, killAt });
    const context = `killed before library fs call ${killAt} of ${totalCalls}`;
    expect(run.signal, `${context}: ${run.stderr}`).toBe('SIGKILL');
    // Old enough for the sweep, which leaves younger ones to a writer that may still be running.
    const longAgo = new Date(Date.now() - 60_000);
    for (const name of sandbox.temporaryFiles()) fs.utimesSync(path.join(sandbox.root, name), longAgo, longAgo);

    const manager = await CheckpointManager.open({ cwd: sandbox.root, storeDir: sandbox.store, resume: sessionId, durability: 'none' });
    try {
      expect(sandbox.temporaryFiles(), `${context}: temporary files left after reopening`).toEqual([]);
      // Every file is whole: as before the tool calls, or as they leave it.
      const found = sandbox.files();
      for (const file of new Set([...Object.keys(found), ...Object.keys(finalFiles)])) {
        expect([toolCrashFiles[file], finalFiles[file]], `${context}: ${file}`).toContainEqual(found[file]);
      }
    } finally {
      await manager.close();
    }
  } finally {
    sandbox.dispose();
  }
}

describe('tool crashes (SIGKILL at every library fs call of first writes into untracked directories)', () => {
  it('every temporary file a killed Write, Edit or NotebookEdit left is swept when the session is reopened', async () => {
    expect(totalCalls).toBeGreaterThan(20);
    const points = Array.from({ length: totalCalls }, (_, index) => index + 1);
    await forEachLimited(points, 2, killAndReopen);
  }, 240_000);
});
