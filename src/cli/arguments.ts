import { parseArgs } from 'node:util';
import { commonOptions, globalOptions, type Command, type OptionDefinition } from './command.js';
import { UsageError } from './exit-codes.js';

export type OptionValues = Record<string, string | boolean | string[] | undefined>;

export interface ParsedArguments {
  positionals: string[];
  values: OptionValues;
}

/** A command line split at its command: `rewindable [global options] <command> [arguments and options]`. */
export interface CommandLine {
  /** The global options before the command, as typed: they are read again with the command's own. */
  leading: string[];
  leadingValues: OptionValues;
  /** Undefined when the line has no command. */
  command?: string;
  rest: string[];
}

/** Splits off the options before the command; a mistake among them is a `UsageError` of no command. */
export function splitCommandLine(args: readonly string[]): CommandLine {
  const tokens = tokenize(args, globalOptions);
  const first = tokens.find((token) => token.kind !== 'option');
  // After `--` the next word is the command, whatever it looks like.
  const commandIndex = first === undefined ? args.length : first.kind === 'positional' ? first.index : first.index + 1;
  const leading = args.slice(0, commandIndex);
  const { values } = readTokens(tokens.filter((token) => token.index < commandIndex), globalOptions);
  return { leading, leadingValues: values, ...(commandIndex < args.length ? { command: args[commandIndex]! } : {}), rest: args.slice(commandIndex + 1) };
}

/** True when `--help`/`-h` appears before `--`: help wins over any other mistake on the line. */
export function asksForHelp(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).some((arg) => arg === '--help' || arg === '-h');
}

/**
 * Parses a command's arguments strictly; every mistake becomes a `UsageError`
 * naming the command, in the CLI's words. An option given twice takes its
 * later value, so `rewindable --store A sessions --store B` reads store B.
 */
export function parseCommandArguments(command: Command, args: readonly string[]): ParsedArguments {
  const definitions = { ...command.options, ...commonOptions };
  const parsed = readTokens(tokenize(args, definitions), definitions, command.name);
  const { optional = [], required, repeated } = command.positionals;
  const missing = required.slice(parsed.positionals.length);
  if (missing.length > 0) throw new UsageError(`Missing ${missing.join(' and ')}.`, command.name);
  const most = optional.length + required.length;
  if (repeated === undefined && parsed.positionals.length > most) {
    throw new UsageError(`Unexpected argument ${JSON.stringify(parsed.positionals[most])}.`, command.name);
  }
  return parsed;
}

type Token = NonNullable<ReturnType<typeof parseArgs>['tokens']>[number];

/** Node's tokenizer without its strict checks: those are made by `readTokens`, whose messages are the CLI's own. */
function tokenize(args: readonly string[], definitions: Record<string, OptionDefinition>): Token[] {
  const options = Object.fromEntries(
    Object.entries(definitions).map(([name, definition]) => [name, { type: definition.type, ...(definition.short !== undefined ? { short: definition.short } : {}) }]),
  );
  return parseArgs({ args: [...args], options, strict: false, allowPositionals: true, tokens: true }).tokens;
}

function readTokens(tokens: readonly Token[], definitions: Record<string, OptionDefinition>, command?: string): ParsedArguments {
  const values: OptionValues = {};
  const positionals: string[] = [];
  for (const token of tokens) {
    if (token.kind === 'positional') positionals.push(token.value);
    if (token.kind !== 'option') continue;
    const definition = definitions[token.name];
    if (definition === undefined) throw new UsageError(`Unknown option ${token.rawName}.`, command);
    const spelled = definition.value !== undefined ? `${token.rawName} ${definition.value}` : token.rawName;
    if (definition.type === 'boolean') {
      if (token.inlineValue === true) throw new UsageError(`Option ${token.rawName} takes no value: write ${token.rawName} alone, not ${token.rawName}=${token.value}.`, command);
      values[token.name] = true;
    } else if (token.value === undefined) {
      throw new UsageError(`Option ${token.rawName} needs a value: ${spelled}.`, command);
    } else if (token.inlineValue !== true && token.value.startsWith('-')) {
      // `--cwd --json`: far more often a forgotten value than a directory named like an option.
      throw new UsageError(`Option ${token.rawName} needs a value: ${spelled} (to pass ${JSON.stringify(token.value)} as its value, write ${token.rawName}=${token.value}).`, command);
    } else if (definition.choices !== undefined && !definition.choices.includes(token.value)) {
      throw new UsageError(`Option ${token.rawName} takes ${listOfChoices(definition.choices)}; got ${JSON.stringify(token.value)}.`, command);
    } else if (definition.multiple === true) {
      values[token.name] = [...((values[token.name] as string[] | undefined) ?? []), token.value];
    } else values[token.name] = token.value;
  }
  return { positionals, values };
}

/** `skip, markers or overwrite`. */
function listOfChoices(choices: readonly string[]): string {
  return choices.length === 1 ? choices[0]! : `${choices.slice(0, -1).join(', ')} or ${choices.at(-1)!}`;
}
