import { resolveCapture, type ResolvedCapture } from '../capture/capture-options.js';
import type { HookSession } from './hook-session.js';

/**
 * The hooks' capture scope: the project, minus `.git`, `node_modules`, the
 * store and what `.gitignore` leaves out. A resident hook server builds it
 * here too, once per event, for the session it keeps open.
 */
export function captureScope({ session, scope }: HookSession): ResolvedCapture {
  return resolveCapture(true, session.root, scope.storeDirectory)!;
}
