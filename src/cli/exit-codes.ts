/**
 * The CLI's exit codes. Scripts can rely on them:
 * 0 the command did what it was asked; 1 it could not (unknown session, bad
 * id, locked session, refused or unconfirmed rewind ...); 2 the command line
 * itself is wrong (unknown command or flag, missing argument).
 */
export const ExitCode = {
  success: 0,
  failure: 1,
  usage: 2,
} as const;

export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** A mistake in the command line: reported with a pointer to `--help`, exit code 2. */
export class UsageError extends Error {
  constructor(
    message: string,
    /** The command whose help to point to, when known. */
    readonly command?: string,
  ) {
    super(message);
    this.name = 'UsageError';
  }
}
