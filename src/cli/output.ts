import type { z } from 'zod';
import { createStyle, type Style } from './style.js';
import { wantsColor, type Terminal } from './terminal.js';

/** Where a command's words go: results on stdout, notes and errors on stderr, each styled only if its stream is a terminal. */
export class Output {
  /** Styles for stdout. */
  readonly style: Style;
  /** Styles for stderr. */
  readonly errorStyle: Style;

  constructor(private readonly terminal: Terminal) {
    this.style = createStyle(wantsColor(terminal.stdout, terminal.env));
    this.errorStyle = createStyle(wantsColor(terminal.stderr, terminal.env));
  }

  line(text = ''): void {
    this.terminal.stdout.write(`${text}\n`);
  }

  /** Prints `value` as the command's JSON document, after checking it has the documented shape. */
  json<Schema extends z.ZodType>(schema: Schema, value: z.infer<Schema>): void {
    this.terminal.stdout.write(`${JSON.stringify(schema.parse(value), null, 2)}\n`);
  }

  note(text: string): void {
    this.terminal.stderr.write(`${text}\n`);
  }

  error(text: string): void {
    this.terminal.stderr.write(`${this.errorStyle.red('error:')} ${text}\n`);
  }
}
