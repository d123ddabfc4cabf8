import { RewindableError, RewindableErrorCode } from '../errors.js';
import { parseHunkId } from '../text/patch-hunks.js';
import type { RewindFilesResult } from '../rewind/result.js';
import { stringValues, type Invocation, type OptionDefinition } from './command.js';
import { UsageError } from './exit-codes.js';

/** `rewind --hunk ID`: the ids `diff` shows after each `@@` line. */
export const hunkOption: OptionDefinition = {
  type: 'string',
  value: 'ID',
  multiple: true,
  description: 'Rewind only this hunk, by the id rewindable diff shows after its @@ line; repeat for more. The rest of its file, and every other file, stays as it is.',
};

/** The `--hunk` values, each once, checked for the shape of an id; none given: undefined. */
export function selectedHunks(invocation: Invocation): string[] | undefined {
  const ids = stringValues(invocation, 'hunk');
  if (ids.length === 0) return undefined;
  const malformed = ids.find((id) => parseHunkId(id) === undefined);
  if (malformed !== undefined) {
    throw new UsageError(`--hunk takes a hunk id as rewindable diff shows it after an @@ line, such as 76db366af71a-0; got ${JSON.stringify(malformed)}.`, 'rewind');
  }
  return [...new Set(ids)];
}

/**
 * The rewind's answer, with a stale hunk id (`HUNK_NOT_FOUND`) told in the
 * words of the caller (the CLI, the timeline page): the library's message
 * points to `diffFiles()`, and `advice` says where to find fresh ids. A
 * preview reports it as a refusal, a real run (the file edited while the
 * prompt was open) throws it; both wrote nothing.
 */
export async function explainStaleHunk(rewind: Promise<RewindFilesResult>, advice: string): Promise<RewindFilesResult> {
  const stale = (id: string | undefined, cause: unknown) =>
    new RewindableError(
      RewindableErrorCode.HUNK_NOT_FOUND,
      `${id !== undefined ? `Hunk ${id} is` : 'A hunk chosen is'} not in what a rewind would change now: its file, or the file at the checkpoint, ` +
        `changed since the diff that showed it. Nothing was changed. ${advice}`,
      { cause, ...(id !== undefined ? { details: { hunk: id } } : {}) },
    );
  let result: RewindFilesResult;
  try {
    result = await rewind;
  } catch (error) {
    if (RewindableError.hasCode(error, RewindableErrorCode.HUNK_NOT_FOUND)) throw stale(error.details?.hunk, error);
    throw error;
  }
  if (result.canRewind || result.errorCode !== RewindableErrorCode.HUNK_NOT_FOUND) return result;
  const hunk = result.errorDetails?.hunk;
  throw stale(typeof hunk === 'string' ? hunk : undefined, result.error);
}
