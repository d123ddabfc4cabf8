import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { diffOutputSchema, errorOutputSchema, rewindOutputSchema } from '../../src/cli/output-schemas.js';
import { newId, snapshotTree, tempProject } from '../helpers/temp-project.js';
import { buildCli, canRunInTerminal, runCli, runCliInTerminal, type BuiltCli } from './helpers/built-cli.js';

let cli: BuiltCli;

beforeAll(async () => {
  cli = await buildCli();
});
afterAll(() => cli.remove());

/** Twenty numbered lines; `edits` replaces some of them. */
function lines(edits: Record<number, string> = {}): string {
  return Array.from({ length: 20 }, (_, index) => `${edits[index + 1] ?? `line ${index + 1}`}\n`).join('');
}

/** A closed session whose one turn edits lines 2 and 18 of f.txt (two hunks) and g.txt (one). */
async function twoHunks() {
  const project = tempProject();
  project.write('f.txt', lines());
  project.write('g.txt', 'g0\n');
  const manager = await project.open();
  const checkpoint = await manager.checkpoint(newId());
  for (const [file, content] of [
    ['f.txt', lines({ 2: 'agent 2', 18: 'agent 18' })],
    ['g.txt', 'g1\n'],
  ] as const) {
    await manager.trackEdit(file);
    project.write(file, content);
    await manager.recordWrite(file, { tool: 'Write' });
  }
  await manager.close();
  return { project, sessionId: manager.sessionId, checkpoint, atEnd: project.snapshot() };
}

/** The hunk ids `diff --json` gives each file, by name. */
async function hunkIds(store: string, sessionId: string, checkpoint: string): Promise<Record<string, string[]>> {
  const run = await runCli(cli, ['diff', sessionId, checkpoint, '--json', '--store', store]);
  expect(run.code).toBe(0);
  const output = diffOutputSchema.parse(JSON.parse(run.stdout));
  return Object.fromEntries(output.files.map((file) => [path.basename(file.path), file.action !== 'skip' ? (file.hunks ?? []).map((hunk) => hunk.id) : []]));
}

describe('rewindable diff shows hunk ids', () => {
  it('--json gives each file its hunks in the order of the @@ lines', async () => {
    const { project, sessionId, checkpoint } = await twoHunks();

    const run = await runCli(cli, ['diff', sessionId, checkpoint, '--json', '--store', project.store]);

    const [f, g] = diffOutputSchema.parse(JSON.parse(run.stdout)).files;
    expect(f).toMatchObject({ path: project.file('f.txt'), hunks: [{ oldStart: 1, oldLines: 5, newStart: 1, newLines: 5 }, { oldStart: 15, oldLines: 6, newStart: 15, newLines: 6 }] });
    expect(g).toMatchObject({ path: project.file('g.txt'), hunks: [{ oldStart: 1, oldLines: 1, newStart: 1, newLines: 1 }] });
  });

  it('into a pipe the patch has no ids; --hunk-ids ends each @@ line with its id, and git apply still applies it', async () => {
    const { project, sessionId, checkpoint } = await twoHunks();
    const ids = await hunkIds(project.store, sessionId, checkpoint);

    const plain = await runCli(cli, ['diff', sessionId, checkpoint, '--store', project.store]);
    const withIds = await runCli(cli, ['diff', sessionId, checkpoint, '--hunk-ids', '--store', project.store]);

    expect(plain.stdout).not.toContain('hunk');
    expect(withIds.code).toBe(0);
    expect(withIds.stdout.split('\n').filter((line) => line.startsWith('@@'))).toEqual([
      `@@ -1,5 +1,5 @@  (hunk ${ids['f.txt']![0]})`,
      `@@ -15,6 +15,6 @@ line 14  (hunk ${ids['f.txt']![1]})`,
      `@@ -1 +1 @@  (hunk ${ids['g.txt']![0]})`,
    ]);
    expect(withIds.stdout).toMatch(new RegExp(`\nTo rewind only some hunks: rewindable rewind ${sessionId} ${checkpoint} --hunk ID \\[--hunk ID\\]\\.\\.\\.\n$`));
    const copy = path.join(project.outside, 'copy');
    fs.cpSync(project.root, copy, { recursive: true });
    const patch = path.join(project.outside, 'rewind.patch');
    fs.writeFileSync(patch, withIds.stdout);
    expect(spawnSync('git', ['apply', patch], { cwd: copy, encoding: 'utf8' })).toMatchObject({ status: 0, stderr: '' });
    expect(fs.readFileSync(path.join(copy, 'f.txt'), 'utf8')).toBe(lines());
  });

  it.runIf(canRunInTerminal)('on a terminal, each @@ line ends with its id', async () => {
    const { project, sessionId, checkpoint } = await twoHunks();
    const ids = await hunkIds(project.store, sessionId, checkpoint);

    const run = await runCliInTerminal(cli, ['diff', sessionId, checkpoint, '--store', project.store], { env: { NO_COLOR: '1' } });

    expect(run.code).toBe(0);
    expect(run.output).toContain(`@@ -15,6 +15,6 @@ line 14  (hunk ${ids['f.txt']![1]})\n`);
  });
});

describe('rewindable rewind --hunk', () => {
  it('--yes rewinds only that hunk, byte for byte; the undo command puts it back', async () => {
    const { project, sessionId, checkpoint, atEnd } = await twoHunks();
    const ids = await hunkIds(project.store, sessionId, checkpoint);

    const run = await runCli(cli, ['rewind', sessionId, checkpoint, '--hunk', ids['f.txt']![0]!, '--yes', '--store', project.store]);

    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(project.read('f.txt').toString()).toBe(lines({ 18: 'agent 18' }));
    expect(project.read('g.txt').toString()).toBe('g1\n');
    const output = run.stdout.split('\n');
    expect(output[0]).toBe(`1 hunk rewound to state at message ${checkpoint}`);
    const undo = /^Undo checkpoint: ([0-9a-f-]{36})$/.exec(output[1]!)![1]!;
    expect(output[2]).toBe(`To undo: rewindable rewind ${sessionId} ${undo}`);
    expect(output.slice(4).join('\n')).toBe(['The rewind changed 1 file (+1 -1):', '', 'ACTION   LINES  FILE', 'restore  +1 -1  f.txt', ''].join('\n'));

    const back = await runCli(cli, ['rewind', sessionId, undo, '--yes', '--store', project.store]);
    expect(back.code).toBe(0);
    expect(project.snapshot()).toEqual(atEnd);
  });

  it('hunks of several files at once; --json prints the rewind shape', async () => {
    const { project, sessionId, checkpoint } = await twoHunks();
    const ids = await hunkIds(project.store, sessionId, checkpoint);

    const run = await runCli(cli, ['rewind', sessionId, checkpoint, '--hunk', ids['f.txt']![1]!, '--hunk', ids['g.txt']![0]!, '--yes', '--json', '--store', project.store]);

    expect(run.code).toBe(0);
    const output = rewindOutputSchema.parse(JSON.parse(run.stdout));
    expect(output).toMatchObject({ sessionId, checkpointId: checkpoint, rewound: true, insertions: 2, deletions: 2, skipped: [] });
    expect(output.files.map((file) => [file.path, file.action, file.insertions, file.deletions])).toEqual([
      [project.file('f.txt'), 'restore', 1, 1],
      [project.file('g.txt'), 'restore', 1, 1],
    ]);
    expect(output.undoCheckpointId).toMatch(/^[0-9a-f-]{36}$/);
    expect(project.read('f.txt').toString()).toBe(lines({ 2: 'agent 2' }));
    expect(project.read('g.txt').toString()).toBe('g0\n');
  });

  it('--dry-run previews the files and counts and changes nothing; without a terminal or --yes it exits 1', async () => {
    const { project, sessionId, checkpoint, atEnd } = await twoHunks();
    const ids = await hunkIds(project.store, sessionId, checkpoint);
    const store = snapshotTree(project.store);

    const dry = await runCli(cli, ['rewind', sessionId, checkpoint, '--hunk', ids['f.txt']![1]!, '-n', '--store', project.store]);
    const unconfirmed = await runCli(cli, ['rewind', sessionId, checkpoint, '--hunk', ids['f.txt']![1]!, '--store', project.store], { input: 'y\n' });

    const preview = [`A rewind of 1 hunk to message ${checkpoint} would change 1 file (+1 -1):`, '', 'ACTION   LINES  FILE', 'restore  +1 -1  f.txt', ''].join('\n');
    expect(dry).toEqual({ code: 0, stdout: preview, stderr: '' });
    expect(unconfirmed).toEqual({
      code: 1,
      stdout: preview,
      stderr: 'Nothing was changed: there is no terminal to confirm on. Run again with --yes to rewind, or with --dry-run to only preview.\n',
    });
    expect(project.snapshot()).toEqual(atEnd);
    expect(snapshotTree(project.store)).toEqual(store);
  });

  it('a hunk id gone stale by an edit since the diff fails with 1, says to diff again, and changes nothing', async () => {
    const { project, sessionId, checkpoint } = await twoHunks();
    const ids = await hunkIds(project.store, sessionId, checkpoint);
    project.write('f.txt', lines({ 2: 'agent 2', 10: 'edited by hand', 18: 'agent 18' }));
    const before = project.snapshot();
    const stale = ids['f.txt']![0]!;

    const run = await runCli(cli, ['rewind', sessionId, checkpoint, '--hunk', stale, '--yes', '--store', project.store]);
    const json = await runCli(cli, ['rewind', sessionId, checkpoint, '--hunk', stale, '--yes', '--json', '--store', project.store]);

    const message =
      `Hunk ${stale} is not in what a rewind would change now: its file, or the file at the checkpoint, changed since the diff that showed it. ` +
      `Nothing was changed. Run 'rewindable diff ${sessionId} ${checkpoint}' again and pick from the ids it shows.`;
    expect(run).toEqual({ code: 1, stdout: '', stderr: `error: ${message}\n` });
    expect(json.code).toBe(1);
    expect(errorOutputSchema.parse(JSON.parse(json.stdout))).toEqual({ error: { code: 'HUNK_NOT_FOUND', message } });
    expect(project.snapshot()).toEqual(before);
  });

  it.each([
    [['--on-conflict', 'merge'], '--hunk and --on-conflict merge cannot be combined: a hunk is applied to its file as it is now.'],
    [['--on-conflict=markers'], '--hunk and --on-conflict markers cannot be combined: a hunk is applied to its file as it is now.'],
    [['--path', 'f.txt'], '--hunk and --path cannot be combined: a hunk id names its file.'],
  ])('--hunk with %j is a usage error (exit 2) that changes nothing', async (extra, message) => {
    const { project, sessionId, checkpoint, atEnd } = await twoHunks();
    const ids = await hunkIds(project.store, sessionId, checkpoint);

    const run = await runCli(cli, ['rewind', sessionId, checkpoint, '--hunk', ids['f.txt']![0]!, ...extra, '--yes', '--store', project.store]);

    expect(run).toEqual({
      code: 2,
      stdout: '',
      stderr: `error: ${message}\nUsage: rewindable rewind [SESSION] CHECKPOINT [options]\nRun 'rewindable rewind --help' for its options and examples.\n`,
    });
    expect(project.snapshot()).toEqual(atEnd);
  });

  it.each(['f.txt', '76db366af71a', '76db366af71a-2-2', '76DB366AF71A-0'])('--hunk %j, no hunk id, is a usage error (exit 2)', async (id) => {
    const { project, sessionId, checkpoint, atEnd } = await twoHunks();

    const run = await runCli(cli, ['rewind', sessionId, checkpoint, '--hunk', id, '--yes', '--store', project.store]);

    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`error: --hunk takes a hunk id as rewindable diff shows it after an @@ line, such as 76db366af71a-0; got ${JSON.stringify(id)}.\n`);
    expect(project.snapshot()).toEqual(atEnd);
  });
});
