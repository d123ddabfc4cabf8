import path from 'node:path';
import { version } from '../../package.json';
import { RewindableError } from '../errors.js';
import { asksForHelp, parseCommandArguments } from './arguments.js';
import type { CommandEntry } from './command.js';
import { ExitCode, UsageError } from './exit-codes.js';
import { commandHelp, generalHelp } from './help.js';
import { Output } from './output.js';
import type { Terminal } from './terminal.js';

/** Every command, in the order of the help; each loads its modules only when it is the one to run. */
export const commands: readonly CommandEntry[] = [
  { name: 'sessions', summary: 'List the sessions of a project, newest first', load: async () => (await import('./commands/sessions.js')).sessionsCommand },
  { name: 'checkpoints', summary: 'List the checkpoints of a session, with time, prompt and files', load: async () => (await import('./commands/checkpoints.js')).checkpointsCommand },
  { name: 'diff', summary: 'Show what a rewind to a checkpoint would change, as unified diffs', load: async () => (await import('./commands/diff.js')).diffCommand },
  { name: 'rewind', summary: 'Put the files back as they were at a checkpoint', load: async () => (await import('./commands/rewind.js')).rewindCommand },
  { name: 'gc', summary: 'Remove idle sessions and the backups no session needs', load: async () => (await import('./commands/gc.js')).gcCommand },
  { name: 'unlock', summary: "Show who holds a session's lock, and break it with --force", load: async () => (await import('./commands/unlock.js')).unlockCommand },
];

/** Runs one command line (without `node` and the script) and returns the exit code. */
export async function runCli(args: string[], terminal: Terminal): Promise<ExitCode> {
  const out = new Output(terminal);
  const [name, ...rest] = args;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    const topic = name === 'help' ? commands.find((command) => command.name === rest[0]) : undefined;
    if (name === 'help' && rest[0] !== undefined && topic === undefined) return usageFailure(out, new UsageError(`Unknown command ${JSON.stringify(rest[0])}.`));
    const text = topic !== undefined ? commandHelp(await topic.load()) : generalHelp(commands, version);
    // Bare `rewindable` is a usage mistake: the help goes to stderr and the exit code says so.
    if (name === undefined) {
      out.note(text);
      return ExitCode.usage;
    }
    out.line(text);
    return ExitCode.success;
  }
  if (name === '--version') {
    out.line(version);
    return ExitCode.success;
  }
  const entry = commands.find((candidate) => candidate.name === name);
  if (entry === undefined) {
    const hint = name.startsWith('-') ? 'Put the command first: rewindable <command> [options].' : `Unknown command ${JSON.stringify(name)}.`;
    return usageFailure(out, new UsageError(hint));
  }
  const command = await entry.load();
  if (asksForHelp(rest)) {
    out.line(commandHelp(command));
    return ExitCode.success;
  }
  let json = false;
  try {
    const parsed = parseCommandArguments(command, rest);
    json = parsed.values.json === true;
    const store = parsed.values.store;
    const storeDir = typeof store === 'string' ? path.resolve(terminal.cwd, store) : (await import('../store/filesystem/filesystem-storage.js')).defaultStoreDirectory();
    return await command.run({ terminal, out, positionals: parsed.positionals, values: parsed.values, json, storeDir });
  } catch (error) {
    if (error instanceof UsageError) return usageFailure(out, error);
    return await operationFailure(out, error, json, terminal);
  }
}

function usageFailure(out: Output, error: UsageError): ExitCode {
  out.error(error.message);
  out.note(error.command !== undefined ? `Run 'rewindable ${error.command} --help' for usage.` : "Run 'rewindable --help' for the list of commands.");
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
