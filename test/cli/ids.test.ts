import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkpointsOutputSchema, diffOutputSchema, errorOutputSchema, rewindOutputSchema, sessionsOutputSchema } from '../../src/cli/output-schemas.js';
import { newId, tempProject, type TempProject } from '../helpers/temp-project.js';
import { buildCli, runCli, type BuiltCli } from './helpers/built-cli.js';

let cli: BuiltCli;

beforeAll(async () => {
  cli = await buildCli();
});
afterAll(() => cli.remove());

/** A UUID that starts with `prefix` (hex, at most 8 characters). */
const idStartingWith = (prefix: string): string => prefix + newId().slice(prefix.length);

/** A closed session of one turn: `notes.txt` goes from "before" to "after"; the checkpoint holds "before". */
async function oneTurn(project: TempProject, ids: { sessionId?: string; checkpoint?: string } = {}): Promise<{ sessionId: string; checkpoint: string }> {
  project.write('notes.txt', 'before\n');
  const manager = await project.open(ids.sessionId !== undefined ? { sessionId: ids.sessionId } : {});
  const checkpoint = await manager.checkpoint(ids.checkpoint ?? newId());
  await manager.trackEdit('notes.txt');
  project.write('notes.txt', 'after\n');
  await manager.close();
  return { sessionId: manager.sessionId, checkpoint };
}

describe('ids may be shortened to a unique prefix of 4 characters or more', () => {
  it('accepts a unique prefix of a session id and of a checkpoint id wherever the whole id is taken', async () => {
    const project = tempProject();
    const { sessionId, checkpoint } = await oneTurn(project);
    const env = { REWINDABLE_HOME: project.store };

    const listed = await runCli(cli, ['checkpoints', sessionId.slice(0, 4), '--json'], { env });
    const diffed = await runCli(cli, ['diff', sessionId.slice(0, 6), checkpoint.slice(0, 5), '--json'], { env });
    const rewound = await runCli(cli, ['rewind', sessionId.slice(0, 8).toUpperCase(), checkpoint.slice(0, 4), '--yes', '--json'], { env });

    expect(checkpointsOutputSchema.parse(JSON.parse(listed.stdout))).toMatchObject({ sessionId, checkpoints: [{ id: checkpoint }] });
    expect(diffOutputSchema.parse(JSON.parse(diffed.stdout))).toMatchObject({ sessionId, checkpointId: checkpoint, files: [{ path: project.file('notes.txt') }] });
    expect(rewindOutputSchema.parse(JSON.parse(rewound.stdout))).toMatchObject({ sessionId, checkpointId: checkpoint, rewound: true });
    expect(fs.readFileSync(project.file('notes.txt'), 'utf8')).toBe('before\n');
  });

  it('unlock takes a unique prefix of a session id too', async () => {
    const project = tempProject();
    const { sessionId } = await oneTurn(project);

    const run = await runCli(cli, ['unlock', sessionId.slice(0, 4), '--store', project.store]);

    expect(run).toEqual({ code: 0, stdout: `Session ${sessionId} is not locked.\n`, stderr: '' });
  });

  it('refuses a prefix shorter than 4 characters, and one that is no id, with INVALID_ID', async () => {
    const project = tempProject();
    const { sessionId } = await oneTurn(project);

    const short = await runCli(cli, ['checkpoints', sessionId.slice(0, 3), '--store', project.store, '--json']);
    const notHex = await runCli(cli, ['checkpoints', 'latest', '--store', project.store]);

    expect(short.code).toBe(1);
    expect(short.stderr).toBe(`error: "${sessionId.slice(0, 3)}" is too short for a session id: give at least 4 of its characters, or the whole UUID.\n`);
    expect(errorOutputSchema.parse(JSON.parse(short.stdout)).error.code).toBe('INVALID_ID');
    expect(notHex.code).toBe(1);
    expect(notHex.stderr).toContain('error: "latest" is not a valid session id');
  });

  it('refuses, with INVALID_ID, hex that cannot start a UUID: a hyphen out of place, or none where the UUID has one', async () => {
    const project = tempProject();
    const { checkpoint } = await oneTurn(project);

    for (const typed of [`${checkpoint.slice(0, 4)}-${checkpoint.slice(4, 8)}`, checkpoint.slice(0, 8) + checkpoint.slice(9, 13)]) {
      const run = await runCli(cli, ['diff', typed, '--store', project.store, '--json'], { cwd: project.root });
      expect(run.code, typed).toBe(1);
      expect(errorOutputSchema.parse(JSON.parse(run.stdout)).error.code, typed).toBe('INVALID_ID');
    }
  });

  it('names the candidates of an ambiguous session prefix, as git does, and exits with 2', async () => {
    const project = tempProject();
    const one = await oneTurn(project, { sessionId: idStartingWith('abcd1') });
    const other = await oneTurn(project, { sessionId: idStartingWith('abcd2') });

    const run = await runCli(cli, ['checkpoints', 'abcd', '--store', project.store]);

    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(
      [
        'error: Session id abcd is ambiguous: it is the start of 2 sessions:',
        ...[one.sessionId, other.sessionId].sort().map((id) => `  ${id}  ${project.root}`),
        'Give more of its characters.',
        'Usage: rewindable checkpoints SESSION [options]',
        "Run 'rewindable checkpoints --help' for its options and examples.",
        '',
      ].join('\n'),
    );
    expect((await runCli(cli, ['checkpoints', 'abcd1', '--store', project.store])).code).toBe(0);
  });

  it('names the candidates of an ambiguous checkpoint prefix within the session', async () => {
    const project = tempProject();
    const first = idStartingWith('feed1');
    const second = idStartingWith('feed2');
    const manager = await project.open();
    await manager.checkpoint(first);
    await manager.checkpoint(second);
    await manager.close();

    const run = await runCli(cli, ['diff', manager.sessionId, 'feed', '--store', project.store]);

    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`error: Checkpoint id feed is ambiguous: it is the start of 2 checkpoints of session ${manager.sessionId}:\n  ${first}  message\n  ${second}  message\n`);
  });

  it('fails with SESSION_NOT_FOUND or CHECKPOINT_NOT_FOUND for a prefix nothing starts with', async () => {
    const project = tempProject();
    const { sessionId } = await oneTurn(project, { sessionId: idStartingWith('1234') });

    const noSession = await runCli(cli, ['checkpoints', 'ffff', '--store', project.store, '--json']);
    const noCheckpoint = await runCli(cli, ['rewind', sessionId, '0000', '--yes', '--store', project.store, '--json']);

    expect(noSession.code).toBe(1);
    expect(noSession.stderr).toContain(`error: No session id starting with ffff is in the store ${project.store}.`);
    expect(errorOutputSchema.parse(JSON.parse(noSession.stdout)).error.code).toBe('SESSION_NOT_FOUND');
    expect(noCheckpoint.code).toBe(1);
    expect(noCheckpoint.stderr).toContain(`error: No checkpoint id starting with 0000 is in session ${sessionId}.`);
    expect(errorOutputSchema.parse(JSON.parse(noCheckpoint.stdout)).error.code).toBe('CHECKPOINT_NOT_FOUND');
  });
});

describe('a checkpoint id alone finds its session', () => {
  it('rewind CHECKPOINT and diff CHECKPOINT find the session in the store, from anywhere', async () => {
    const project = tempProject();
    const { sessionId, checkpoint } = await oneTurn(project);
    const env = { REWINDABLE_HOME: project.store };

    const diffed = await runCli(cli, ['diff', checkpoint.slice(0, 6), '--json'], { env, cwd: project.outside });
    const rewound = await runCli(cli, ['rewind', checkpoint, '--yes'], { env, cwd: project.outside });

    expect(diffOutputSchema.parse(JSON.parse(diffed.stdout))).toMatchObject({ sessionId, checkpointId: checkpoint, cwd: project.root });
    expect(rewound.code).toBe(0);
    expect(rewound.stdout.split('\n').slice(0, 3)).toEqual([
      `Files rewound to state at message ${checkpoint}`,
      expect.stringMatching(/^Undo checkpoint: [0-9a-f-]{36}$/),
      expect.stringMatching(new RegExp(`^To undo: rewindable rewind ${sessionId} [0-9a-f-]{36}$`)),
    ]);
    expect(fs.readFileSync(project.file('notes.txt'), 'utf8')).toBe('before\n');
  });

  it('diff CHECKPOINT FILE takes FILE as a file, and diff SESSION CHECKPOINT as the session', async () => {
    const project = tempProject();
    project.write('other.txt', 'one\n');
    const manager = await project.open();
    const checkpoint = await manager.checkpoint(newId());
    await manager.trackEdit('notes.txt');
    project.write('notes.txt', 'new\n');
    await manager.trackEdit('other.txt');
    project.write('other.txt', 'two\n');
    await manager.close();

    const byFile = await runCli(cli, ['diff', checkpoint, 'other.txt', '--json'], { env: { REWINDABLE_HOME: project.store }, cwd: project.root });
    const bySession = await runCli(cli, ['diff', manager.sessionId.slice(0, 8), checkpoint, '--json'], { env: { REWINDABLE_HOME: project.store }, cwd: project.root });

    expect(diffOutputSchema.parse(JSON.parse(byFile.stdout)).files.map((file) => file.path)).toEqual([project.file('other.txt')]);
    expect(diffOutputSchema.parse(JSON.parse(bySession.stdout)).files.map((file) => file.path)).toEqual([project.file('notes.txt'), project.file('other.txt')]);
  });

  it('prefers the sessions of the project of the current directory, and with --cwd searches only that project', async () => {
    const here = tempProject();
    const elsewhere = tempProject();
    const shared = idStartingWith('cafe1');
    const ours = await oneTurn(here, { checkpoint: shared });
    const theirs = await oneTurn(elsewhere, { checkpoint: idStartingWith('cafe2') });
    fs.cpSync(elsewhere.store, here.store, { recursive: true });
    const env = { REWINDABLE_HOME: here.store };

    const fromHere = await runCli(cli, ['diff', 'cafe', '--json'], { env, cwd: here.file('.') });
    const fromOutside = await runCli(cli, ['diff', 'cafe', '--json'], { env, cwd: here.outside });
    const withCwd = await runCli(cli, ['diff', 'cafe', '--cwd', elsewhere.root, '--json'], { env, cwd: here.root });

    expect(diffOutputSchema.parse(JSON.parse(fromHere.stdout))).toMatchObject({ sessionId: ours.sessionId, checkpointId: shared });
    expect(fromOutside.code).toBe(2);
    expect(fromOutside.stderr).toContain('error: Checkpoint id cafe is in 2 sessions:\n');
    expect(fromOutside.stderr).toContain(`  session ${ours.sessionId} (${here.root}): ${shared}\n`);
    expect(fromOutside.stderr).toContain(`  session ${theirs.sessionId} (${elsewhere.root}): ${theirs.checkpoint}\n`);
    expect(fromOutside.stderr).toContain('Name the session: rewindable diff SESSION cafe\n');
    expect(diffOutputSchema.parse(JSON.parse(withCwd.stdout))).toMatchObject({ sessionId: theirs.sessionId, checkpointId: theirs.checkpoint });
  });

  it('fails with CHECKPOINT_NOT_FOUND when no session of the store has the checkpoint', async () => {
    const project = tempProject();
    await oneTurn(project);
    const unknown = newId();

    const run = await runCli(cli, ['rewind', unknown, '--yes', '--json'], { env: { REWINDABLE_HOME: project.store } });

    expect(run.code).toBe(1);
    expect(run.stderr).toBe(`error: Checkpoint ${unknown} is not in any session of the store ${project.store}. List a session's checkpoints with "rewindable checkpoints SESSION".\n`);
    expect(errorOutputSchema.parse(JSON.parse(run.stdout)).error.code).toBe('CHECKPOINT_NOT_FOUND');
  });
});

describe('rewindable sessions from a subdirectory', () => {
  it('walks up, as git does, to the nearest directory that is a project with sessions', async () => {
    const project = tempProject();
    project.write('src/deep/file.txt', 'x\n');
    const { sessionId } = await oneTurn(project);

    const run = await runCli(cli, ['sessions', '--json'], { env: { REWINDABLE_HOME: project.store }, cwd: project.file('src/deep') });
    const withCwd = await runCli(cli, ['sessions', '--cwd', project.file('src'), '--json'], { env: { REWINDABLE_HOME: project.store } });

    expect(sessionsOutputSchema.parse(JSON.parse(run.stdout))).toMatchObject({ cwd: project.root, sessions: [{ sessionId }] });
    expect(sessionsOutputSchema.parse(JSON.parse(withCwd.stdout))).toMatchObject({ cwd: project.root, sessions: [{ sessionId }] });
  });

  it('lists the directory itself when no directory above it is a project with sessions', async () => {
    const project = tempProject();
    project.write('src/file.txt', 'x\n');

    const run = await runCli(cli, ['sessions'], { env: { REWINDABLE_HOME: project.store }, cwd: project.file('src') });

    expect(run).toEqual({ code: 0, stdout: `No sessions for ${project.file('src')} in the store ${project.store}.\n`, stderr: '' });
  });
});
