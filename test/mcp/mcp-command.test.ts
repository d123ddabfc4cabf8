import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli, runCli, type BuiltCli } from '../cli/helpers/built-cli.js';
import { tempProject } from '../helpers/temp-project.js';

let cli: BuiltCli;
beforeAll(async () => {
  cli = await buildCli();
});
afterAll(() => cli.remove());

describe('rewindable mcp as a command', () => {
  it('is listed by --help, and mcp --help prints its usage', async () => {
    const overview = await runCli(cli, ['--help']);
    const help = await runCli(cli, ['mcp', '--help']);

    expect(overview.stdout).toMatch(/^ {2}mcp +Serve the sessions of a project to an agent over MCP/m);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: rewindable mcp /);
    expect(help.stdout).toContain('--cwd DIR');
  });

  it('stops with exit 0 and writes nothing when its client closes stdin without a word', async () => {
    const project = tempProject();
    const run = await runCli(cli, ['mcp', '--cwd', project.root, '--store', project.store]);

    expect(run).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(fs.existsSync(project.store)).toBe(false);
  });

  it('a SIGTERM from its client, with stdin still open, stops it with exit 0', async () => {
    const project = tempProject();
    const child = spawn(process.execPath, [cli.bin, 'mcp', '--cwd', project.root, '--store', project.store], { stdio: ['pipe', 'pipe', 'pipe'], env: { PATH: process.env.PATH, HOME: cli.home } });
    const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
    const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
    child.stdin.write(`${JSON.stringify(initialize)}\n`);
    // Answering shows the server is up, with its signal handlers in place.
    await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
    child.kill('SIGTERM');

    expect(await exited).toBe(0);
  });

  it('a --cwd that is no directory fails at start, saying so on stderr and keeping stdout for the protocol', async () => {
    const project = tempProject();
    const missing = await runCli(cli, ['mcp', '--cwd', project.file('nowhere')]);
    const file = await runCli(cli, ['mcp', '--cwd', project.write('a-file.txt', 'x')]);

    for (const run of [missing, file]) {
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(/^error: The project directory .* does not exist or is not a directory\. Pass an existing one with --cwd\./);
    }
  });

  it('--json is a usage error: stdout already carries JSON-RPC', async () => {
    const run = await runCli(cli, ['mcp', '--json']);

    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('error: mcp speaks JSON-RPC on stdout already: --json does not apply.');
  });
});
