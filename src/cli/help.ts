import { commonOptions, globalOptions, type Command, type CommandEntry, type OptionDefinition } from './command.js';

/** The first line of the overview, and what a usage error of no command ends with. */
export const generalUsage = 'Usage: rewindable [options] <command> [arguments] [options]';

/** The overview `rewindable --help` prints. */
export function generalHelp(commands: readonly CommandEntry[], version: string): string {
  const width = Math.max(...commands.map((command) => command.name.length));
  return [
    `rewindable ${version}: list, diff and rewind the file checkpoints of AI agent sessions.`,
    '',
    generalUsage,
    '',
    'Commands:',
    ...commands.map((command) => `  ${command.name.padEnd(width)}  ${command.summary}`),
    '',
    'Options, before or after the command (given twice, the later wins):',
    ...optionLines(globalOptions),
    '',
    'Exit codes: 0 success, 1 the operation failed (unknown session, bad id, locked session,',
    'refused or unconfirmed rewind or revert), 2 usage error (unknown command or option, missing argument).',
    'Colours only on a terminal and when NO_COLOR is not set; FORCE_COLOR=1 forces them, FORCE_COLOR=0 turns them off.',
    '',
    "Run 'rewindable <command> --help' for a command's details.",
  ].join('\n');
}

/** `Usage: rewindable diff SESSION CHECKPOINT [FILE...] [options]`: the first line of the command's help, and what its usage errors end with. */
export function commandUsage(command: Command): string {
  const { optional = [], required, repeated } = command.positionals;
  return ['Usage: rewindable', command.name, ...optional.map((name) => `[${name}]`), ...required, ...(repeated !== undefined ? [`[${repeated}...]`] : []), '[options]'].join(' ');
}

/** What `rewindable <command> --help` prints. */
export function commandHelp(command: Command): string {
  return [
    commandUsage(command),
    '',
    wrap(command.description, 78),
    '',
    'Options:',
    ...optionLines({ ...command.options, ...commonOptions }),
    '',
    'Examples:',
    ...command.examples.map((example) => `  ${example}`),
  ].join('\n');
}

function optionLines(options: Record<string, OptionDefinition>): string[] {
  const labels = Object.entries(options).map(([name, option]) => {
    const flag = `${option.short !== undefined ? `-${option.short}, ` : ''}--${name}${option.value !== undefined ? ` ${option.value}` : ''}`;
    return { flag, description: option.description };
  });
  const width = Math.max(12, ...labels.map((label) => label.flag.length));
  return labels.map((label) => `  ${label.flag.padEnd(width)}  ${label.description}`);
}

/** Wraps each paragraph at `width` columns, on spaces. */
function wrap(text: string, width: number): string {
  return text
    .split('\n\n')
    .map((paragraph) => {
      const lines: string[] = [];
      let current = '';
      for (const word of paragraph.split(/\s+/)) {
        if (current !== '' && current.length + 1 + word.length > width) {
          lines.push(current);
          current = word;
        } else current = current === '' ? word : `${current} ${word}`;
      }
      if (current !== '') lines.push(current);
      return lines.join('\n');
    })
    .join('\n\n');
}
