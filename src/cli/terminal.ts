/**
 * What the CLI talks to. Kept apart from `process` so every decision about
 * colours, prompts and progress is made in one place, from the streams and
 * the environment it was actually given.
 */
export interface Terminal {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  /** The directory the CLI was started in. */
  cwd: string;
}

export function processTerminal(): Terminal {
  return { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env, cwd: process.cwd() };
}

/**
 * A reader that stops early (`rewindable checkpoints ... --json | head`)
 * closes the pipe, and Node reports the next write's EPIPE as an unhandled
 * 'error' event with a stack trace. Like other command-line tools, the CLI
 * then just stops writing to that stream: the command still runs to its end
 * (a rewind is never cut short by its reader) and keeps its exit code.
 */
export function stopWritingWhenClosed(stream: NodeJS.WritableStream): void {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    // A closed stream fails later writes with ERR_STREAM_DESTROYED; those are the same closed pipe.
    if (error.code === 'EPIPE' || error.code === 'ERR_STREAM_DESTROYED') return;
    throw error;
  });
}

/**
 * Colours only on a terminal, never when NO_COLOR is set to anything
 * (https://no-color.org), and never on a terminal that declares it has none.
 */
export function wantsColor(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  if (env.TERM === 'dumb') return false;
  return stream.isTTY === true;
}
