import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { diffOutputSchema, errorOutputSchema } from '../../src/cli/output-schemas.js';
import { newId } from '../helpers/temp-project.js';
import { buildCli, escapeCode, runCli, type BuiltCli } from './helpers/built-cli.js';
import { holdSession } from './helpers/locked-session.js';
import { scriptedSession } from './helpers/scripted-session.js';

let cli: BuiltCli;

beforeAll(async () => {
  cli = await buildCli();
});
afterAll(() => cli.remove());

describe('rewindable diff', () => {
  it('prints the unified diffs of what a rewind would change, and a summary', async () => {
    const { project, sessionId, first } = await scriptedSession();

    const run = await runCli(cli, ['diff', sessionId, first, '--store', project.store]);

    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    expect(run.stdout).not.toMatch(escapeCode);
    expect(run.stdout).toBe(
      [
        'diff --git a/README.md b/README.md',
        'new file mode 100644',
        'index 0000000..623001c',
        '--- /dev/null',
        '+++ b/README.md',
        '@@ -0,0 +1,3 @@',
        '+# demo',
        '+',
        '+A project an agent works on.',
        'diff --git a/run.sh b/run.sh',
        'old mode 100755',
        'new mode 100644',
        'diff --git a/src/farewell.ts b/src/farewell.ts',
        'deleted file mode 100644',
        'index e66eb69..0000000',
        '--- a/src/farewell.ts',
        '+++ /dev/null',
        '@@ -1 +0,0 @@',
        '-export const farewell = (name: string) => `Bye, ${name}`;',
        'diff --git a/src/greet.ts b/src/greet.ts',
        'index 4324f1e..14c2e24 100644',
        '--- a/src/greet.ts',
        '+++ b/src/greet.ts',
        '@@ -1,3 +1,3 @@',
        ' export function greet(name: string) {',
        '-  return `Hello, ${name}!`;',
        '+  return `Hello, ${name}`;',
        ' }',
        '',
        '4 files would change, 4 insertions(+), 2 deletions(-)',
        '',
      ].join('\n'),
    );
  });

  it('--json prints every file with its patch and the exact statistics of the dry run', async () => {
    const { project, sessionId, second } = await scriptedSession();
    const manager = await project.open({ resume: sessionId, readOnly: true });
    const preview = await manager.rewindFiles(second, { dryRun: true });
    await manager.close();

    const run = await runCli(cli, ['diff', sessionId, second, '--json'], { env: { REWINDABLE_HOME: project.store } });

    expect(run.code).toBe(0);
    const output = diffOutputSchema.parse(JSON.parse(run.stdout));
    expect(output).toMatchObject({ sessionId, checkpointId: second, cwd: project.root, insertions: preview.insertions, deletions: preview.deletions });
    expect(output.files.map((file) => file.action !== 'skip' && [file.path, file.action, file.insertions, file.deletions])).toEqual(
      preview.files!.map((file) => [file.path, file.action, file.insertions, file.deletions]),
    );
    expect(output.files[0]).toMatchObject({ path: project.file('README.md'), action: 'recreate', patch: expect.stringContaining('+A project an agent works on.\n') });
  });

  it('FILE arguments limit the diff, relative to the current directory inside the project', async () => {
    const { project, sessionId, first } = await scriptedSession();

    const fromRoot = await runCli(cli, ['diff', sessionId, first, 'src/greet.ts', 'README.md', '--store', project.store, '--json'], { cwd: project.root });
    const fromSource = await runCli(cli, ['diff', sessionId, first, 'greet.ts', '--store', project.store, '--json'], { cwd: project.file('src') });
    const fromOutside = await runCli(cli, ['diff', sessionId, first, 'src', '--store', project.store, '--json'], { cwd: project.outside });

    const paths = (run: { stdout: string }) => diffOutputSchema.parse(JSON.parse(run.stdout)).files.map((file) => path.relative(project.root, file.path));
    expect(paths(fromRoot)).toEqual(['README.md', 'src/greet.ts']);
    expect(paths(fromSource)).toEqual(['src/greet.ts']);
    expect(paths(fromOutside)).toEqual(['src/farewell.ts', 'src/greet.ts']);
  });

  it('shows binary files as git does, and files a rewind would leave alone without a patch', async () => {
    const { project, sessionId } = await scriptedSession();
    const manager = await project.open({ resume: sessionId });
    const third = await manager.checkpoint(newId());
    project.write('logo.bin', Buffer.from([0x89, 0x00, 0x01]));
    await manager.trackEdit('logo.bin');
    project.write('logo.bin', Buffer.from([0x89, 0x00, 0x02, 0x03]));
    await manager.trackEdit('linked.txt');
    fs.symlinkSync(project.outside, project.file('linked.txt'));
    await manager.close();

    const run = await runCli(cli, ['diff', sessionId, third, '--store', project.store]);

    expect(run.code).toBe(0);
    expect(run.stdout).toContain('diff --git a/logo.bin b/logo.bin\nindex 45e86b8..7798871 100644\nBinary files a/logo.bin and b/logo.bin differ\n');
    expect(run.stdout).toContain(`1 tracked file a rewind would leave alone:\n  linked.txt: ${project.file('linked.txt')} was left alone: it is now a symbolic link`);
    expect(run.stdout).toMatch(/\n1 file would change, 0 insertions\(\+\), 0 deletions\(-\)\n$/);
  });

  it('says so when nothing would change', async () => {
    const { project, sessionId, second } = await scriptedSession();
    const manager = await project.open({ resume: sessionId });
    await manager.rewindFiles(second);
    await manager.close();

    const run = await runCli(cli, ['diff', sessionId, second, '--store', project.store]);

    expect(run).toEqual({ code: 0, stdout: `Nothing to rewind: the files already match checkpoint ${second}.\n`, stderr: '' });
  });

  it('works while another process has the session open', async () => {
    const { project, sessionId, first } = await scriptedSession();
    const holder = await holdSession({ cwd: project.root, storeDir: project.store, sessionId });
    try {
      const run = await runCli(cli, ['diff', sessionId, first, '--store', project.store, '--json']);
      expect(run.code).toBe(0);
      expect(diffOutputSchema.parse(JSON.parse(run.stdout)).files).toHaveLength(4);
    } finally {
      await holder.release();
    }
  });

  it('--progress reports on stderr only', async () => {
    const { project, sessionId, first } = await scriptedSession();

    const run = await runCli(cli, ['diff', sessionId, first, '--store', project.store, '--json', '--progress']);

    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/Comparing files: 4\/4\n$/);
    expect(diffOutputSchema.parse(JSON.parse(run.stdout)).files).toHaveLength(4);
  });

  it('fails with 1 for an unknown checkpoint or one that is not a UUID', async () => {
    const { project, sessionId } = await scriptedSession();

    const unknown = await runCli(cli, ['diff', sessionId, newId(), '--store', project.store, '--json']);
    const malformed = await runCli(cli, ['diff', sessionId, '42', '--store', project.store]);

    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe('error: No file checkpoint found for this message.\n');
    expect(errorOutputSchema.parse(JSON.parse(unknown.stdout)).error.code).toBe('CHECKPOINT_NOT_FOUND');
    expect(malformed.code).toBe(1);
    expect(malformed.stderr).toContain('error: "42" is too short for a checkpoint id');
  });
});
