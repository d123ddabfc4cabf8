import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorOutputSchema, rewindOutputSchema } from '../../src/cli/output-schemas.js';
import { CheckpointManager } from '../../src/index.js';
import { newId, snapshotTree, tempProject } from '../helpers/temp-project.js';
import { buildCli, canRunInTerminal, escapeCode, runCli, runCliInTerminal, type BuiltCli } from './helpers/built-cli.js';
import { holdSession } from './helpers/locked-session.js';
import { scriptedSession } from './helpers/scripted-session.js';

let cli: BuiltCli;

beforeAll(async () => {
  cli = await buildCli();
});
afterAll(() => cli.remove());

const planTable = (verb: string, checkpoint: string) =>
  [
    `${verb === 'would' ? `A rewind to message ${checkpoint} would change` : 'The rewind changed'} 4 files (+4 -2):`,
    '',
    'ACTION    LINES  FILE',
    'recreate  +3 -0  README.md',
    'chmod     +0 -0  run.sh',
    'delete    +0 -1  src/farewell.ts',
    'restore   +1 -1  src/greet.ts',
  ].join('\n');

describe('rewindable rewind', () => {
  it('--yes rewinds, prints the confirmation line and an undo checkpoint that puts the files back', async () => {
    const { project, sessionId, first, atFirst, atEnd } = await scriptedSession();

    const run = await runCli(cli, ['rewind', sessionId, first, '--yes'], { env: { REWINDABLE_HOME: project.store } });

    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    expect(project.snapshot()).toEqual(atFirst);
    const lines = run.stdout.split('\n');
    expect(lines[0]).toBe(`Files rewound to state at message ${first}`);
    const undo = /^Undo checkpoint: ([0-9a-f-]{36})$/.exec(lines[1]!)![1]!;
    expect(lines[2]).toBe(`To undo: rewindable rewind ${sessionId} ${undo}`);
    expect(lines.slice(4).join('\n')).toBe(`${planTable('did', first)}\n`);

    const back = await runCli(cli, ['rewind', sessionId, undo, '--yes'], { env: { REWINDABLE_HOME: project.store } });
    expect(back.code).toBe(0);
    expect(back.stdout.split('\n')[0]).toBe(`Files rewound to state at undo point ${undo}`);
    expect(project.snapshot()).toEqual(atEnd);
  });

  it('--yes --json prints the documented shape with the undo id', async () => {
    const { project, sessionId, second, atSecond } = await scriptedSession();

    const run = await runCli(cli, ['rewind', sessionId, second, '--yes', '--json', '--store', project.store]);

    expect(run.code).toBe(0);
    const output = rewindOutputSchema.parse(JSON.parse(run.stdout));
    expect(output).toMatchObject({ sessionId, checkpointId: second, cwd: project.root, rewound: true, insertions: 3, deletions: 0, skippedLinks: 0 });
    expect(output.files.map((file) => [file.path, file.action])).toEqual([
      [project.file('README.md'), 'recreate'],
      [project.file('run.sh'), 'chmod'],
    ]);
    expect(output.undoCheckpointId).toMatch(/^[0-9a-f-]{36}$/);
    expect(project.snapshot()).toEqual(atSecond);
  });

  it('--dry-run shows the table and changes nothing, even while the session is open elsewhere', async () => {
    const { project, sessionId, first, atEnd } = await scriptedSession();
    const store = snapshotTree(project.store);
    const holder = await holdSession({ cwd: project.root, storeDir: project.store, sessionId });
    try {
      const run = await runCli(cli, ['rewind', sessionId, first, '--dry-run', '--store', project.store]);
      const json = await runCli(cli, ['rewind', sessionId, first, '--dry-run', '--json', '--store', project.store]);

      expect(run).toEqual({ code: 0, stdout: `${planTable('would', first)}\n`, stderr: '' });
      expect(rewindOutputSchema.parse(JSON.parse(json.stdout))).toMatchObject({ rewound: false, notRewoundBecause: 'dry-run', insertions: 4, deletions: 2 });
      expect(project.snapshot()).toEqual(atEnd);
      expect(snapshotTree(project.store)).toMatchObject(store);
    } finally {
      await holder.release();
    }
  });

  it('without a terminal and without --yes: shows the preview, changes nothing, exits 1', async () => {
    const { project, sessionId, first, atEnd } = await scriptedSession();

    const run = await runCli(cli, ['rewind', sessionId, first, '--store', project.store], { input: 'y\n' });
    const json = await runCli(cli, ['rewind', sessionId, first, '--store', project.store, '--json']);

    expect(run.code).toBe(1);
    expect(run.stdout).toBe(`${planTable('would', first)}\n`);
    expect(run.stderr).toBe('Nothing was changed: there is no terminal to confirm on. Run again with --yes to rewind, or with --dry-run to only preview.\n');
    expect(json.code).toBe(1);
    expect(rewindOutputSchema.parse(JSON.parse(json.stdout))).toMatchObject({ rewound: false, notRewoundBecause: 'confirmation-required' });
    expect(project.snapshot()).toEqual(atEnd);
  });

  it('refuses with 1 while another process holds the session, naming that process', async () => {
    const { project, sessionId, first, atEnd } = await scriptedSession();
    const holder = await holdSession({ cwd: project.root, storeDir: project.store, sessionId });
    try {
      const run = await runCli(cli, ['rewind', sessionId, first, '--yes', '--store', project.store]);
      const json = await runCli(cli, ['rewind', sessionId, first, '--yes', '--json', '--store', project.store]);

      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(new RegExp(`^error: Session ${sessionId} is locked: process ${holder.pid} on \\S+ has it open`));
      expect(json.code).toBe(1);
      expect(errorOutputSchema.parse(JSON.parse(json.stdout)).error).toMatchObject({ code: 'SESSION_LOCKED', message: expect.stringContaining(`process ${holder.pid}`) });
      expect(project.snapshot()).toEqual(atEnd);
    } finally {
      await holder.release();
    }
  });

  it('exits 0 without writing when the files already match', async () => {
    const { project, sessionId } = await scriptedSession();
    const manager = await project.open({ resume: sessionId });
    const latest = await manager.checkpoint(newId());
    await manager.close();
    const store = snapshotTree(project.store);

    const run = await runCli(cli, ['rewind', sessionId, latest, '--yes', '--json', '--store', project.store]);

    expect(run.code).toBe(0);
    expect(rewindOutputSchema.parse(JSON.parse(run.stdout))).toMatchObject({ rewound: false, notRewoundBecause: 'nothing-to-change', files: [] });
    expect(snapshotTree(project.store)).toMatchObject(store);
  });

  it('--path rewinds only the files named (a file, a glob taken from the directory it runs in, an absolute glob); the rest stay', async () => {
    const { project, sessionId, first, atEnd } = await scriptedSession();

    const one = await runCli(cli, ['rewind', sessionId, first, '--yes', '--json', '--store', project.store, '--path', 'README.md']);
    const glob = await runCli(cli, ['rewind', sessionId, first, '--yes', '--json', '--store', project.store, '--path', '*.ts'], { cwd: project.file('src') });
    const absoluteGlob = await runCli(cli, ['rewind', sessionId, first, '--dry-run', '--json', '--store', project.store, '--path', path.join(project.root, '*.sh')], { cwd: project.file('src') });

    expect([one.code, glob.code, absoluteGlob.code]).toEqual([0, 0, 0]);
    expect(rewindOutputSchema.parse(JSON.parse(absoluteGlob.stdout)).files.map((file) => [file.path, file.action])).toEqual([[project.file('run.sh'), 'chmod']]);
    expect(rewindOutputSchema.parse(JSON.parse(one.stdout)).files.map((file) => [file.path, file.action])).toEqual([[project.file('README.md'), 'recreate']]);
    expect(rewindOutputSchema.parse(JSON.parse(glob.stdout)).files.map((file) => [file.path, file.action])).toEqual([
      [project.file('src/farewell.ts'), 'delete'],
      [project.file('src/greet.ts'), 'restore'],
    ]);
    const after = project.snapshot();
    expect(after['run.sh']).toBe(atEnd['run.sh']);
    expect(project.read('README.md').toString()).toBe('# demo\n\nA project an agent works on.\n');
    expect(project.exists('src/farewell.ts')).toBe(false);
  });

  it('--path that names no tracked file fails with 1, naming it, and changes nothing', async () => {
    const { project, sessionId, first, atEnd } = await scriptedSession();

    const run = await runCli(cli, ['rewind', sessionId, first, '--yes', '--store', project.store, '--path', 'src/typo.ts']);

    expect(run.code).toBe(1);
    expect(run.stderr).toContain('error: "src/typo.ts" in rewindFiles');
    expect(project.snapshot()).toEqual(atEnd);
  });

  it('--path .. (or any entry leading out of the project) fails with 1, naming it, and changes nothing', async () => {
    const { project, sessionId, first, atEnd } = await scriptedSession();

    for (const entry of ['..', '../*']) {
      const run = await runCli(cli, ['rewind', sessionId, first, '--yes', '--store', project.store, '--path', entry]);

      expect(run.code, entry).toBe(1);
      expect(run.stderr, entry).toContain(`error: ${JSON.stringify(entry)} in rewindFiles`);
      expect(run.stderr, entry).toContain('outside the project');
    }
    expect(project.snapshot()).toEqual(atEnd);
  });

  it('fails with 1 for an unknown session, an unknown checkpoint and a malformed id', async () => {
    const { project, sessionId } = await scriptedSession();
    const unknownSession = newId();

    const noSession = await runCli(cli, ['rewind', unknownSession, newId(), '--yes', '--store', project.store]);
    const noCheckpoint = await runCli(cli, ['rewind', sessionId, newId(), '--yes', '--store', project.store]);
    const malformed = await runCli(cli, ['rewind', sessionId, 'latest', '--yes', '--store', project.store]);

    expect([noSession.code, noCheckpoint.code, malformed.code]).toEqual([1, 1, 1]);
    expect(noSession.stderr).toContain(`error: Session ${unknownSession} is not in the store ${project.store}.`);
    expect(noCheckpoint.stderr).toBe('error: No file checkpoint found for this message.\n');
    expect(malformed.stderr).toContain('error: "latest" is not a valid checkpoint id');
  });
});

// A real pseudo-terminal (util-linux `script`) rather than a test-only switch: the binary decides from its actual streams.
describe.skipIf(!canRunInTerminal)('rewindable rewind on a terminal', () => {
  it('asks before rewinding; "y" rewinds', async () => {
    const { project, sessionId, first, atFirst } = await scriptedSession();

    const run = await runCliInTerminal(cli, ['rewind', sessionId, first, '--store', project.store], { input: 'y\n' });

    expect(run.code).toBe(0);
    expect(run.output).toContain('Rewind 4 files? [y/N] ');
    expect(run.output).toContain(`Files rewound to state at message ${first}\n`);
    expect(run.output).toMatch(escapeCode); // colours on a terminal
    expect(project.snapshot()).toEqual(atFirst);
  });

  it('any other answer cancels: nothing changes, exit 1; NO_COLOR turns colours off', async () => {
    const { project, sessionId, first, atEnd } = await scriptedSession();

    const run = await runCliInTerminal(cli, ['rewind', sessionId, first, '--store', project.store], { input: 'n\n', env: { NO_COLOR: '1' } });

    expect(run.code).toBe(1);
    expect(run.output).toContain(`A rewind to message ${first} would change 4 files (+4 -2):`);
    expect(run.output).toContain('Rewind 4 files? [y/N] ');
    expect(run.output).toContain('Rewind cancelled; nothing was changed.');
    expect(run.output).not.toMatch(escapeCode);
    expect(project.snapshot()).toEqual(atEnd);
  });

  it('--yes does not ask', async () => {
    const { project, sessionId, first, atFirst } = await scriptedSession();

    const run = await runCliInTerminal(cli, ['rewind', sessionId, first, '--yes', '--store', project.store]);

    expect(run.code).toBe(0);
    expect(run.output).not.toContain('[y/N]');
    expect(project.snapshot()).toEqual(atFirst);
    expect(fs.existsSync(project.file('src/farewell.ts'))).toBe(false);
  });
});

describe('a session id in two projects of one store', () => {
  /** Projects alpha and beta, each with a closed session of the same id that changed f.txt after its first checkpoint. */
  async function twoProjectsSharingAnId() {
    const { store, outside } = tempProject();
    const sessionId = newId();
    const record = async (name: string) => {
      const root = path.join(outside, name);
      fs.mkdirSync(root);
      fs.writeFileSync(path.join(root, 'f.txt'), `${name} original\n`);
      const manager = await CheckpointManager.open({ cwd: root, storeDir: store, sessionId, durability: 'none' });
      const first = await manager.checkpoint(newId());
      await manager.trackEdit('f.txt');
      fs.writeFileSync(path.join(root, 'f.txt'), `${name} changed\n`);
      await manager.close();
      return { name, root, first };
    };
    return { store, sessionId, alpha: await record('alpha'), beta: await record('beta') };
  }

  it('without --cwd, rewind, checkpoints and diff pick none: they fail with exit 2 naming both projects, and change nothing', async () => {
    const { store, sessionId, alpha, beta } = await twoProjectsSharingAnId();

    const usage: Record<string, string> = { rewind: 'rewind [SESSION] CHECKPOINT', checkpoints: 'checkpoints SESSION', diff: 'diff [SESSION] CHECKPOINT [FILE...]' };
    for (const [command, ...rest] of [['rewind', alpha.first, '--yes'], ['checkpoints'], ['diff', alpha.first]]) {
      const run = await runCli(cli, [command!, sessionId, ...rest, '--store', store]);
      expect(run.code, command).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr).toBe(
        `error: Session ${sessionId} is in 2 projects: ${alpha.root}, ${beta.root}. A session id is unique only within its project: ` +
          `pass --cwd with the project directory of the one you mean.\nUsage: rewindable ${usage[command!]} [options]\nRun 'rewindable ${command} --help' for its options and examples.\n`,
      );
    }
    expect(fs.readFileSync(path.join(alpha.root, 'f.txt'), 'utf8')).toBe('alpha changed\n');
  });

  it('--cwd reaches the session of that project: rewind, checkpoints and diff each act on it alone', async () => {
    const { store, sessionId, alpha, beta } = await twoProjectsSharingAnId();

    for (const { name, ...project } of [alpha, beta]) {
      const checkpoints = await runCli(cli, ['checkpoints', sessionId, '--cwd', project.root, '--store', store]);
      const diff = await runCli(cli, ['diff', sessionId, project.first, '--cwd', project.root, '--store', store]);
      expect(checkpoints.stdout.split('\n')[0]).toBe(`1 checkpoint in session ${sessionId} of ${project.root}`);
      expect(diff.stdout).toContain(`-${name} changed\n+${name} original\n`);

      const rewind = await runCli(cli, ['rewind', sessionId, project.first, '--yes', '--cwd', project.root, '--store', store]);
      expect(rewind.code, rewind.stderr).toBe(0);
      expect(fs.readFileSync(path.join(project.root, 'f.txt'), 'utf8')).toBe(`${name} original\n`);
    }
  });
});
