import path from 'node:path';
import { version } from '../../package.json';
import { RewindableError } from '../errors.js';
import { defaultStoreDirectory } from '../store/filesystem/filesystem-storage.js';
import { asksForHelp, parseCommandArguments } from './arguments.js';
import type { Command } from './command.js';
import { checkpointsCommand } from './commands/checkpoints.js';
import { diffCommand } from './commands/diff.js';
import { gcCommand } from './commands/gc.js';
import { rewindCommand } from './commands/rewind.js';
import { sessionsCommand } from './commands/sessions.js';
import { unlockCommand } from './commands/unlock.js';
import { ExitCode, UsageError } from './exit-codes.js';
import { commandHelp, generalHelp } from './help.js';
import { errorOutputSchema } from './output-schemas.js';
import { Output } from './output.js';
import type { Terminal } from './terminal.js';

export const commands: readonly Command[] = [sessionsCommand, checkpointsCommand, diffCommand, rewindCommand, gcCommand, unlockCommand];

/** Runs one command line (without `node` and the script) and returns the exit code. */
export async function runCli(args: string[], terminal: Terminal): Promise<ExitCode> {
  const out = new Output(terminal);
  const [name, ...rest] = args;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    const topic = name === 'help' ? commands.find((command) => command.name === rest[0]) : undefined;
    if (name === 'help' && rest[0] !== undefined && topic === undefined) return usageFailure(out, new UsageError(`Unknown command ${JSON.stringify(rest[0])}.`));
    const text = topic !== undefined ? commandHelp(topic) : generalHelp(commands, version);
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
  const command = commands.find((candidate) => candidate.name === name);
  if (command === undefined) {
    const hint = name.startsWith('-') ? 'Put the command first: rewindable <command> [options].' : `Unknown command ${JSON.stringify(name)}.`;
    return usageFailure(out, new UsageError(hint));
  }
  if (asksForHelp(rest)) {
    out.line(commandHelp(command));
    return ExitCode.success;
  }
  let json = false;
  try {
    const parsed = parseCommandArguments(command, rest);
    json = parsed.values.json === true;
    const store = parsed.values.store;
    const storeDir = typeof store === 'string' ? path.resolve(terminal.cwd, store) : defaultStoreDirectory();
    return await command.run({ terminal, out, positionals: parsed.positionals, values: parsed.values, json, storeDir });
  } catch (error) {
    if (error instanceof UsageError) return usageFailure(out, error);
    return operationFailure(out, error, json, terminal);
  }
}

function usageFailure(out: Output, error: UsageError): ExitCode {
  out.error(error.message);
  out.note(error.command !== undefined ? `Run 'rewindable ${error.command} --help' for usage.` : "Run 'rewindable --help' for the list of commands.");
  return ExitCode.usage;
}

/** Errors of the operation itself: the library's typed errors carry a message meant for people. */
function operationFailure(out: Output, error: unknown, json: boolean, terminal: Terminal): ExitCode {
  const typed = RewindableError.isInstance(error) ? error : undefined;
  const message = typed?.message ?? `unexpected failure: ${error instanceof Error ? error.message : String(error)}`;
  out.error(message);
  if (typed === undefined && terminal.env.REWINDABLE_DEBUG) out.note(error instanceof Error ? (error.stack ?? '') : '');
  if (json) out.json(errorOutputSchema, { error: { code: typed?.code ?? 'UNEXPECTED', message } });
  return ExitCode.failure;
}
