import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkpointsOutputSchema, rewindOutputSchema, sessionsOutputSchema } from '../../src/cli/output-schemas.js';
import { snapshotTree, tempProject } from '../helpers/temp-project.js';
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

    const run = await runCli(cli, ['--cwd', project.root, 'gc', '--store', project.store, '--yes']);

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
  const rewindUsage = "Usage: rewindable rewind [SESSION] CHECKPOINT [options]\nRun 'rewindable rewind --help' for its options and examples.\n";
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
    ['a missing argument', ['rewind'], 'Missing CHECKPOINT.', rewindUsage],
    ['an unknown option before the command', ['--foo', 'sessions'], 'Unknown option --foo.', generalUsage],
    ['a missing value before the command', ['--store'], 'Option --store needs a value: --store DIR.', generalUsage],
    ['an unknown command', ['frobnicate'], 'Unknown command "frobnicate".', generalUsage],
  ])('%s', async (_case, args, message, usage) => {
    const run = await runCli(cli, args);

    expect(run).toEqual({ code: 2, stdout: '', stderr: `error: ${message}\n${usage}` });
  });
});

describe('rewindable gc asks before removing', () => {
  const day = 24 * 60 * 60 * 1000;

  /** A store with one session idle for 40 days. */
  async function idleStore() {
    const session = await scriptedSession();
    const when = new Date(Date.now() - 40 * day);
    for (const file of fs.readdirSync(session.project.store, { recursive: true, encoding: 'utf8' })) fs.utimesSync(path.join(session.project.store, file), when, when);
    return { ...session, store: session.project.store, before: snapshotTree(session.project.store) };
  }
  const logOf = (store: string, sessionId: string) => fs.readdirSync(path.join(store, 'projects')).map((key) => path.join(store, 'projects', key, `${sessionId}.jsonl`)).find((file) => fs.existsSync(file));

  it.each([['--dry-run'], ['-n']])('%s lists what would be removed, removes nothing, and exits 0', async (flag) => {
    const { store, sessionId, before } = await idleStore();

    const run = await runCli(cli, ['gc', flag, '--store', store]);

    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^Would remove 1 session idle for over 30 days \(\d+(\.\d)? (B|KiB)\), then the shared backups no session needs \(counted only when removed\):\n/);
    expect(run.stdout).toContain(`/${sessionId}.jsonl\nWould keep 0 sessions.\n`);
    expect(snapshotTree(store)).toEqual(before);
  });

  it('without a terminal and without --yes it only previews, removes nothing, and exits 1', async () => {
    const { store, sessionId, before } = await idleStore();

    const text = await runCli(cli, ['gc', '--store', store]);
    const json = await runCli(cli, ['gc', '--store', store, '--json']);

    expect(text.code).toBe(1);
    expect(text.stdout).toContain(`/${sessionId}.jsonl\n`);
    expect(text.stderr).toBe('Nothing was removed: there is no terminal to confirm on. Run again with --yes to remove, or with --dry-run to only preview.\n');
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ removed: false, notRemovedBecause: 'confirmation-required', sessionsRemoved: [{ sessionId }] });
    expect(snapshotTree(store)).toEqual(before);
  });

  it('--yes removes without asking; --json says removed: true', async () => {
    const { store, sessionId } = await idleStore();

    const run = await runCli(cli, ['gc', '-y', '--store', store, '--json']);

    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ removed: true, sessionsRemoved: [{ sessionId }] });
    expect(logOf(store, sessionId)).toBeUndefined();
  });

  it('--dry-run and --yes together are a usage error', async () => {
    const { store, before } = await idleStore();

    const run = await runCli(cli, ['gc', '-n', '-y', '--store', store]);

    expect(run.code).toBe(2);
    expect(run.stderr).toContain('error: --dry-run and --yes contradict each other: pick one.\nUsage: rewindable gc [options]\n');
    expect(snapshotTree(store)).toEqual(before);
  });

  describe.runIf(canRunInTerminal)('on a terminal', () => {
    it('asks; "y" removes the idle session', async () => {
      const { store, sessionId } = await idleStore();

      const run = await runCliInTerminal(cli, ['gc', '--store', store], { input: 'y\n', env: { NO_COLOR: '1' } });

      expect(run.code).toBe(0);
      expect(run.output).toContain(`/${sessionId}.jsonl\nWould keep 0 sessions.\n\nRemove 1 session and the backups no session needs? [y/N] `);
      expect(run.output).toMatch(/Removed 1 session idle for over 30 days and \d+ shared backups? no session needed: .* freed\.\nKept 0 sessions\.\n/);
      expect(logOf(store, sessionId)).toBeUndefined();
    });

    it('any other answer removes nothing and exits 1', async () => {
      const { store, before } = await idleStore();

      const run = await runCliInTerminal(cli, ['gc', '--store', store], { input: 'n\n', env: { NO_COLOR: '1' } });

      expect(run.code).toBe(1);
      expect(run.output).toContain('Remove 1 session and the backups no session needs? [y/N] ');
      expect(run.output).toContain('gc cancelled; nothing was removed.');
      expect(snapshotTree(store)).toEqual(before);
    });
  });
});
