import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CheckpointManager } from '../../src/index.js';
import { newId, tempProject } from '../helpers/temp-project.js';
import { checkpointsOutputSchema, errorOutputSchema, sessionsOutputSchema } from '../../src/cli/output-schemas.js';
import { buildCli, escapeCode, runCli, type BuiltCli } from './helpers/built-cli.js';
import { scriptedSession } from './helpers/scripted-session.js';

let cli: BuiltCli;

beforeAll(async () => {
  cli = await buildCli();
});
afterAll(() => cli.remove());

describe('rewindable sessions', () => {
  it('lists the sessions of the current directory from the default store (REWINDABLE_HOME), newest first', async () => {
    const { project, sessionId } = await scriptedSession();
    const later = await project.open();
    await later.checkpoint(newId());
    await later.close();

    const run = await runCli(cli, ['sessions'], { cwd: project.root, env: { REWINDABLE_HOME: project.store } });

    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    expect(run.stdout).not.toMatch(escapeCode);
    expect(run.stdout.split('\n')[0]).toBe(`2 sessions of ${project.root}`);
    const rows = run.stdout.split('\n').filter((line) => /^[0-9a-f]{8}-/.test(line));
    expect(rows.map((row) => row.split(/\s+/).slice(0, 3))).toEqual([
      [later.sessionId, '1', '0'],
      [sessionId, '2', '4'],
    ]);
  });

  it('--cwd names the project from anywhere; --json prints the documented shape', async () => {
    const { project, sessionId } = await scriptedSession();

    const run = await runCli(cli, ['sessions', '--cwd', project.root, '--store', project.store, '--json']);

    expect(run.code).toBe(0);
    const output = sessionsOutputSchema.parse(JSON.parse(run.stdout));
    expect(output).toMatchObject({ store: project.store, cwd: project.root, sessions: [{ sessionId, checkpoints: 2, trackedFiles: 4 }] });
    expect(output.sessions[0]!.bytes).toBeGreaterThan(0);
  });

  it('says so when a project has no sessions, and exits 0', async () => {
    const project = tempProject();

    const run = await runCli(cli, ['sessions', '--cwd', project.root, '--store', project.store]);

    expect(run).toEqual({ code: 0, stdout: `No sessions for ${project.root} in the store ${project.store}.\n`, stderr: '' });
  });

  it('fails with 1 for a project directory that does not exist', async () => {
    const project = tempProject();
    const missing = path.join(project.root, 'nowhere');

    const run = await runCli(cli, ['sessions', '--cwd', missing, '--store', project.store, '--json']);

    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`error: The directory ${missing} does not exist.`);
    expect(errorOutputSchema.parse(JSON.parse(run.stdout)).error.code).toBe('CWD_NOT_FOUND');
  });
});

describe('rewindable checkpoints', () => {
  it('lists checkpoints oldest first with time and files, finding the project from the store alone', async () => {
    const { project, sessionId, first, second } = await scriptedSession();

    const run = await runCli(cli, ['checkpoints', sessionId, '--store', project.store]);

    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    const lines = run.stdout.split('\n');
    expect(lines[0]).toBe(`2 checkpoints in session ${sessionId} of ${project.root}`);
    expect(lines[2]).toMatch(/^#\s+CHECKPOINT\s+TIME\s+KIND\s+PROMPT\s+FILES$/);
    expect(lines[3]).toMatch(new RegExp(`^1\\s+${first}\\s+\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d\\s+message\\s+-\\s+src/greet.ts, src/farewell.ts$`));
    expect(lines[4]).toMatch(new RegExp(`^2\\s+${second}\\s+.*message\\s+-\\s+src/greet.ts, src/farewell.ts, README.md \\+1 more$`));
  });

  it('--json prints every checkpoint with absolute file paths, including undo points', async () => {
    const { project, sessionId, first } = await scriptedSession();
    const manager = await project.open({ resume: sessionId });
    const { undoCheckpointId } = await manager.rewindFiles(first);
    await manager.close();

    const run = await runCli(cli, ['checkpoints', sessionId, '--json'], { env: { REWINDABLE_HOME: project.store } });

    expect(run.code).toBe(0);
    const output = checkpointsOutputSchema.parse(JSON.parse(run.stdout));
    expect(output.cwd).toBe(project.root);
    expect(output.checkpoints.map((checkpoint) => [checkpoint.id, checkpoint.reason])).toEqual([
      [first, 'message'],
      [expect.any(String), 'message'],
      [undoCheckpointId, 'pre-rewind'],
    ]);
    expect(output.checkpoints[0]!.files.sort()).toEqual([project.file('src/farewell.ts'), project.file('src/greet.ts')]);
  });

  it('fails with 1 for an unknown session, naming the store', async () => {
    const { project } = await scriptedSession();
    const unknown = newId();

    const run = await runCli(cli, ['checkpoints', unknown, '--store', project.store, '--json']);

    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`error: Session ${unknown} is not in the store ${project.store}.`);
    expect(errorOutputSchema.parse(JSON.parse(run.stdout))).toEqual({ error: { code: 'SESSION_NOT_FOUND', message: expect.stringContaining(unknown) } });
  });

  it('fails with 1 for an id that is not a UUID, naming it', async () => {
    const { project } = await scriptedSession();

    const run = await runCli(cli, ['checkpoints', 'not-a-uuid', '--store', project.store]);

    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('error: "not-a-uuid" is not a valid session id: expected a UUID');
  });

  it('finds a session that a move copied from another machine by the copy whose directory is here', async () => {
    const previousHost = process.env.REWINDABLE_HOST;
    process.env.REWINDABLE_HOST = 'machine-a';
    try {
      const { project, sessionId } = await scriptedSession();
      const moved = `${project.root}-moved`;
      fs.renameSync(project.root, moved);
      process.env.REWINDABLE_HOST = 'machine-b';
      const copy = await CheckpointManager.open({ cwd: moved, storeDir: project.store, resume: sessionId, durability: 'none' });
      await copy.close();

      const run = await runCli(cli, ['checkpoints', sessionId, '--store', project.store]);

      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(run.stdout.split('\n')[0]).toBe(`2 checkpoints in session ${sessionId} of ${moved}`);
    } finally {
      if (previousHost === undefined) delete process.env.REWINDABLE_HOST;
      else process.env.REWINDABLE_HOST = previousHost;
    }
  });

  it('fails with 1 when the session\'s project directory is gone', async () => {
    const { project, sessionId } = await scriptedSession();
    fs.rmSync(project.root, { recursive: true });

    const run = await runCli(cli, ['checkpoints', sessionId, '--store', project.store]);

    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`error: Session ${sessionId} belongs to the project ${project.root}, which no longer exists.`);
  });
});
