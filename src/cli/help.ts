import { commonOptions, type Command, type CommandEntry, type OptionDefinition } from './command.js';

/** The overview `rewindable --help` prints. */
export function generalHelp(commands: readonly CommandEntry[], version: string): string {
  const width = Math.max(...commands.map((command) => command.name.length));
  return [
    `rewindable ${version}: list, diff and rewind the file checkpoints of AI agent sessions.`,
    '',
    'Usage: rewindable <command> [options]',
    '',
    'Commands:',
    ...commands.map((command) => `  ${command.name.padEnd(width)}  ${command.summary}`),
    '',
    'Options:',
    ...optionLines(commonOptions),
    '  --version     Print the version.',
    '',
    'Exit codes: 0 success, 1 the operation failed (unknown session, bad id, locked session,',
    'refused or unconfirmed rewind), 2 usage error (unknown command or option, missing argument).',
    'Colours only when stdout is a terminal and NO_COLOR is not set.',
    '',
    "Run 'rewindable <command> --help' for a command's details.",
  ].join('\n');
}

/** What `rewindable <command> --help` prints. */
export function commandHelp(command: Command): string {
  const { optional = [], required, repeated } = command.positionals;
  const usage = ['rewindable', command.name, ...optional.map((name) => `[${name}]`), ...required, ...(repeated !== undefined ? [`[${repeated}...]`] : []), '[options]'].join(' ');
  return [
    `Usage: ${usage}`,
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
