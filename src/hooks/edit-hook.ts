import path from 'node:path';
import { RewindableError, RewindableErrorCode } from '../errors.js';
import { canonicalPath, type PathScope } from '../paths.js';
import { trackFirstBackup } from '../session/track-edit.js';
import { ensureCheckpoint } from './ensure-checkpoint.js';
import type { HookEvent } from './hook-event.js';
import type { HookSession } from './hook-session.js';

/** First backups of the files a file tool is about to change, durable before it returns; a path that cannot be backed up throws, and the call is blocked. */
export async function backUpFiles({ session, scope }: HookSession, event: Extract<HookEvent, { kind: 'edit' }>): Promise<void> {
  await ensureCheckpoint(session);
  for (const given of event.paths) {
    const absolute = hookPath(path.resolve(event.cwd, given), scope);
    await trackFirstBackup(session, absolute, given);
  }
}

/** `canonicalPath`, with the remedy for a path outside the project said in the hook command's terms: its reader runs the CLI, not the library. */
function hookPath(given: string, scope: PathScope): string {
  try {
    return canonicalPath(given, scope);
  } catch (error) {
    if (!RewindableError.hasCode(error, 'PATH_OUTSIDE_PROJECT')) throw error;
    const { path: input, resolved } = error.details ?? { path: given };
    throw new RewindableError(
      RewindableErrorCode.PATH_OUTSIDE_PROJECT,
      `${input} is outside the project root ${scope.root}` +
        (resolved !== undefined && resolved !== input ? ` (it resolves to ${resolved})` : '') +
        '. Only files inside the project can be backed up; to allow a directory outside it, add --extra-root DIR to the "rewindable hook" command.',
      { cause: error, details: error.details },
    );
  }
}
