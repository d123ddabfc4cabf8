import fs from 'node:fs';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { RewindableError, RewindableErrorCode } from '../../errors.js';
import type { Output } from '../output.js';
import { stringValue, type Command } from '../command.js';
import { ExitCode, UsageError } from '../exit-codes.js';

export const mcpCommand: Command = {
  name: 'mcp',
  description:
    'Runs an MCP server on stdin and stdout (the Model Context Protocol, as Claude Code and other agents speak it) for the ' +
    'sessions of one project: tools to list sessions and checkpoints, preview a rewind, rewind, undo a rewind and revert a turn, ' +
    'and the same facts as resources. The agent asks for it by name; a person never types to it. See docs/mcp.md.\n\n' +
    'The project is --cwd, else the current directory (or the nearest directory above it with sessions, as for sessions). ' +
    'The server holds no lock while idle: it opens a session read-only to list and preview, and for writing only for the length ' +
    'of one rewind, which fails with SESSION_LOCKED while another process (the running agent) has the session open. ' +
    'rewind_files rewinds only what preview_rewind previewed first in the same connection. The server stops when stdin closes ' +
    'or on SIGTERM, SIGINT or SIGHUP, once the calls under way are done.',
  positionals: { required: [] },
  options: {
    cwd: { type: 'string', value: 'DIR', description: 'The project directory (default: the current directory).' },
  },
  examples: ['rewindable mcp', 'claude mcp add rewindable -- npx -y -p rewindable -p @modelcontextprotocol/sdk rewindable mcp', 'rewindable mcp --cwd ~/code/app --store ~/.rewindable'],
  async run(invocation) {
    // stdout carries the protocol's messages: nothing else may be written there.
    if (invocation.json) throw new UsageError('mcp speaks JSON-RPC on stdout already: --json does not apply.', 'mcp');
    const cwd = path.resolve(invocation.terminal.cwd, stringValue(invocation, 'cwd') ?? '.');
    if (!fs.statSync(cwd, { throwIfNoEntry: false })?.isDirectory()) {
      throw new RewindableError(RewindableErrorCode.CWD_NOT_FOUND, `The project directory ${cwd} does not exist or is not a directory. Pass an existing one with --cwd.`, {
        details: { path: cwd },
      });
    }
    const modules = await loadMcpModules(invocation.out);
    if (modules === undefined) return ExitCode.failure;
    const { StdioServerTransport, createMcpServer } = modules;
    const { server, sessions } = createMcpServer({ cwd, storeDir: invocation.storeDir });
    const stdin = invocation.terminal.stdin as Readable;
    // A client stops its server by closing stdin, or with a signal when it quits: either way a rewind under way
    // finishes first, rather than leaving its files half rewound for the next writer to roll back.
    const stopped = new Promise<void>((resolve) => {
      stdin.once('end', resolve);
      stdin.once('close', resolve);
      for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.once(signal, resolve);
    });
    await server.connect(new StdioServerTransport(stdin, invocation.terminal.stdout as Writable));
    await stopped;
    await sessions.settled();
    // The SDK sends a call's result in the microtasks after its handler returns: let those run before the transport closes.
    await new Promise((resolve) => setImmediate(resolve));
    await server.close();
    return ExitCode.success;
  },
};

/**
 * The MCP SDK and the server built on it. The SDK is an optional peer
 * dependency (about 100 packages that a library user who never runs `mcp`
 * should not have to install): without it, the command says how to get it.
 */
async function loadMcpModules(out: Output) {
  try {
    const [{ StdioServerTransport }, { createMcpServer }] = await Promise.all([import('@modelcontextprotocol/sdk/server/stdio.js'), import('../../mcp/server.js')]);
    return { StdioServerTransport, createMcpServer };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if ((code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') || !String((error as Error).message).includes('@modelcontextprotocol/sdk')) throw error;
    out.error(
      'rewindable mcp needs the @modelcontextprotocol/sdk package, which could not be loaded. Install it next to rewindable ' +
        '(npm install @modelcontextprotocol/sdk), or run both with npx: npx -y -p rewindable -p @modelcontextprotocol/sdk rewindable mcp',
    );
    return undefined;
  }
}
