#!/usr/bin/env node
/**
 * The `rewindable` command: list, diff and rewind sessions from a terminal or
 * a script. A thin layer over the library; see docs/cli.md.
 */
import { runCli } from './run-cli.js';
import { processTerminal, stopWritingWhenClosed } from './terminal.js';

stopWritingWhenClosed(process.stdout);
stopWritingWhenClosed(process.stderr);
void runCli(process.argv.slice(2), processTerminal()).then((code) => {
  // Not process.exit(): output still in the pipes must be written before the process ends.
  process.exitCode = code;
});
