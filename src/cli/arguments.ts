import { parseArgs } from 'node:util';
import { commonOptions, type Command } from './command.js';
import { UsageError } from './exit-codes.js';

export interface ParsedArguments {
  positionals: string[];
  values: Record<string, string | boolean | undefined>;
}

/** True when `--help`/`-h` appears before `--`: help wins over any other mistake on the line. */
export function asksForHelp(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).some((arg) => arg === '--help' || arg === '-h');
}

/** Parses a command's arguments strictly; every mistake becomes a `UsageError` naming the command. */
export function parseCommandArguments(command: Command, args: string[]): ParsedArguments {
  const definitions = { ...command.options, ...commonOptions };
  const options = Object.fromEntries(
    Object.entries(definitions).map(([name, definition]) => [name, { type: definition.type, ...(definition.short !== undefined ? { short: definition.short } : {}) }]),
  );
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args, options, strict: true, allowPositionals: true });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error), command.name);
  }
  const { optional = [], required, repeated } = command.positionals;
  const missing = required.slice(parsed.positionals.length);
  if (missing.length > 0) throw new UsageError(`Missing ${missing.join(' and ')}.`, command.name);
  const most = optional.length + required.length;
  if (repeated === undefined && parsed.positionals.length > most) {
    throw new UsageError(`Unexpected argument ${JSON.stringify(parsed.positionals[most])}.`, command.name);
  }
  return { positionals: parsed.positionals, values: parsed.values as ParsedArguments['values'] };
}
