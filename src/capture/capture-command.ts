import type { Session } from '../session/session.js';
import { now } from '../session/clock.js';
import type { ResolvedCapture } from './capture-options.js';
import { compareSnapshots, snapshotScope, type CommandChanges, type ScopeSnapshot } from './capture-scan.js';

/**
 * The scan after a captured command: compares with the scan before it,
 * backs up as "absent" what the command created, and records what it changed.
 */
export async function recordCommandChanges(
  session: Session,
  capture: ResolvedCapture,
  before: ScopeSnapshot,
  label: string | undefined,
): Promise<CommandChanges> {
  const after = await snapshotScope(session, capture);
  const changes = compareSnapshots(before, after);
  await session.append([
    {
      type: 'capture',
      ...(label !== undefined ? { label } : {}),
      created: changes.created.map((file) => session.storedPath(file)),
      modified: changes.modified.map((file) => session.storedPath(file)),
      deleted: changes.deleted.map((file) => session.storedPath(file)),
      scanStartedAtNs: after.startedAtNs.toString(),
      scanRules: after.rules,
      ...(after.leftOut.length > 0 ? { scanLeftOut: after.leftOut } : {}),
      at: now(),
    },
  ]);
  return changes;
}
