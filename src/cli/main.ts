#!/usr/bin/env node
/**
 * The `rewindable` command: list, diff and rewind sessions from a terminal or
 * a script. A thin layer over the library; see docs/cli.md.
 *
 * `rewindable hook` runs first as a thin client of the project's resident
 * hook server (docs/hooks.md), which loads neither zod nor the library: a
 * hook is a new process at every event of the agent.
 */
import { processTerminal, stopWritingWhenClosed } from './terminal.js';

stopWritingWhenClosed(process.stdout);
stopWritingWhenClosed(process.stderr);
const args = process.argv.slice(2);

async function main(): Promise<number | undefined> {
  if (args[0] === '__hook-server') {
    await (await import('../hooks/server/hook-server.js')).runHookServer(args.slice(1));
    return undefined;
  }
  if (args[0] === 'hook' && process.env.REWINDABLE_HOOK_SERVER !== 'off') {
    const code = await (await import('../hooks/server/hook-client.js')).runHookClient(args.slice(1));
    if (code !== undefined) return code;
  }
  const { runCli } = await import('./run-cli.js');
  return await runCli(args, processTerminal());
}

void main().then((code) => {
  // Not process.exit(): output still in the pipes must be written before the process ends.
  if (code !== undefined) process.exitCode = code;
});
