import path from 'node:path';
import { version } from '../../package.json';
import { RewindableError } from '../errors.js';
import { defaultStoreDirectory } from '../store/default-store-directory.js';
import { asksForHelp, parseCommandArguments, splitCommandLine, type CommandLine } from './arguments.js';
import type { Command, CommandEntry } from './command.js';
import { ExitCode, UsageError } from './exit-codes.js';
import { commandHelp, commandUsage, generalHelp, generalUsage } from './help.js';
import { Output } from './output.js';
import type { Terminal } from './terminal.js';

/** Every command, in the order of the help; each loads its modules only when it is the one to run. */
export const commands: readonly CommandEntry[] = [
  { name: 'sessions', summary: 'List the sessions of a project, newest first', load: async () => (await import('./commands/sessions.js')).sessionsCommand },
  { name: 'checkpoints', summary: 'List the checkpoints of a session, with time, prompt and files', load: async () => (await import('./commands/checkpoints.js')).checkpointsCommand },
  { name: 'diff', summary: 'Show what a rewind to a checkpoint would change, as unified diffs', load: async () => (await import('./commands/diff.js')).diffCommand },
  { name: 'rewind', summary: 'Put the files back as they were at a checkpoint', load: async () => (await import('./commands/rewind.js')).rewindCommand },
  { name: 'revert', summary: 'Undo the file changes of one turn, keeping the changes made after it', load: async () => (await import('./commands/revert.js')).revertCommand },
  { name: 'gc', summary: 'Remove idle sessions and the backups no session needs', load: async () => (await import('./commands/gc.js')).gcCommand },
  { name: 'ui', summary: 'Serve a local timeline page of sessions, checkpoints and diffs, with rewind and undo', load: async () => (await import('./commands/ui.js')).uiCommand },
  { name: 'mcp', summary: 'Serve the sessions of a project to an agent over MCP (stdio): list, preview, rewind, undo', load: async () => (await import('./commands/mcp.js')).mcpCommand },
  { name: 'unlock', summary: "Show who holds a session's lock, and break it with --force", load: async () => (await import('./commands/unlock.js')).unlockCommand },
  { name: 'serve', summary: 'Serve the library as JSON-RPC over stdin and stdout (for the Python client)', load: async () => (await import('./commands/serve.js')).serveCommand },
  { name: 'hook', summary: 'Handle one hook event of Claude Code (or another CLI agent) read from stdin', load: async () => (await import('./commands/hook.js')).hookCommand },
  { name: 'hooks', summary: "Install or remove the rewindable hooks in Claude Code's settings", load: async () => (await import('./commands/hooks.js')).hooksCommand },
];

/** Runs one command line (without `node` and the script) and returns the exit code. */
export async function runCli(args: string[], terminal: Terminal): Promise<ExitCode> {
  const out = new Output(terminal);
  let line: CommandLine;
  try {
    line = splitCommandLine(args);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    if (asksForHelp(args)) return printHelp(out, generalHelp(commands, version));
    return usageFailure(out, error);
  }
  if (line.leadingValues.version === true) {
    out.line(version);
    return ExitCode.success;
  }
  if (line.command === undefined) {
    if (line.leadingValues.help === true) return printHelp(out, generalHelp(commands, version));
    // Bare `rewindable` is a usage mistake: the help goes to stderr and the exit code says so.
    out.note(generalHelp(commands, version));
    return ExitCode.usage;
  }
  if (line.command === 'help') return help(out, line.rest[0]);
  const entry = commands.find((candidate) => candidate.name === line.command);
  if (entry === undefined) return usageFailure(out, new UsageError(`Unknown command ${JSON.stringify(line.command)}.`));
  const command = await entry.load();
  if (line.leadingValues.help === true || asksForHelp(line.rest)) return printHelp(out, commandHelp(command));
  let json = false;
  try {
    const parsed = parseCommandArguments(command, [...line.leading, ...line.rest]);
    json = parsed.values.json === true;
    const store = parsed.values.store;
    const storeDir = typeof store === 'string' ? path.resolve(terminal.cwd, store) : defaultStoreDirectory();
    return await command.run({ terminal, out, positionals: parsed.positionals, values: parsed.values, json, storeDir });
  } catch (error) {
    if (error instanceof UsageError) return usageFailure(out, error, command);
    return await operationFailure(out, error, json, terminal);
  }
}

/** `rewindable help [COMMAND]`. */
async function help(out: Output, topic: string | undefined): Promise<ExitCode> {
  if (topic === undefined) return printHelp(out, generalHelp(commands, version));
  const entry = commands.find((command) => command.name === topic);
  if (entry === undefined) return usageFailure(out, new UsageError(`Unknown command ${JSON.stringify(topic)}.`));
  return printHelp(out, commandHelp(await entry.load()));
}

function printHelp(out: Output, text: string): ExitCode {
  out.line(text);
  return ExitCode.success;
}

/** The mistake, the usage line it breaks, and where to read more: as git and gh report theirs. */
function usageFailure(out: Output, error: UsageError, command?: Command): ExitCode {
  out.error(error.message);
  out.note(command !== undefined ? commandUsage(command) : generalUsage);
  out.note(command !== undefined ? `Run 'rewindable ${command.name} --help' for its options and examples.` : "Run 'rewindable --help' for the list of commands.");
  return ExitCode.usage;
}

/** Errors of the operation itself: the library's typed errors carry a message meant for people. */
async function operationFailure(out: Output, error: unknown, json: boolean, terminal: Terminal): Promise<ExitCode> {
  const typed = RewindableError.isInstance(error) ? error : undefined;
  const message = typed?.message ?? `unexpected failure: ${error instanceof Error ? error.message : String(error)}`;
  out.error(message);
  if (typed === undefined && terminal.env.REWINDABLE_DEBUG) out.note(error instanceof Error ? (error.stack ?? '') : '');
  if (json) out.json((await import('./output-schemas.js')).errorOutputSchema, { error: { code: typed?.code ?? 'UNEXPECTED', message } });
  return ExitCode.failure;
}
