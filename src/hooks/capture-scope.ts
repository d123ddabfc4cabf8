import { resolveCapture, type ResolvedCapture } from '../capture/capture-options.js';
import type { HookSession } from './hook-session.js';

/**
 * The hooks' capture scope: the project, minus `.git`, `node_modules`, the
 * store and what `.gitignore` leaves out. A resident hook server builds it
 * here too, once per event, for the session it keeps open.
 */
export function captureScope({ session, scope }: HookSession): ResolvedCapture {
  const options = true; // FILE-WATCHER JOURNAL: a resident server would pass { journal: true } here once the capture scope offers it.
  return resolveCapture(options, session.root, scope.storeDirectory)!;
}
