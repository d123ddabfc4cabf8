import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkpointsOutputSchema, rewindOutputSchema, sessionsOutputSchema } from '../../src/cli/output-schemas.js';
import { tempProject } from '../helpers/temp-project.js';
import { buildCli, canRunInTerminal, escapeCode, runCli, runCliInTerminal, type BuiltCli } from './helpers/built-cli.js';
import { scriptedSession } from './helpers/scripted-session.js';

/**
 * The conventions people know from git, gh and npm: global options before
 * the command, -v and -n, FORCE_COLOR, and parse errors that name the
 * mistake and show the usage line.
 */

let cli: BuiltCli;

beforeAll(async () => {
  cli = await buildCli();
});
afterAll(() => cli.remove());

const version = (JSON.parse(fs.readFileSync(path.resolve('package.json'), 'utf8')) as { version: string }).version;
const sessionIds = (stdout: string) => sessionsOutputSchema.parse(JSON.parse(stdout)).sessions.map((session) => session.sessionId);

describe('global options before the command', () => {
  it('--store DIR and --json before the command are read as after it', async () => {
    const { project, sessionId } = await scriptedSession();

    const before = await runCli(cli, ['--store', project.store, '--json', 'sessions'], { cwd: project.root });
    const after = await runCli(cli, ['sessions', '--store', project.store, '--json'], { cwd: project.root });

    expect(before.code).toBe(0);
    expect(before.stderr).toBe('');
    expect(sessionIds(before.stdout)).toEqual([sessionId]);
    expect(before).toEqual(after);
  });

  it('--json before checkpoints, --store=DIR spelled with "=", and --cwd DIR before sessions', async () => {
    const { project, sessionId } = await scriptedSession();

    const checkpoints = await runCli(cli, ['--json', `--store=${project.store}`, 'checkpoints', sessionId]);
    const sessions = await runCli(cli, ['--cwd', project.root, '--store', project.store, 'sessions', '--json']);

    expect(checkpoints.code).toBe(0);
    expect(checkpointsOutputSchema.parse(JSON.parse(checkpoints.stdout))).toMatchObject({ sessionId, cwd: project.root });
    expect(sessions.code).toBe(0);
    expect(sessionIds(sessions.stdout)).toEqual([sessionId]);
  });

  it('an option given both before and after the command takes the later value', async () => {
    const { project, sessionId } = await scriptedSession();
    const empty = tempProject();

    const afterWins = await runCli(cli, ['--store', empty.store, 'sessions', '--cwd', project.root, '--store', project.store, '--json']);
    const emptyWins = await runCli(cli, ['--store', project.store, 'sessions', '--cwd', project.root, '--store', empty.store, '--json']);

    expect(sessionIds(afterWins.stdout)).toEqual([sessionId]);
    expect(sessionsOutputSchema.parse(JSON.parse(emptyWins.stdout))).toEqual({ store: empty.store, cwd: project.root, sessions: [] });
  });

  it('--cwd before a command that takes no --cwd is a usage error of that command', async () => {
    const project = tempProject();

    const run = await runCli(cli, ['--cwd', project.root, 'gc', '--store', project.store]);

    expect(run).toEqual({ code: 2, stdout: '', stderr: "error: Unknown option --cwd.\nUsage: rewindable gc [options]\nRun 'rewindable gc --help' for its options and examples.\n" });
    expect(fs.existsSync(project.store)).toBe(false);
  });

  it('--help before the command shows that command’s help', async () => {
    expect(await runCli(cli, ['--store', '/nowhere', '--help', 'rewind'])).toEqual(await runCli(cli, ['rewind', '--help']));
  });
});

describe('-v and -n', () => {
  it.each([[['-v']], [['--version']], [['--store', '/nowhere', '-v']]])('%j prints the version', async (args) => {
    expect(await runCli(cli, args)).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
  });

  it('rewind -n is rewind --dry-run: the same preview, and nothing changes', async () => {
    const { project, sessionId, first, atEnd } = await scriptedSession();

    const short = await runCli(cli, ['rewind', sessionId, first, '-n', '--json', '--store', project.store]);
    const long = await runCli(cli, ['rewind', sessionId, first, '--dry-run', '--json', '--store', project.store]);

    expect(short.code).toBe(0);
    expect(rewindOutputSchema.parse(JSON.parse(short.stdout))).toMatchObject({ rewound: false, notRewoundBecause: 'dry-run' });
    expect(short).toEqual(long);
    expect(project.snapshot()).toEqual(atEnd);
  });
});

describe('colours: FORCE_COLOR decides first, then NO_COLOR, then whether the stream is a terminal', () => {
  it.each(['1', '2', '3', 'true'])('FORCE_COLOR=%s forces colours into a pipe, even with NO_COLOR set', async (value) => {
    const { project } = await scriptedSession();

    const forced = await runCli(cli, ['sessions', '--cwd', project.root, '--store', project.store], { env: { FORCE_COLOR: value } });
    const overNoColor = await runCli(cli, ['sessions', '--cwd', project.root, '--store', project.store], { env: { FORCE_COLOR: value, NO_COLOR: '1' } });

    expect(forced.code).toBe(0);
    expect(forced.stdout).toMatch(escapeCode);
    expect(overNoColor.stdout).toBe(forced.stdout);
  });

  it('FORCE_COLOR set but empty counts as unset: no colours into a pipe', async () => {
    const { project } = await scriptedSession();

    const run = await runCli(cli, ['sessions', '--cwd', project.root, '--store', project.store], { env: { FORCE_COLOR: '' } });

    expect(run.code).toBe(0);
    expect(run.stdout).not.toMatch(escapeCode);
  });

  it.runIf(canRunInTerminal).each(['0', 'false'])('FORCE_COLOR=%s turns colours off on a terminal', async (value) => {
    const { project } = await scriptedSession();

    const plain = await runCliInTerminal(cli, ['sessions', '--cwd', project.root, '--store', project.store], { env: { FORCE_COLOR: value } });
    const coloured = await runCliInTerminal(cli, ['sessions', '--cwd', project.root, '--store', project.store]);

    expect(plain.code).toBe(0);
    expect(plain.output).toContain('1 session of');
    expect(plain.output).not.toMatch(escapeCode);
    expect(coloured.output).toMatch(escapeCode);
  });
});

describe('parse errors are in the CLI’s words, followed by the usage line, and exit with 2', () => {
  const someId = '5d3b8e0c-1a2b-4c3d-8e4f-5a6b7c8d9e0f';
  const rewindUsage = "Usage: rewindable rewind SESSION CHECKPOINT [options]\nRun 'rewindable rewind --help' for its options and examples.\n";
  const generalUsage = "Usage: rewindable [options] <command> [arguments] [options]\nRun 'rewindable --help' for the list of commands.\n";

  it.each([
    ['an unknown option', ['rewind', someId, someId, '--foo'], 'Unknown option --foo.', rewindUsage],
    ['an unknown short option', ['rewind', someId, someId, '-x'], 'Unknown option -x.', rewindUsage],
    ['a missing option value', ['rewind', someId, someId, '--cwd'], 'Option --cwd needs a value: --cwd DIR.', rewindUsage],
    [
      'an option where the value should be',
      ['rewind', someId, someId, '--cwd', '--yes'],
      'Option --cwd needs a value: --cwd DIR (to pass "--yes" as its value, write --cwd=--yes).',
      rewindUsage,
    ],
    ['a value given to a boolean', ['rewind', someId, someId, '--yes=no'], 'Option --yes takes no value: write --yes alone, not --yes=no.', rewindUsage],
    ['an unexpected argument', ['rewind', someId, someId, 'extra'], 'Unexpected argument "extra".', rewindUsage],
    ['a missing argument', ['rewind', someId], 'Missing CHECKPOINT.', rewindUsage],
    ['an unknown option before the command', ['--foo', 'sessions'], 'Unknown option --foo.', generalUsage],
    ['a missing value before the command', ['--store'], 'Option --store needs a value: --store DIR.', generalUsage],
    ['an unknown command', ['frobnicate'], 'Unknown command "frobnicate".', generalUsage],
  ])('%s', async (_case, args, message, usage) => {
    const run = await runCli(cli, args);

    expect(run).toEqual({ code: 2, stdout: '', stderr: `error: ${message}\n${usage}` });
  });
});
