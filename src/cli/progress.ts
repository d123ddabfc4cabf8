import type { Terminal } from './terminal.js';

export interface Progress {
  /** The latest state of a long operation, e.g. `Diffing files 120/4000`. */
  update(text: string): void;
  /** The operation ended: show its last state (non-terminal) or wipe the line (terminal). */
  done(): void;
}

const interval = 100;

/**
 * Progress of long operations, always on stderr so stdout stays clean for
 * results and `--json`. On a terminal one line is rewritten in place; when
 * forced with `--progress` elsewhere, states are printed as lines, at most one
 * per interval.
 */
export function createProgress(terminal: Terminal, enabled: boolean): Progress {
  if (!enabled) return { update() {}, done() {} };
  const inPlace = terminal.stderr.isTTY === true;
  let pending: string | undefined;
  let lastWrite = 0;
  const write = (text: string) => {
    terminal.stderr.write(inPlace ? `\r${text}\u001b[K` : `${text}\n`);
    lastWrite = Date.now();
    pending = undefined;
  };
  return {
    update(text) {
      pending = text;
      if (Date.now() - lastWrite >= interval) write(text);
    },
    done() {
      if (inPlace) {
        if (lastWrite !== 0) terminal.stderr.write('\r\u001b[K');
      } else if (pending !== undefined) {
        write(pending);
      }
    },
  };
}
