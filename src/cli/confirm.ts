import readline from 'node:readline';
import type { Terminal } from './terminal.js';

/**
 * Asks a yes/no question on stderr and reads the answer line from stdin.
 * Only `y` or `yes` (any case) agree; anything else, or the end of input,
 * declines. The terminal keeps its own line editing (readline's would write
 * cursor escape codes, even under NO_COLOR); Ctrl-C ends the process before
 * anything is written.
 */
export function confirm(terminal: Terminal, question: string): Promise<boolean> {
  return new Promise((resolve) => {
    const prompt = readline.createInterface({ input: terminal.stdin, terminal: false });
    let answered = false;
    const finish = (agreed: boolean) => {
      if (answered) return;
      answered = true;
      prompt.close();
      resolve(agreed);
    };
    terminal.stderr.write(question);
    prompt.once('line', (answer) => finish(/^y(es)?$/i.test(answer.trim())));
    prompt.once('close', () => finish(false));
  });
}
