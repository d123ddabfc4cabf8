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
 * Colours only on a terminal, never when NO_COLOR is set to anything
 * (https://no-color.org), and never on a terminal that declares it has none.
 */
export function wantsColor(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  if (env.TERM === 'dumb') return false;
  return stream.isTTY === true;
}
