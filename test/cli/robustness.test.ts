import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorOutputSchema, rewindOutputSchema, sessionsOutputSchema } from '../../src/cli/output-schemas.js';
import { encodeProjectKey, listSessions, RewindableError } from '../../src/index.js';
import { newId, tempProject } from '../helpers/temp-project.js';
import { buildCli, runCli, runCliClosingStdout, type BuiltCli } from './helpers/built-cli.js';
import { scriptedSession } from './helpers/scripted-session.js';

let cli: BuiltCli;

beforeAll(async () => {
  cli = await buildCli();
});
afterAll(() => cli.remove());

/** The folder of the filesystem store that holds a project's session logs. */
const projectFolder = (store: string, root: string) => path.join(store, 'projects', encodeProjectKey(root));

describe('a reader that closes stdout early', () => {
  it('diff --json | head: the command ends quietly with its own exit code, without a stack trace', async () => {
    const project = tempProject();
    project.write('big.txt', 'at the checkpoint\n');
    const manager = await project.open();
    const checkpoint = await manager.checkpoint(newId());
    await manager.trackEdit('big.txt');
    // A patch of about 400 KiB: far more than a pipe holds, so the CLI writes after the reader is gone.
    project.write('big.txt', Array.from({ length: 20_000 }, (_, line) => `line ${line} the agent wrote\n`).join(''));
    await manager.close();

    const run = await runCliClosingStdout(cli, ['diff', manager.sessionId, checkpoint, '--json', '--store', project.store]);

    expect(run).toEqual({ code: 0, stderr: '' });
  });
});

describe('diff FILE from a directory whose name starts with two dots', () => {
  it('resolves FILE against that directory (it is inside the project), not the project root', async () => {
    const { project, sessionId, first } = await scriptedSession();
    const cache = path.join(project.root, '..cache');
    fs.mkdirSync(cache);

    const run = await runCli(cli, ['diff', sessionId, first, 'src/greet.ts', '--json', '--store', project.store], { cwd: cache });

    // ..cache/src/greet.ts is not tracked: nothing to show. The root's src/greet.ts would have a diff.
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).files).toEqual([]);
  });
});

describe('rewindable sessions', () => {
  it('fails with CWD_NOT_FOUND (exit 1) when --cwd names a regular file', async () => {
    const { project } = await scriptedSession();
    const file = project.file('src/greet.ts');

    const json = await runCli(cli, ['sessions', '--cwd', file, '--store', project.store, '--json']);
    const text = await runCli(cli, ['sessions', '--cwd', file, '--store', project.store]);

    expect(json.code).toBe(1);
    expect(errorOutputSchema.parse(JSON.parse(json.stdout)).error).toEqual({ code: 'CWD_NOT_FOUND', message: `${file} is not a directory. Pass the project directory, not a file in it.` });
    expect(text).toEqual({ code: 1, stdout: '', stderr: `error: ${file} is not a directory. Pass the project directory, not a file in it.\n` });
  });

  it('ignores a file in the store folder that is not named <uuid>.jsonl, and says so on stderr', async () => {
    const { project, sessionId } = await scriptedSession();
    const folder = projectFolder(project.store, project.root);
    fs.copyFileSync(path.join(folder, `${sessionId}.jsonl`), path.join(folder, `${sessionId}.backup.jsonl`));

    const json = await runCli(cli, ['sessions', '--cwd', project.root, '--store', project.store, '--json']);
    const text = await runCli(cli, ['sessions', '--cwd', project.root, '--store', project.store]);
    const library = await listSessions({ cwd: project.root, storeDir: project.store });

    const note = `note: ignored "${sessionId}.backup" in the store's folder of ${project.root}: a session's name is its UUID, so it is not a session.\n`;
    expect(json.code).toBe(0);
    expect(json.stderr).toBe(note);
    expect(sessionsOutputSchema.parse(JSON.parse(json.stdout)).sessions.map((session) => session.sessionId)).toEqual([sessionId]);
    expect(text.code).toBe(0);
    expect(text.stderr).toBe(note);
    expect(text.stdout.split('\n')[0]).toBe(`1 session of ${project.root}`);
    expect(library.map((session) => session.sessionId)).toEqual([sessionId]);
  });

  it('lists a session whose log is damaged, marked damaged with the LOG_CORRUPT message, instead of hiding it', async () => {
    const { project, sessionId } = await scriptedSession();
    const log = path.join(projectFolder(project.store, project.root), `${sessionId}.jsonl`);
    const lines = fs.readFileSync(log, 'utf8').split('\n');
    lines[1] = lines[1]!.replace('"type"', '"tipe"'); // the second line no longer matches its checksum
    fs.writeFileSync(log, lines.join('\n'));

    const json = await runCli(cli, ['sessions', '--cwd', project.root, '--store', project.store, '--json']);
    const text = await runCli(cli, ['sessions', '--cwd', project.root, '--store', project.store]);
    const library = await listSessions({ cwd: project.root, storeDir: project.store });

    expect(json.code).toBe(0);
    const [listed] = sessionsOutputSchema.parse(JSON.parse(json.stdout)).sessions;
    expect(listed).toMatchObject({ sessionId, checkpoints: 0, trackedFiles: 0, damaged: { code: 'LOG_CORRUPT', message: expect.stringContaining(log) } });
    expect(listed!.createdAt).toBe(listed!.lastActivity);
    expect(json.stderr).toBe(`note: session ${sessionId} is damaged: ${listed!.damaged!.message}\n`);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(new RegExp(`^${sessionId}\\s+damaged \\(LOG_CORRUPT\\)\\s+-\\s+\\d{4}-`, 'm'));
    expect(text.stderr).toBe(json.stderr);
    expect(library).toMatchObject([{ sessionId, damaged: { code: 'LOG_CORRUPT', message: listed!.damaged!.message } }]);
  });
});

describe('a store that is not a directory', () => {
  it('every command fails with STORE_IO, and a message that says to point the store at a directory', async () => {
    const { project, sessionId } = await scriptedSession();
    const file = path.join(project.outside, 'not-a-directory');
    fs.writeFileSync(file, 'x');

    for (const args of [['sessions', '--cwd', project.root], ['checkpoints', sessionId], ['diff', sessionId, newId()], ['rewind', sessionId, newId(), '--yes'], ['gc']]) {
      const run = await runCli(cli, [...args, '--store', file, '--json']);

      expect(run.code, args[0]).toBe(1);
      const { error } = errorOutputSchema.parse(JSON.parse(run.stdout));
      expect(error.code, args[0]).toBe('STORE_IO');
      expect(error.message, args[0]).toMatch(/ENOTDIR.*point the store .* at a directory/);
      expect(run.stderr, args[0]).not.toMatch(/unexpected failure|\n\s+at /);
    }
    const listing = await listSessions({ cwd: project.root, storeDir: file }).catch((error: unknown) => error);
    expect(RewindableError.isInstance(listing) && listing.code).toBe('STORE_IO');
  });
});

describe('rewind when every path that differs is left alone', () => {
  it('says nothing was rewound and why, exits 1, and reports notRewoundBecause "all-left-alone"', async () => {
    const project = tempProject();
    project.write('notes.txt', 'original\n');
    const manager = await project.open();
    const checkpoint = await manager.checkpoint(newId());
    await manager.tools.write({ file_path: 'notes.txt', content: 'agent edit\n' });
    await manager.close();
    fs.rmSync(path.join(project.store, 'blobs', 'packs', encodeProjectKey(project.root), `${manager.sessionId}.pack`)); // the only backup of notes.txt

    const text = await runCli(cli, ['rewind', manager.sessionId, checkpoint, '--yes', '--store', project.store]);
    const json = await runCli(cli, ['rewind', manager.sessionId, checkpoint, '--yes', '--json', '--store', project.store]);
    const dryRun = await runCli(cli, ['rewind', manager.sessionId, checkpoint, '--dry-run', '--store', project.store]);

    expect(text.code).toBe(1);
    expect(text.stdout).not.toContain('already match');
    expect(text.stdout.split('\n').slice(0, 4)).toEqual([
      `Nothing rewound: 1 tracked file cannot be put back as at message ${checkpoint} and was left alone.`,
      '',
      'Left alone (1):',
      expect.stringMatching(/notes\.txt was left alone: its backup \w+ is missing from the store\.$/),
    ]);
    expect(json.code).toBe(1);
    expect(rewindOutputSchema.parse(JSON.parse(json.stdout))).toMatchObject({
      rewound: false,
      notRewoundBecause: 'all-left-alone',
      files: [],
      skipped: [{ path: project.file('notes.txt'), reason: 'backup-unreadable' }],
    });
    expect(dryRun.code).toBe(0);
    expect(dryRun.stdout.split('\n')[0]).toBe(`A rewind would change nothing: 1 tracked file cannot be put back as at message ${checkpoint} and would be left alone.`);
    expect(project.read('notes.txt').toString()).toBe('agent edit\n');
  });
});
