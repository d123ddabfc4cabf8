import path from 'node:path';
import { canonicalPath } from '../paths.js';
import { trackFirstBackup } from '../session/track-edit.js';
import { ensureCheckpoint } from './ensure-checkpoint.js';
import type { HookEvent } from './hook-event.js';
import type { HookSession } from './hook-session.js';

/** First backups of the files a file tool is about to change, durable before it returns; a path that cannot be backed up throws, and the call is blocked. */
export async function backUpFiles({ session, scope }: HookSession, event: Extract<HookEvent, { kind: 'edit' }>): Promise<void> {
  await ensureCheckpoint(session);
  for (const given of event.paths) {
    const absolute = canonicalPath(path.resolve(event.cwd, given), scope);
    await trackFirstBackup(session, absolute, given);
  }
}
