import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rewindOutputSchema } from '../../src/cli/output-schemas.js';
import { newId, snapshotTree, tempProject } from '../helpers/temp-project.js';
import { toolWrite } from '../helpers/tool-write.js';
import { buildCli, canRunInTerminal, runCli, runCliInTerminal, type BuiltCli } from './helpers/built-cli.js';

let cli: BuiltCli;

beforeAll(async () => {
  cli = await buildCli();
});
afterAll(() => cli.remove());

/** Ten numbered lines; `edits` replaces some of them. */
function lines(edits: Record<number, string> = {}): string {
  return Array.from({ length: 10 }, (_, index) => `${edits[index + 1] ?? `line ${index + 1}`}\n`).join('');
}

/**
 * A closed session of two turns. Turn one edits line 2 of f.txt, changes
 * g.txt and creates new.txt; turn two edits line `secondLine` of f.txt:
 * line 2 makes the two turns conflict.
 */
async function twoTurns(secondLine = 8) {
  const project = tempProject();
  project.write('f.txt', lines());
  project.write('g.txt', 'g0\n');
  const manager = await project.open();
  const first = await manager.checkpoint(newId());
  await toolWrite(manager, project, 'f.txt', lines({ 2: 'first turn' }));
  await toolWrite(manager, project, 'g.txt', 'g1\n');
  await toolWrite(manager, project, 'new.txt', 'created\n');
  const second = await manager.checkpoint(newId());
  await toolWrite(manager, project, 'f.txt', lines({ 2: secondLine === 2 ? 'second turn' : 'first turn', [secondLine]: 'second turn' }));
  await manager.close();
  return { project, sessionId: manager.sessionId, first, second, atEnd: project.snapshot() };
}

describe('rewindable revert', () => {
  it('reverts the first of two turns and keeps the second turn’s edit; the undo command puts everything back', async () => {
    const { project, sessionId, first, atEnd } = await twoTurns();

    const run = await runCli(cli, ['revert', sessionId.slice(0, 8), first.slice(0, 8), '--yes'], { env: { REWINDABLE_HOME: project.store } });

    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(project.read('f.txt').toString()).toBe(lines({ 8: 'second turn' }));
    expect(project.read('g.txt').toString()).toBe('g0\n');
    expect(project.exists('new.txt')).toBe(false);
    const output = run.stdout.split('\n');
    expect(output[0]).toBe(`Reverted the file changes of the turn of message ${first}`);
    const undo = /^Undo checkpoint: ([0-9a-f-]{36})$/.exec(output[1]!)![1]!;
    expect(output[2]).toBe(`To undo: rewindable rewind ${sessionId} ${undo}`);
    expect(output.slice(4).join('\n')).toBe(
      [
        'The revert changed 3 files (+2 -3):',
        '',
        'ACTION   LINES  FILE     NOTE',
        'restore  +1 -1  f.txt    merged',
        'restore  +1 -1  g.txt',
        'delete   +0 -1  new.txt',
        '',
      ].join('\n'),
    );

    const back = await runCli(cli, ['rewind', sessionId, undo, '--yes'], { env: { REWINDABLE_HOME: project.store } });
    expect(back.code).toBe(0);
    expect(project.snapshot()).toEqual(atEnd);
  });

  it('--yes --json prints the rewind shape, with the merge of each merged file', async () => {
    const { project, sessionId, first } = await twoTurns();

    const run = await runCli(cli, ['revert', first, '--yes', '--json', '--store', project.store], { cwd: project.root });

    expect(run.code).toBe(0);
    const output = rewindOutputSchema.parse(JSON.parse(run.stdout));
    expect(output).toMatchObject({ sessionId, checkpointId: first, cwd: project.root, rewound: true, insertions: 2, deletions: 3, skipped: [], conflicts: [] });
    expect(output.files.map((file) => [file.path, file.action, file.merge])).toEqual([
      [project.file('f.txt'), 'restore', { status: 'clean', conflicts: [] }],
      [project.file('g.txt'), 'restore', undefined],
      [project.file('new.txt'), 'delete', undefined],
    ]);
    expect(output.undoCheckpointId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('--dry-run shows the plan and changes nothing; its JSON has the merged text', async () => {
    const { project, sessionId, first, atEnd } = await twoTurns();
    const store = snapshotTree(project.store);

    const text = await runCli(cli, ['revert', sessionId, first, '--dry-run', '--store', project.store]);
    const json = await runCli(cli, ['revert', sessionId, first, '-n', '--json', '--store', project.store]);

    expect(text).toEqual({
      code: 0,
      stdout: [
        `A revert of the turn of message ${first} would change 3 files (+2 -3):`,
        '',
        'ACTION   LINES  FILE     NOTE',
        'restore  +1 -1  f.txt    merged',
        'restore  +1 -1  g.txt',
        'delete   +0 -1  new.txt',
        '',
      ].join('\n'),
      stderr: '',
    });
    const output = rewindOutputSchema.parse(JSON.parse(json.stdout));
    expect(output).toMatchObject({ rewound: false, notRewoundBecause: 'dry-run' });
    expect(output.files[0]!.merge).toEqual({ status: 'clean', conflicts: [], preview: lines({ 8: 'second turn' }) });
    expect(project.snapshot()).toEqual(atEnd);
    expect(snapshotTree(project.store)).toEqual(store);
  });

  it('without a terminal and without --yes: shows the preview, changes nothing, exits 1', async () => {
    const { project, sessionId, first, atEnd } = await twoTurns();

    const run = await runCli(cli, ['revert', sessionId, first, '--store', project.store], { input: 'y\n' });

    expect(run.code).toBe(1);
    expect(run.stdout.split('\n')[0]).toBe(`A revert of the turn of message ${first} would change 3 files (+2 -3):`);
    expect(run.stderr).toBe('Nothing was changed: there is no terminal to confirm on. Run again with --yes to revert, or with --dry-run to only preview.\n');
    expect(project.snapshot()).toEqual(atEnd);
  });

  it('a conflicting file is left alone and listed with its line; the other files are reverted, exit 0', async () => {
    const { project, sessionId, first, atEnd } = await twoTurns(2);

    const text = await runCli(cli, ['revert', sessionId, first, '--dry-run', '--store', project.store]);
    const run = await runCli(cli, ['revert', sessionId, first, '--yes', '--json', '--store', project.store]);

    expect(text.code).toBe(0);
    expect(text.stdout).toBe(
      [
        `A revert of the turn of message ${first} would change 2 files (+1 -2):`,
        '',
        'ACTION   LINES  FILE',
        'restore  +1 -1  g.txt',
        'delete   +0 -1  new.txt',
        '',
        'Left alone (1):',
        '  f.txt was left alone: conflict at line 2 with later edits.',
        '',
      ].join('\n'),
    );
    expect(run.code).toBe(0);
    const output = rewindOutputSchema.parse(JSON.parse(run.stdout));
    expect(output).toMatchObject({ rewound: true, conflicts: [project.file('f.txt')] });
    expect(output.skipped).toEqual([
      {
        path: project.file('f.txt'),
        reason: 'merge-conflict',
        message: expect.stringContaining('conflicts with later edits'),
        merge: { status: 'conflict', conflicts: [{ current: { start: 2, count: 1 }, base: { start: 2, count: 1 }, restored: { start: 2, count: 1 } }] },
      },
    ]);
    expect(project.snapshot()['f.txt']).toBe(atEnd['f.txt']);
    expect(project.read('g.txt').toString()).toBe('g0\n');
  });

  it('when every file it would change conflicts, nothing is written and it exits 1', async () => {
    const project = tempProject();
    project.write('f.txt', lines());
    const manager = await project.open();
    const first = await manager.checkpoint(newId());
    await toolWrite(manager, project, 'f.txt', lines({ 5: 'first' }));
    await manager.checkpoint(newId());
    await toolWrite(manager, project, 'f.txt', lines({ 5: 'second', 6: 'second' }));
    await manager.close();
    const before = project.snapshot();

    const run = await runCli(cli, ['revert', manager.sessionId, first, '--yes', '--store', project.store]);
    const json = await runCli(cli, ['revert', manager.sessionId, first, '--yes', '--json', '--store', project.store]);

    expect(run.code).toBe(1);
    expect(run.stdout).toBe(
      [
        `Nothing reverted: 1 tracked file cannot have the turn of message ${first} undone and was left alone.`,
        '',
        'Left alone (1):',
        '  f.txt was left alone: conflict at lines 5–6 with later edits.',
        '',
      ].join('\n'),
    );
    expect(json.code).toBe(1);
    expect(rewindOutputSchema.parse(JSON.parse(json.stdout))).toMatchObject({ rewound: false, notRewoundBecause: 'all-left-alone' });
    expect(project.snapshot()).toEqual(before);
  });

  it('--on-conflict markers writes the conflict with markers and says so', async () => {
    const { project, sessionId, first } = await twoTurns(2);

    const run = await runCli(cli, ['revert', sessionId, first, '--on-conflict', 'markers', '--yes', '--store', project.store]);

    expect(run.code).toBe(0);
    expect(run.stdout).toContain('restore  +6 -0  f.txt    conflict at line 2 (with conflict markers)\n');
    const label = first.slice(0, 8);
    expect(project.read('f.txt').toString()).toBe(
      lines({ 2: `<<<<<<< current\nsecond turn\n||||||| after turn ${label}\nfirst turn\n=======\nline 2\n>>>>>>> before turn ${label}` }),
    );
  });

  it('--on-conflict overwrite puts back the version from before the turn', async () => {
    const { project, sessionId, first } = await twoTurns(2);

    const run = await runCli(cli, ['revert', sessionId, first, '--on-conflict=overwrite', '--yes', '--store', project.store]);

    expect(run.code).toBe(0);
    expect(run.stdout).toContain('restore  +1 -1  f.txt    conflict at line 2 (later edits discarded)\n');
    expect(project.read('f.txt').toString()).toBe(lines());
  });

  it('--path reverts only the files named', async () => {
    const { project, sessionId, first, atEnd } = await twoTurns();

    const run = await runCli(cli, ['revert', sessionId, first, '--path', 'g.txt', '--yes', '--json', '--store', project.store]);

    expect(run.code).toBe(0);
    expect(rewindOutputSchema.parse(JSON.parse(run.stdout)).files.map((file) => file.path)).toEqual([project.file('g.txt')]);
    expect(project.read('g.txt').toString()).toBe('g0\n');
    expect(project.snapshot()['f.txt']).toBe(atEnd['f.txt']);
    expect(project.exists('new.txt')).toBe(true);
  });

  it.each([
    [['revert', '--on-conflict', 'merge'], 'Option --on-conflict takes skip, markers or overwrite; got "merge".', 'revert'],
    [['revert', '--on-conflict=theirs'], 'Option --on-conflict takes skip, markers or overwrite; got "theirs".', 'revert'],
    [['rewind', '--on-conflict', 'ours'], 'Option --on-conflict takes overwrite, skip, merge or markers; got "ours".', 'rewind'],
    [['revert', '-n', '-y'], '--dry-run and --yes contradict each other: pick one.', 'revert'],
  ])('%j is a usage error (exit 2) that changes nothing', async (args, message, command) => {
    const { project, sessionId, first, atEnd } = await twoTurns();

    const run = await runCli(cli, [args[0]!, sessionId, first, ...args.slice(1), '--store', project.store]);

    expect(run).toEqual({
      code: 2,
      stdout: '',
      stderr: `error: ${message}\nUsage: rewindable ${command} [SESSION] CHECKPOINT [options]\nRun 'rewindable ${command} --help' for its options and examples.\n`,
    });
    expect(project.snapshot()).toEqual(atEnd);
  });
});

describe('rewindable rewind --on-conflict', () => {
  /** A closed session whose tool wrote line 2 of f.txt after the checkpoint; then someone else edited line `otherLine`. */
  async function editedAfterTheAgent(otherLine: number) {
    const project = tempProject();
    project.write('f.txt', lines());
    const manager = await project.open();
    const checkpoint = await manager.checkpoint(newId());
    await toolWrite(manager, project, 'f.txt', lines({ 2: 'agent' }));
    await manager.close();
    project.write('f.txt', lines({ 2: 'agent', [otherLine]: 'user' }));
    return { project, sessionId: manager.sessionId, checkpoint, before: project.snapshot() };
  }

  it('merge undoes the agent’s edit and keeps the other one', async () => {
    const { project, sessionId, checkpoint } = await editedAfterTheAgent(9);

    const run = await runCli(cli, ['rewind', sessionId, checkpoint, '--on-conflict', 'merge', '--yes', '--store', project.store]);

    expect(run.code).toBe(0);
    expect(run.stdout).toContain('restore  +1 -1  f.txt  merged\n');
    expect(project.read('f.txt').toString()).toBe(lines({ 9: 'user' }));
  });

  it('merge leaves a file whose edits overlap alone, listed with the lines; markers writes it with markers', async () => {
    const { project, sessionId, checkpoint, before } = await editedAfterTheAgent(3);

    const merge = await runCli(cli, ['rewind', sessionId, checkpoint, '--on-conflict', 'merge', '--yes', '--store', project.store]);
    expect(merge.code).toBe(1);
    expect(merge.stdout).toBe(
      [
        `Nothing rewound: 1 tracked file cannot be put back as at message ${checkpoint} and was left alone.`,
        '',
        'Left alone (1):',
        '  f.txt was left alone: conflict at lines 2–3 with later edits.',
        '',
      ].join('\n'),
    );
    expect(project.snapshot()).toEqual(before);

    const markers = await runCli(cli, ['rewind', sessionId, checkpoint, '--on-conflict', 'markers', '--yes', '--json', '--store', project.store]);
    expect(markers.code).toBe(0);
    const output = rewindOutputSchema.parse(JSON.parse(markers.stdout));
    expect(output.files[0]).toMatchObject({ path: project.file('f.txt'), merge: { status: 'conflict', conflicts: [{ current: { start: 2, count: 2 } }] } });
    expect(project.read('f.txt').toString()).toContain('<<<<<<< current\nagent\nuser\n');
  });

  it('skip leaves the edited file alone; overwrite (the default) discards the other edit', async () => {
    const { project, sessionId, checkpoint, before } = await editedAfterTheAgent(9);

    const skip = await runCli(cli, ['rewind', sessionId, checkpoint, '--on-conflict', 'skip', '--yes', '--json', '--store', project.store]);
    expect(skip.code).toBe(1);
    expect(rewindOutputSchema.parse(JSON.parse(skip.stdout)).skipped).toMatchObject([{ path: project.file('f.txt'), reason: 'conflict' }]);
    expect(project.snapshot()).toEqual(before);

    const overwrite = await runCli(cli, ['rewind', sessionId, checkpoint, '--yes', '--store', project.store]);
    expect(overwrite.code).toBe(0);
    expect(overwrite.stdout).toContain('restore  +2 -2  f.txt  changed since the agent last wrote it\n');
    expect(project.read('f.txt').toString()).toBe(lines());
  });
});

describe.skipIf(!canRunInTerminal)('rewindable revert on a terminal', () => {
  it('asks before reverting; "y" reverts', async () => {
    const { project, sessionId, first } = await twoTurns();

    const run = await runCliInTerminal(cli, ['revert', sessionId, first, '--store', project.store], { input: 'y\n', env: { NO_COLOR: '1' } });

    expect(run.code).toBe(0);
    expect(run.output).toContain('Revert 3 files? [y/N] ');
    expect(run.output).toContain(`Reverted the file changes of the turn of message ${first}\n`);
    expect(project.read('f.txt').toString()).toBe(lines({ 8: 'second turn' }));
  });

  it('any other answer cancels: nothing changes, exit 1', async () => {
    const { project, sessionId, first, atEnd } = await twoTurns();

    const run = await runCliInTerminal(cli, ['revert', sessionId, first, '--store', project.store], { input: 'n\n', env: { NO_COLOR: '1' } });

    expect(run.code).toBe(1);
    expect(run.output).toContain('Revert cancelled; nothing was changed.');
    expect(fs.existsSync(project.file('new.txt'))).toBe(true);
    expect(project.snapshot()).toEqual(atEnd);
  });
});
