import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CheckpointManager, RewindFilesResult } from '../../src/index.js';
import { tempProject, type TempProject } from '../helpers/temp-project.js';

/**
 * Model-based property test of the selective modes: `rewindFiles` with
 * `paths` and `onConflict` ('overwrite', 'skip', 'merge'), `revertTurn`
 * ('skip', 'overwrite'), each preceded by its dry run, and the undo of the
 * latest real run, amid tool edits, creations and deletions and edits made
 * outside the tools. After every command the files on disk must equal a
 * small model byte for byte, and each run's changed and conflicting files
 * must be the model's.
 *
 * A file is absent or a few one-line slots, each between two separator lines
 * that never change: edits of different slots always merge cleanly (git
 * already merges changes one unchanged line apart), edits of one slot
 * conflict unless they agree. So a three-way merge is a merge slot by slot.
 *
 * A failure prints fast-check's seed and path; replay it with
 * REWINDABLE_SELECTIVE_SEED=<seed> REWINDABLE_SELECTIVE_PATH=<path> npx vitest run test/rewind/selective-modes.model.test.ts
 */

const runs = Number(process.env.REWINDABLE_SELECTIVE_RUNS ?? 500);
const fileNames = ['a.txt', 'b.txt'] as const;
type FileName = (typeof fileNames)[number];
const slotCount = 3;
const valueCount = 3;

/** A file's content: slot values, or absent. */
type Version = readonly number[] | 'absent';

const render = (version: Exclude<Version, 'absent'>): string =>
  `${version.map((value, slot) => `-- ${slot} a --\n-- ${slot} b --\nslot ${slot} = v${value}\n`).join('')}-- end a --\n-- end b --\n`;

const same = (a: Version, b: Version): boolean => (a === 'absent' || b === 'absent' ? a === b : a.every((value, slot) => value === b[slot]));

/** The slot's value moved on by `by` (1 or 2): always a change, and few values so that sides often agree. */
const shifted = (version: readonly number[], slot: number, by: number): Version => version.map((old, index) => (index === slot ? (old + by) % valueCount : old));

interface TrackedFile {
  /** The state recorded at each checkpoint from the first backup on (the backup goes to the checkpoint it was taken in). */
  versions: Array<{ checkpoint: number; version: Version }>;
  /** What a tool or a rewind last wrote. */
  lastWrite: Version;
}

interface Model {
  files: Map<FileName, Version>;
  /** Checkpoint ids, oldest first, the undo checkpoints of real runs included. */
  checkpoints: string[];
  /** Indexes in `checkpoints` of the undo checkpoints: no turn ends at them. */
  undoPoints: Set<number>;
  tracked: Map<FileName, TrackedFile>;
  /** The undo checkpoint of the latest real run, and the files just before it while nothing else has happened since. */
  lastUndo?: { id: string; filesBefore?: Map<FileName, Version> };
}

interface Real {
  project: TempProject;
  manager: CheckpointManager;
}

/** The version a checkpoint holds; for a file first tracked after it, the first backup. */
function versionAt(tracked: TrackedFile, checkpoint: number): Version {
  let chosen = tracked.versions[0]!.version;
  for (const entry of tracked.versions) if (entry.checkpoint <= checkpoint) chosen = entry.version;
  return chosen;
}

function recordCheckpoint(model: Model, id: string): void {
  model.checkpoints.push(id);
  for (const [file, tracked] of model.tracked) tracked.versions.push({ checkpoint: model.checkpoints.length - 1, version: model.files.get(file)! });
}

/** Per file, what a run makes of it. */
interface Outcome {
  file: FileName;
  target: Version;
  /** Undoing the change on top conflicts and the file is left alone (`skipped` as `merge-conflict`). */
  leftAlone: boolean;
  /** Plain rewinds: changed since the tools (or a rewind) last wrote it, and not as at the checkpoint (`conflicts`). */
  overwritesEdit?: boolean;
  /** Written by a clean three-way merge: `target` holds both sides' changes. */
  merged?: { restored: Version };
}

/** git merge-file on slot files: each side's changes where the other kept the base; a slot both changed differently conflicts. */
function mergeSlots(base: readonly number[], ours: readonly number[], theirs: readonly number[]): Version | undefined {
  const merged: number[] = [];
  for (let slot = 0; slot < slotCount; slot++) {
    const [b, o, t] = [base[slot]!, ours[slot]!, theirs[slot]!];
    if (o !== b && t !== b && o !== t) return undefined;
    merged.push(o === b ? t : o);
  }
  return merged;
}

/** How often each rule of `undoOnTop` decided (printed: the sequences must reach the merges). */
const rulesApplied: Record<string, number> = {};
const applied = (rule: string) => (rulesApplied[rule] = (rulesApplied[rule] ?? 0) + 1);

/** Undoing base -> restored on top of now, by the rules of src/rewind/undo-on-top.ts. */
function undoOnTop(now: Version, base: Version | undefined, restored: Version, policy: 'skip' | 'overwrite'): Omit<Outcome, 'file'> {
  if (base === undefined || same(now, base)) return { target: restored, leftAlone: false };
  if (same(now, restored) || same(base, restored)) return { target: now, leftAlone: false };
  // Deleted since, created by the change and edited since, or both sides created from nothing: conflicts.
  const merged = now !== 'absent' && base !== 'absent' && restored !== 'absent' ? mergeSlots(base, now, restored) : undefined;
  if (merged !== undefined) {
    applied('clean merge');
    return { target: merged, leftAlone: false, merged: { restored } };
  }
  applied(now === 'absent' ? 'conflict: deleted since' : restored === 'absent' ? 'conflict: created and edited since' : base === 'absent' ? 'conflict: both created' : 'conflict: same slot');
  return policy === 'overwrite' ? { target: restored, leftAlone: false } : { target: now, leftAlone: true };
}

const sortedTracked = (model: Readonly<Model>): FileName[] => [...model.tracked.keys()].sort();

/** The tracked files a bit mask picks; none picked means no `paths` option (every file). */
function pick(model: Readonly<Model>, mask: number): FileName[] | undefined {
  const chosen = sortedTracked(model).filter((_file, index) => (mask >> index) & 1);
  return chosen.length === 0 ? undefined : chosen;
}

function predictRewind(model: Model, checkpoint: number, onConflict: 'overwrite' | 'skip' | 'merge', paths: FileName[] | undefined): Outcome[] {
  return (paths ?? sortedTracked(model)).map((file) => {
    const tracked = model.tracked.get(file)!;
    const now = model.files.get(file)!;
    const restored = versionAt(tracked, checkpoint);
    const overwritesEdit = !same(now, restored) && !same(now, tracked.lastWrite);
    if (onConflict === 'merge') return { file, ...undoOnTop(now, tracked.lastWrite, restored, 'skip') };
    return { file, target: overwritesEdit && onConflict === 'skip' ? now : restored, leftAlone: false, overwritesEdit };
  });
}

/**
 * revertTurn: the files the turn changed (the latest turn: every tracked file), merged from after the turn back to before it.
 * A turn ends at the next user-message checkpoint; an undo checkpoint taken meanwhile does not end it.
 */
function predictRevert(model: Model, turn: number, onConflict: 'skip' | 'overwrite', paths: FileName[] | undefined): Outcome[] {
  const next = model.checkpoints.findIndex((_id, index) => index > turn && !model.undoPoints.has(index));
  const isLatest = next === -1;
  return (paths ?? sortedTracked(model)).flatMap((file): Outcome[] => {
    const tracked = model.tracked.get(file)!;
    const before = versionAt(tracked, turn);
    const after = isLatest ? tracked.lastWrite : versionAt(tracked, next);
    if (!isLatest && same(before, after)) return [];
    const now = model.files.get(file)!;
    return [{ file, ...undoOnTop(now, after, before, onConflict) }];
  });
}

/** A real run: its undo checkpoint records every tracked file, then the changes are written. */
function applyRun(model: Model, outcomes: Outcome[], undoCheckpointId: string): void {
  const filesBefore = new Map(model.files);
  recordCheckpoint(model, undoCheckpointId);
  model.undoPoints.add(model.checkpoints.length - 1);
  for (const { file, target, merged } of outcomes) {
    if (same(model.files.get(file)!, target)) continue;
    model.files.set(file, target);
    const tracked = model.tracked.get(file)!;
    // A merge that kept someone else's edit (the file was not what the tools last wrote) leaves that edit theirs:
    // the tools' side is the restored version, so a later merge keeps the edit and a later rewind reports it.
    const keptOtherEdit = merged !== undefined && !same(filesBefore.get(file)!, tracked.lastWrite);
    tracked.lastWrite = keptOtherEdit ? merged.restored : target;
  }
  model.lastUndo = { id: undoCheckpointId, filesBefore };
}

function readDisk(root: string): Record<string, string> {
  return Object.fromEntries(fs.readdirSync(root).map((name) => [name, fs.readFileSync(path.join(root, name)).toString('latin1')]));
}

function expectDiskMatches(model: Readonly<Model>, real: Real, label: string, files: ReadonlyMap<FileName, Version> = model.files): void {
  const expected = Object.fromEntries(fileNames.flatMap((file) => {
    const version = files.get(file)!;
    return version === 'absent' ? [] : [[file, render(version)]];
  }));
  expect(readDisk(real.project.root), label).toEqual(expected);
}

const relative = (real: Real, files: readonly string[]): string[] => files.map((file) => path.relative(real.project.root, file)).sort();

/** What the model checks of a run's answer. */
function summary(real: Real, result: RewindFilesResult, plainRewind: boolean) {
  if (!result.canRewind) throw new Error(`refused: ${result.error}`);
  return {
    changed: relative(real, result.filesChanged),
    mergeConflicts: relative(real, result.skipped.filter((entry) => entry.reason === 'merge-conflict').map((entry) => entry.path)),
    // Plain rewinds only: with a merge `conflicts` also lists the merge conflicts and what `overwrite` writes over.
    ...(plainRewind ? { conflicts: relative(real, result.conflicts) } : {}),
  };
}

function expected(model: Model, outcomes: Outcome[], plainRewind: boolean) {
  const changed = outcomes.filter(({ file, target }) => !same(model.files.get(file)!, target));
  return {
    changed: changed.map(({ file }) => file).sort(),
    mergeConflicts: outcomes.filter((outcome) => outcome.leftAlone).map(({ file }) => file).sort(),
    ...(plainRewind ? { conflicts: outcomes.filter((outcome) => outcome.overwritesEdit).map(({ file }) => file).sort() } : {}),
  };
}

/** The dry run (files untouched, the model's answer), then the real run (the same answer); the model follows, then the disk. */
async function previewThenRun(model: Model, real: Real, label: string, outcomes: Outcome[], plainRewind: boolean, run: (dryRun: boolean) => Promise<RewindFilesResult>): Promise<void> {
  const before = real.project.snapshot();
  const preview = await run(true);
  expect(real.project.snapshot(), `${label}: dry run writes nothing`).toEqual(before);
  const prediction = expected(model, outcomes, plainRewind);
  expect(summary(real, preview, plainRewind), `${label}: dry run`).toEqual(prediction);
  const result = await run(false);
  expect(summary(real, result, plainRewind), label).toEqual(prediction);
  expect(result.filesChanged, `${label}: as its dry run said`).toEqual(preview.filesChanged);
  applyRun(model, outcomes, result.undoCheckpointId!);
  expectDiskMatches(model, real, label);
}

type Command = fc.AsyncCommand<Model, Real>;

/** Any command but a run: the disk must match the model after it, and the next undo is no longer the exact inverse of its run. */
function step(name: string, check: (model: Readonly<Model>) => boolean, run: (model: Model, real: Real) => Promise<void>): Command {
  return {
    check,
    async run(model, real) {
      await run(model, real);
      if (model.lastUndo !== undefined) delete model.lastUndo.filesBefore;
      expectDiskMatches(model, real, name);
    },
    toString: () => name,
  };
}

/** A tool's write, as the built-in tools do it: tracked first, then written and recorded. */
async function toolWrite(model: Model, real: Real, file: FileName, version: Version): Promise<void> {
  await real.manager.trackEdit(file);
  if (version === 'absent') fs.rmSync(real.project.file(file));
  else real.project.write(file, render(version));
  await real.manager.recordWrite(file);
  const tracked = model.tracked.get(file);
  if (tracked === undefined) model.tracked.set(file, { versions: [{ checkpoint: model.checkpoints.length - 1, version: model.files.get(file)! }], lastWrite: version });
  else tracked.lastWrite = version;
  model.files.set(file, version);
}

function externalWrite(model: Model, real: Real, file: FileName, version: Version): void {
  if (version === 'absent') fs.rmSync(real.project.file(file));
  else real.project.write(file, render(version));
  model.files.set(file, version);
}

const isPresent = (model: Readonly<Model>, file: FileName) => model.files.get(file) !== 'absent';
const slotsOf = (model: Readonly<Model>, file: FileName) => model.files.get(file) as readonly number[];

const file = fc.constantFrom(...fileNames);
const slot = fc.nat(slotCount - 1);
const value = fc.nat(valueCount - 1);
const shift = fc.integer({ min: 1, max: valueCount - 1 });
const mask = fc.nat(2 ** fileNames.length - 1);
const checkpointPick = fc.nat(40);

const newTurn = fc.constant(
  step('newTurn()', () => true, async (model, real) => {
    const id = randomUUID();
    await real.manager.checkpoint(id);
    recordCheckpoint(model, id);
  }),
);

const toolEdit = fc.tuple(file, slot, shift).map(([name, index, by]) =>
  step(`toolEdit(${name}, slot ${index} + ${by})`, (model) => isPresent(model, name), (model, real) => toolWrite(model, real, name, shifted(slotsOf(model, name), index, by))),
);

const toolCreate = fc.tuple(file, fc.array(value, { minLength: slotCount, maxLength: slotCount })).map(([name, values]) =>
  step(`toolCreate(${name}, [${values.join(' ')}])`, (model) => !isPresent(model, name), (model, real) => toolWrite(model, real, name, values)),
);

const toolDelete = file.map((name) => step(`toolDelete(${name})`, (model) => isPresent(model, name), (model, real) => toolWrite(model, real, name, 'absent')));

const externalEdit = fc.tuple(file, slot, shift).map(([name, index, by]) =>
  step(`externalEdit(${name}, slot ${index} + ${by})`, (model) => isPresent(model, name), async (model, real) =>
    externalWrite(model, real, name, shifted(slotsOf(model, name), index, by)),
  ),
);

const externalDelete = file.map((name) => step(`externalDelete(${name})`, (model) => isPresent(model, name), async (model, real) => externalWrite(model, real, name, 'absent')));

/** The session rebuilt from its log: what rewinds and merges wrote must survive it. */
const closeAndResume = fc.constant(
  step('closeAndResume()', () => true, async (_model, real) => {
    await real.manager.close();
    real.manager = await real.project.open({ resume: real.manager.sessionId });
  }),
);

const rewind = fc.tuple(checkpointPick, mask, fc.constantFrom('overwrite' as const, 'skip' as const, 'merge' as const)).map(
  ([chosen, paths, onConflict]): Command => ({
    check: () => true,
    async run(model, real) {
      const index = chosen % model.checkpoints.length;
      const selected = pick(model, paths);
      const label = `rewindFiles(#${index}, ${onConflict}, paths ${selected?.join(',') ?? 'all'})`;
      const outcomes = predictRewind(model, index, onConflict, selected);
      await previewThenRun(model, real, label, outcomes, onConflict !== 'merge', (dryRun) =>
        real.manager.rewindFiles(model.checkpoints[index]!, { dryRun, onConflict, ...(selected ? { paths: selected } : {}) }),
      );
    },
    toString: () => `rewindFiles(pick ${chosen}, ${onConflict}, mask ${paths})`,
  }),
);

const revert = fc.tuple(checkpointPick, mask, fc.constantFrom('skip' as const, 'overwrite' as const)).map(
  ([chosen, paths, onConflict]): Command => ({
    check: () => true,
    async run(model, real) {
      const index = chosen % model.checkpoints.length;
      const selected = pick(model, paths);
      const label = `revertTurn(#${index} of ${model.checkpoints.length}, ${onConflict}, paths ${selected?.join(',') ?? 'all'})`;
      const outcomes = predictRevert(model, index, onConflict, selected);
      await previewThenRun(model, real, label, outcomes, false, (dryRun) =>
        real.manager.revertTurn(model.checkpoints[index]!, { dryRun, onConflict, ...(selected ? { paths: selected } : {}) }),
      );
    },
    toString: () => `revertTurn(pick ${chosen}, ${onConflict}, mask ${paths})`,
  }),
);

const undo = fc.constant<Command>({
  check: (model) => model.lastUndo !== undefined,
  async run(model, real) {
    const { id, filesBefore } = model.lastUndo!;
    const outcomes = predictRewind(model, model.checkpoints.indexOf(id), 'overwrite', undefined);
    await previewThenRun(model, real, 'undo', outcomes, true, (dryRun) => real.manager.rewindFiles(id, { dryRun }));
    if (filesBefore !== undefined) {
      applied('undo straight after its run');
      expectDiskMatches(model, real, 'undo puts back the files as they were before the run', filesBefore);
    }
  },
  toString: () => 'undo()',
});

// Weighted towards what merges need: turns, edits by the tools and by others, then a rewind or a revert.
const command = fc.oneof(
  { weight: 3, arbitrary: newTurn },
  { weight: 6, arbitrary: toolEdit },
  { weight: 1, arbitrary: toolCreate },
  { weight: 1, arbitrary: toolDelete },
  { weight: 4, arbitrary: externalEdit },
  { weight: 1, arbitrary: externalDelete },
  { weight: 1, arbitrary: closeAndResume },
  { weight: 2, arbitrary: rewind },
  { weight: 2, arbitrary: revert },
  { weight: 1, arbitrary: undo },
);

describe('selective rewinds, reverts and merges against a slot model of the files', () => {
  it(`${runs} random sessions: rewindFiles(paths, onConflict), revertTurn, dry runs and undo leave the files the model predicts`, async () => {
    let sequences = 0;
    await fc.assert(
      fc.asyncProperty(fc.commands([command], { maxCommands: 40, size: 'max' }), async (commands) => {
        sequences += 1;
        const project = tempProject();
        const start: Version = Array.from({ length: slotCount }, () => 0);
        project.write('a.txt', render(start));
        project.write('b.txt', render(start));
        const real: Real = { project, manager: await project.open() };
        const model: Model = { files: new Map<FileName, Version>([['a.txt', start], ['b.txt', start]]), checkpoints: [], undoPoints: new Set(), tracked: new Map() };
        try {
          const first = randomUUID();
          await real.manager.checkpoint(first);
          recordCheckpoint(model, first);
          await fc.asyncModelRun(() => ({ model, real }), commands);
        } finally {
          // One directory per sequence, removed at once: hundreds must not wait for afterEach.
          await real.manager.close();
          fs.rmSync(path.dirname(project.root), { recursive: true, force: true });
        }
      }),
      {
        numRuns: runs,
        ...(process.env.REWINDABLE_SELECTIVE_SEED !== undefined ? { seed: Number(process.env.REWINDABLE_SELECTIVE_SEED) } : {}),
        ...(process.env.REWINDABLE_SELECTIVE_PATH !== undefined ? { path: process.env.REWINDABLE_SELECTIVE_PATH } : {}),
      },
    );
    expect(sequences).toBeGreaterThanOrEqual(runs);
    console.info(`selective modes: ${sequences} sequences; model rules applied:`, rulesApplied);
  }, Math.max(120_000, runs * 100));
});
