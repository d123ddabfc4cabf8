import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli, runCli, type BuiltCli } from './helpers/built-cli.js';

const commands = ['sessions', 'checkpoints', 'diff', 'rewind', 'revert', 'gc', 'unlock'];
const someId = '5d3b8e0c-1a2b-4c3d-8e4f-5a6b7c8d9e0f';
let cli: BuiltCli;

beforeAll(async () => {
  cli = await buildCli();
});
afterAll(() => cli.remove());

describe('the built bin', () => {
  it('keeps its shebang first and runs as an executable', async () => {
    expect(fs.readFileSync(cli.bin, 'utf8').split('\n')[0]).toBe('#!/usr/bin/env node');
    const run = await runCli(cli, ['--version']);
    const manifest = JSON.parse(fs.readFileSync(path.resolve('package.json'), 'utf8')) as { version: string };
    expect(run).toEqual({ code: 0, stdout: `${manifest.version}\n`, stderr: '' });
  });

  it('--help lists every command and the exit codes', async () => {
    const run = await runCli(cli, ['--help']);
    expect(run.code).toBe(0);
    for (const command of commands) expect(run.stdout).toMatch(new RegExp(`^  ${command} +\\S`, 'm'));
    expect(run.stdout).toContain('Exit codes: 0 success, 1 the operation failed');
    expect(run.stderr).toBe('');
  });

  it.each(commands)('%s --help prints its usage and options, and exits 0', async (command) => {
    const run = await runCli(cli, [command, '--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`^Usage: rewindable ${command} `));
    expect(run.stdout).toContain('--store DIR');
    expect(run.stdout).toContain('--json');
  });

  it('help COMMAND is COMMAND --help', async () => {
    expect(await runCli(cli, ['help', 'rewind'])).toEqual(await runCli(cli, ['rewind', '--help']));
  });

  it('help wins over other mistakes on the line', async () => {
    const run = await runCli(cli, ['diff', '--no-such-flag', '-h']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^Usage: rewindable diff \[SESSION\] CHECKPOINT \[FILE\.\.\.\]/);
  });
});

describe('usage errors exit with 2 and point to --help', () => {
  it('no command: the overview goes to stderr', async () => {
    const run = await runCli(cli, []);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('Usage: rewindable [options] <command> [arguments] [options]');
  });

  it.each([
    [['frobnicate'], 'Unknown command "frobnicate".', "'rewindable --help'"],
    [['help', 'frobnicate'], 'Unknown command "frobnicate".', "'rewindable --help'"],
    [['sessions', '--bogus'], 'Unknown option --bogus.', "'rewindable sessions --help'"],
    [['sessions', '--cwd'], 'Option --cwd needs a value: --cwd DIR.', "'rewindable sessions --help'"],
    [['sessions', 'extra'], 'Unexpected argument "extra".', "'rewindable sessions --help'"],
    [['checkpoints'], 'Missing SESSION.', "'rewindable checkpoints --help'"],
    [['diff'], 'Missing CHECKPOINT.', "'rewindable diff --help'"],
    [['rewind'], 'Missing CHECKPOINT.', "'rewindable rewind --help'"],
    [['rewind', someId, someId, '--dry-run', '--yes'], '--dry-run and --yes contradict each other', "'rewindable rewind --help'"],
    [['gc', '--older-than', 'soon'], '--older-than takes a duration such as 30d', "'rewindable gc --help'"],
  ])('%j', async (args, message, pointer) => {
    const run = await runCli(cli, args);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(`error: ${message}`);
    expect(run.stderr).toContain(`Run ${pointer}`);
  });
});
