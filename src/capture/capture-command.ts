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
  await appendCommandRecord(session, changes, after, label);
  return changes;
}

/** The `capture` record of one command: what it changed, and what the scan after it knew. */
export async function appendCommandRecord(
  session: Session,
  changes: CommandChanges,
  scan: { startedAtNs: bigint; rules: string; leftOut: readonly string[] },
  label: string | undefined,
): Promise<void> {
  await session.append([
    {
      type: 'capture',
      ...(label !== undefined ? { label } : {}),
      created: changes.created.map((file) => session.storedPath(file)),
      modified: changes.modified.map((file) => session.storedPath(file)),
      deleted: changes.deleted.map((file) => session.storedPath(file)),
      scanStartedAtNs: scan.startedAtNs.toString(),
      scanRules: scan.rules,
      ...(scan.leftOut.length > 0 ? { scanLeftOut: [...scan.leftOut] } : {}),
      at: now(),
    },
  ]);
}
