import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type fc from 'fast-check';
import { expect } from 'vitest';
import { CheckpointManager, type RewindFilesResult } from '../../../src/index.js';
import { applyRewind, checkpoint, predictRewind, track, type PathState, type RewindModel } from './rewind-model.js';

/**
 * The commands of the model-based test. Each checks when it applies to the
 * model, runs against the real library and disk, updates the model, and
 * compares. Text files hold one line, `<path> <word>`, so an Edit always has a
 * unique `old_string`, and words of equal length make same-size rewrites
 * (the case stat-signature shortcuts get wrong).
 */

export const textPaths = ['a.txt', 'b.txt', 'dir/c.txt'] as const;
export const notebookPath = 'nb.ipynb';
export const allPaths = [...textPaths, notebookPath] as const;

export interface RealSystem {
  root: string;
  store: string;
  /** A file outside the project that swapped-in links point to. */
  canary: string;
  manager: CheckpointManager;
}

type Command = fc.AsyncCommand<RewindModel, RealSystem>;

/** How many times each kind of command ran (printed by the test, to show the sequences did something). */
export const commandsRun: Record<string, number> = {};
const ran = (name: string) => (commandsRun[name] = (commandsRun[name] ?? 0) + 1);

export const lineOf = (file: string, word: string) => `${file} ${word}\n`;
const wordOf = (content: string) => content.slice(content.lastIndexOf(' ') + 1, -1);

/** What a path is on disk, in the model's terms. */
function observe(root: string, file: string): PathState {
  const full = path.join(root, file);
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(full);
  } catch {
    return { kind: 'absent' };
  }
  if (stat.isSymbolicLink()) return { kind: 'link' };
  if (stat.isDirectory()) return { kind: 'directory' };
  return { kind: 'file', content: fs.readFileSync(full, 'utf8') };
}

/** The disk matches the model, path by path, and nothing else appeared in the project. */
export function expectDiskMatches(model: RewindModel, real: RealSystem, after: string): void {
  const disk = Object.fromEntries(allPaths.map((file) => [file, observe(real.root, file)]));
  expect(disk, after).toEqual(Object.fromEntries(model.files));
  const listed = fs.readdirSync(real.root, { recursive: true }).map(String).sort();
  const expected = ['dir', ...allPaths.filter((file) => model.files.get(file)!.kind !== 'absent')].sort();
  const inside = (file: string) => allPaths.some((known) => file.startsWith(`${known}/`)); // entries of a directory made at a tracked path
  expect(listed.filter((file) => !inside(file)), `${after}: no stray files`).toEqual(expected);
}

const isWritable = (state: PathState | undefined) => state?.kind === 'file' || state?.kind === 'absent';

export class CheckpointCommand implements Command {
  check = () => true;
  async run(model: RewindModel, real: RealSystem): Promise<void> {
    ran('checkpoint');
    const id = randomUUID();
    expect(await real.manager.checkpoint(id)).toBe(id);
    checkpoint(model, id);
  }
  toString = () => 'checkpoint()';
}

export class WriteCommand implements Command {
  constructor(
    readonly file: (typeof textPaths)[number],
    readonly word: string,
  ) {}
  check = (model: Readonly<RewindModel>) => isWritable(model.files.get(this.file));
  async run(model: RewindModel, real: RealSystem): Promise<void> {
    ran('Write');
    await real.manager.tools.write({ file_path: this.file, content: lineOf(this.file, this.word) });
    track(model, this.file);
    const written: PathState = { kind: 'file', content: lineOf(this.file, this.word) };
    model.files.set(this.file, written);
    model.tracked.get(this.file)!.lastWrite = written;
    expectDiskMatches(model, real, this.toString());
  }
  toString = () => `Write(${this.file}, ${this.word})`;
}

export class EditCommand implements Command {
  constructor(
    readonly file: (typeof textPaths)[number],
    readonly word: string,
  ) {}
  check = (model: Readonly<RewindModel>) => {
    const state = model.files.get(this.file);
    return state?.kind === 'file' && wordOf(state.content) !== this.word;
  };
  async run(model: RewindModel, real: RealSystem): Promise<void> {
    ran('Edit');
    const before = model.files.get(this.file) as { content: string };
    await real.manager.tools.edit({ file_path: this.file, old_string: ` ${wordOf(before.content)}\n`, new_string: ` ${this.word}\n` });
    track(model, this.file);
    const written: PathState = { kind: 'file', content: lineOf(this.file, this.word) };
    model.files.set(this.file, written);
    model.tracked.get(this.file)!.lastWrite = written;
    expectDiskMatches(model, real, this.toString());
  }
  toString = () => `Edit(${this.file}, -> ${this.word})`;
}

export class NotebookEditCommand implements Command {
  constructor(
    readonly cell: string,
    readonly source: string,
  ) {}
  check = (model: Readonly<RewindModel>) => model.files.get(notebookPath)?.kind === 'file';
  async run(model: RewindModel, real: RealSystem): Promise<void> {
    ran('NotebookEdit');
    await real.manager.tools.notebookEdit({ notebook_path: notebookPath, cell_id: this.cell, new_source: this.source });
    // The notebook's exact bytes are the tool's business; the model takes them as written.
    const content = fs.readFileSync(path.join(real.root, notebookPath), 'utf8');
    const notebook = JSON.parse(content) as { cells: Array<{ id: string; source: string | string[] }> };
    const cell = notebook.cells.find((candidate) => candidate.id === this.cell)!;
    expect([cell.source].flat().join('')).toBe(this.source);
    track(model, notebookPath);
    const written: PathState = { kind: 'file', content };
    model.files.set(notebookPath, written);
    model.tracked.get(notebookPath)!.lastWrite = written;
    expectDiskMatches(model, real, this.toString());
  }
  toString = () => `NotebookEdit(${this.cell}, ${JSON.stringify(this.source)})`;
}

/** A change made outside the tools (the user, a shell): rewinds must still see it. */
export class ExternalWriteCommand implements Command {
  constructor(
    readonly file: (typeof textPaths)[number],
    readonly word: string,
  ) {}
  check = (model: Readonly<RewindModel>) => isWritable(model.files.get(this.file));
  async run(model: RewindModel, real: RealSystem): Promise<void> {
    ran('external write');
    fs.writeFileSync(path.join(real.root, this.file), lineOf(this.file, this.word));
    model.files.set(this.file, { kind: 'file', content: lineOf(this.file, this.word) });
  }
  toString = () => `externalWrite(${this.file}, ${this.word})`;
}

export class ExternalDeleteCommand implements Command {
  constructor(readonly file: (typeof allPaths)[number]) {}
  check = (model: Readonly<RewindModel>) => ['file', 'link'].includes(model.files.get(this.file)!.kind);
  async run(model: RewindModel, real: RealSystem): Promise<void> {
    ran('external delete');
    fs.rmSync(path.join(real.root, this.file));
    model.files.set(this.file, { kind: 'absent' });
  }
  toString = () => `externalDelete(${this.file})`;
}

export class MkdirCommand implements Command {
  constructor(readonly file: (typeof textPaths)[number]) {}
  check = (model: Readonly<RewindModel>) => model.files.get(this.file)!.kind === 'absent';
  async run(model: RewindModel, real: RealSystem): Promise<void> {
    ran('mkdir');
    fs.mkdirSync(path.join(real.root, this.file));
    model.files.set(this.file, { kind: 'directory' });
  }
  toString = () => `mkdir(${this.file})`;
}

/** A tracked or untracked path replaced by a link to a file outside the project. */
export class SymlinkCommand implements Command {
  constructor(readonly file: (typeof textPaths)[number]) {}
  check = (model: Readonly<RewindModel>) => isWritable(model.files.get(this.file));
  async run(model: RewindModel, real: RealSystem): Promise<void> {
    ran('symlink');
    fs.rmSync(path.join(real.root, this.file), { force: true });
    fs.symlinkSync(real.canary, path.join(real.root, this.file));
    model.files.set(this.file, { kind: 'link' });
  }
  toString = () => `symlink(${this.file} -> canary)`;
}

async function rewindAndCompare(model: RewindModel, real: RealSystem, index: number, skipConflicts: boolean, label: string): Promise<void> {
  const id = model.checkpoints[index]!;
  const prediction = predictRewind(model, index, skipConflicts);
  const summary = (result: RewindFilesResult) => ({
    changed: (result.filesChanged ?? []).map((file) => path.relative(real.root, file)).sort(),
    conflicts: (result.conflicts ?? []).map((file) => path.relative(real.root, file)).sort(),
  });
  const expected = { changed: [...prediction.changed].sort(), conflicts: [...prediction.conflicts].sort() };
  const preview = await real.manager.rewindFiles(id, { dryRun: true, skipConflicts });
  expect(summary(preview), `${label}: dry run`).toEqual(expected);
  const result = await real.manager.rewindFiles(id, { skipConflicts });
  expect(summary(result), label).toEqual(expected);
  applyRewind(model, prediction, result.undoCheckpointId!);
  expectDiskMatches(model, real, label);
}

export class RewindCommand implements Command {
  constructor(
    readonly pick: number,
    readonly skipConflicts: boolean,
  ) {}
  check = (model: Readonly<RewindModel>) => model.checkpoints.length > 0;
  async run(model: RewindModel, real: RealSystem): Promise<void> {
    ran('rewind');
    await rewindAndCompare(model, real, this.pick % model.checkpoints.length, this.skipConflicts, this.toString());
  }
  toString = () => `rewind(checkpoint #${this.pick}${this.skipConflicts ? ', skipConflicts' : ''})`;
}

/** Rewinds to the undo checkpoint the latest real rewind returned. */
export class UndoCommand implements Command {
  check = (model: Readonly<RewindModel>) => model.lastUndo !== undefined;
  async run(model: RewindModel, real: RealSystem): Promise<void> {
    ran('undo');
    await rewindAndCompare(model, real, model.checkpoints.indexOf(model.lastUndo!), false, this.toString());
  }
  toString = () => 'undo()';
}

/** Closes the manager and resumes the session in a new one: the state is rebuilt from the log. */
export class ReopenCommand implements Command {
  check = () => true;
  async run(model: RewindModel, real: RealSystem): Promise<void> {
    ran('close and resume');
    const sessionId = real.manager.sessionId;
    await real.manager.close();
    real.manager = await CheckpointManager.open({ cwd: real.root, storeDir: real.store, durability: 'none', resume: sessionId });
    expect((await real.manager.listCheckpoints()).map((summary) => summary.id)).toEqual(model.checkpoints);
  }
  toString = () => 'close() and resume';
}
