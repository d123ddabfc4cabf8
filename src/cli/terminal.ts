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
 * Colours on a terminal, unless NO_COLOR is set to anything
 * (https://no-color.org) or the terminal declares it has none (TERM=dumb).
 * FORCE_COLOR decides before all of these (https://force-color.org): set to
 * anything but `0` or `false` it forces colours, into a pipe too and over
 * NO_COLOR, as in Node itself; `0` or `false` turns them off, as Node and
 * chalk read it. Set but empty, it counts as unset.
 */
export function wantsColor(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean {
  const forced = env.FORCE_COLOR;
  if (forced !== undefined && forced !== '') return forced !== '0' && forced.toLowerCase() !== 'false';
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  if (env.TERM === 'dumb') return false;
  return stream.isTTY === true;
}
