import type { ExitCode } from './exit-codes.js';
import type { Output } from './output.js';
import type { Terminal } from './terminal.js';

export interface OptionDefinition {
  type: 'string' | 'boolean';
  short?: string;
  /** Placeholder of the value in help, e.g. `DIR`. */
  value?: string;
  /** A string option that may be given more than once: its values are kept in order (`--path a --path b`). */
  multiple?: boolean;
  /** The values a string option takes; any other is a usage error. */
  choices?: readonly string[];
  description: string;
}

/**
 * A command as the command list knows it. Loading a command loads every
 * module it needs to run (the store, the manager, zod): `--version`,
 * `--help` and an unknown command's error never pay for that.
 */
export interface CommandEntry {
  name: string;
  /** One line for the command list. */
  summary: string;
  load(): Promise<Command>;
}

/** One `rewindable <name>` command: its help, its arguments, and what it does. */
export interface Command {
  name: string;
  /** Paragraphs shown by `--help` after the usage line. */
  description: string;
  /** Leading positionals that may be left out (`[SESSION]`), required ones in order, then an optional repeated one (`FILE`). */
  positionals: { optional?: string[]; required: string[]; repeated?: string };
  options: Record<string, OptionDefinition>;
  /** Shown at the end of `--help`. */
  examples: string[];
  run(invocation: Invocation): Promise<ExitCode>;
}

export interface Invocation {
  terminal: Terminal;
  out: Output;
  positionals: string[];
  values: Record<string, string | boolean | string[] | undefined>;
  /** `--json`: print one JSON document on stdout. */
  json: boolean;
  /** Absolute store directory (`--store`, else REWINDABLE_HOME, else ~/.rewindable). */
  storeDir: string;
}

/** Options every command takes. */
export const commonOptions: Record<string, OptionDefinition> = {
  store: { type: 'string', value: 'DIR', description: 'Store directory (default: $REWINDABLE_HOME, else ~/.rewindable).' },
  json: { type: 'boolean', description: 'Print one JSON document on stdout, for scripts.' },
  help: { type: 'boolean', short: 'h', description: 'Show this help.' },
};

/**
 * Options that may also come before the command, as in `rewindable --store DIR sessions`.
 * `--cwd` is one for the commands that take it; the command's own parse
 * rejects it for the others.
 */
export const globalOptions: Record<string, OptionDefinition> = {
  ...commonOptions,
  cwd: { type: 'string', value: 'DIR', description: 'The project directory, for the commands that take --cwd.' },
  version: { type: 'boolean', short: 'v', description: 'Print the version.' },
};

export function stringValue(invocation: Invocation, name: string): string | undefined {
  const value = invocation.values[name];
  return typeof value === 'string' ? value : undefined;
}

/** The value of an option with `choices` (the parser refused any other), or undefined when not given. */
export function choiceValue<Choice extends string>(invocation: Invocation, name: string, choices: readonly Choice[]): Choice | undefined {
  const value = stringValue(invocation, name);
  return choices.find((choice) => choice === value);
}

/** Every value of a `multiple` option, in the order given (none: empty). */
export function stringValues(invocation: Invocation, name: string): string[] {
  const value = invocation.values[name];
  return Array.isArray(value) ? value : typeof value === 'string' ? [value] : [];
}

export function flagValue(invocation: Invocation, name: string): boolean {
  return invocation.values[name] === true;
}
