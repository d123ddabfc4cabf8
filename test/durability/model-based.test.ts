import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CheckpointManager } from '../../src/index.js';
import {
  allPaths,
  CheckpointCommand,
  commandsRun,
  EditCommand,
  ExternalDeleteCommand,
  ExternalWriteCommand,
  lineOf,
  MkdirCommand,
  notebookPath,
  NotebookEditCommand,
  ReopenCommand,
  RewindCommand,
  SymlinkCommand,
  textPaths,
  UndoCommand,
  WriteCommand,
  type RealSystem,
} from './helpers/model-commands.js';
import type { RewindModel } from './helpers/rewind-model.js';
import { createSandbox } from './helpers/sandbox.js';

/**
 * Model-based property test. fast-check draws sequences of checkpoint,
 * Write, Edit, NotebookEdit (the built-in tools), changes and deletions made
 * outside the tools, mkdir and symlink creation at tracked paths, rewind (to
 * any checkpoint, with or without skipConflicts), undo, and close-and-resume;
 * after each, the files on disk, the rewind's dry run and real run (files
 * changed, conflicts) and the checkpoint list must match a small in-memory
 * model of the contract (helpers/rewind-model.ts).
 *
 * A failure prints fast-check's seed and path; replay it with
 * REWINDABLE_MODEL_SEED=<seed> REWINDABLE_MODEL_PATH=<path> npx vitest run test/durability/model-based.test.ts
 */

const runs = Number(process.env.REWINDABLE_MODEL_RUNS ?? 1_000);
const notebook = JSON.stringify({
  cells: [
    { cell_type: 'code', id: 'cell-a', metadata: {}, execution_count: null, outputs: [], source: ['print(1)'] },
    { cell_type: 'markdown', id: 'cell-b', metadata: {}, source: ['# Title'] },
  ],
  metadata: {},
  nbformat: 4,
  nbformat_minor: 5,
});

// Words of one length: rewrites keep the size, so only the content tells versions apart.
const word = fc.integer({ min: 10, max: 99 }).map((number) => `w${number}`);
const textPath = fc.constantFrom(...textPaths);
const commands = fc.commands(
  [
    fc.constant(new CheckpointCommand()),
    fc.tuple(textPath, word).map(([file, text]) => new WriteCommand(file, text)),
    fc.tuple(textPath, word).map(([file, text]) => new EditCommand(file, text)),
    fc.tuple(fc.constantFrom('cell-a', 'cell-b'), word).map(([cell, text]) => new NotebookEditCommand(cell, `print("${text}")`)),
    fc.tuple(textPath, word).map(([file, text]) => new ExternalWriteCommand(file, text)),
    fc.constantFrom(...allPaths).map((file) => new ExternalDeleteCommand(file)),
    textPath.map((file) => new MkdirCommand(file)),
    textPath.map((file) => new SymlinkCommand(file)),
    fc.tuple(fc.nat(20), fc.boolean()).map(([pick, skipConflicts]) => new RewindCommand(pick, skipConflicts)),
    fc.tuple(fc.nat(20), fc.boolean()).map(([pick, skipConflicts]) => new RewindCommand(pick, skipConflicts)),
    fc.constant(new UndoCommand()),
    fc.constant(new ReopenCommand()),
  ],
  { maxCommands: 14, size: 'medium' },
);

describe('model-based: random sessions against an in-memory model of the contract', () => {
  it(`${runs} random command sequences keep the files, rewinds, undo and checkpoints as the model says`, async () => {
    let sequences = 0;
    await fc.assert(
      fc.asyncProperty(commands, async (sequence) => {
        sequences += 1;
        const sandbox = createSandbox('rewindable-model-');
        const canary = path.join(sandbox.outside, 'canary.txt');
        fs.writeFileSync(canary, 'canary\n');
        fs.mkdirSync(path.join(sandbox.root, 'dir'));
        const initial: Record<string, string> = { 'a.txt': lineOf('a.txt', 'w00'), 'dir/c.txt': lineOf('dir/c.txt', 'w00'), [notebookPath]: notebook };
        sandbox.writeFiles(initial);
        const manager = await CheckpointManager.open({ cwd: sandbox.root, storeDir: sandbox.store, durability: 'none' });
        const real: RealSystem = { root: sandbox.root, store: sandbox.store, canary, manager };
        try {
          const first = await manager.checkpoint();
          const model: RewindModel = {
            files: new Map(allPaths.map((file) => [file, file in initial ? { kind: 'file' as const, content: initial[file]! } : { kind: 'absent' as const }])),
            checkpoints: [first],
            tracked: new Map(),
          };
          await fc.asyncModelRun(() => ({ model, real }), sequence);
          // Links were never written through.
          expect(fs.readFileSync(canary, 'utf8')).toBe('canary\n');
          expect(fs.readdirSync(sandbox.outside)).toEqual(['canary.txt']);
        } finally {
          await real.manager.close();
          sandbox.dispose();
        }
      }),
      {
        numRuns: runs,
        ...(process.env.REWINDABLE_MODEL_SEED !== undefined ? { seed: Number(process.env.REWINDABLE_MODEL_SEED) } : {}),
        ...(process.env.REWINDABLE_MODEL_PATH !== undefined ? { path: process.env.REWINDABLE_MODEL_PATH } : {}),
      },
    );
    expect(sequences).toBeGreaterThanOrEqual(runs);
    console.info(`model-based: ${sequences} sequences; commands run:`, commandsRun);
  }, 300_000);
});
