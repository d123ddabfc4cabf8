import { recordCommandChanges } from '../capture/capture-command.js';
import { snapshotScope } from '../capture/capture-scan.js';
import { recordCommandChangesWithJournal, scanBeforeCommand, type CommandScanBefore } from '../capture/journal/journal-scan.js';
import type { BetweenFiles } from '../capture/track-new-files.js';
import { captureScope } from './capture-scope.js';
import { ensureCheckpoint } from './ensure-checkpoint.js';
import type { HookEvent } from './hook-event.js';
import type { HookSession } from './hook-session.js';
import { ShellScanState } from './shell-scan-state.js';

/**
 * The scans before commands, also kept in memory by the process that took
 * them, for a resident server whose after-hook of the same call comes to the
 * same session object: it need not read back and parse every file's
 * signature. The file stays the truth for any other process.
 */
const scansInMemory = new WeakMap<object, Map<string, CommandScanBefore>>();
const keptScans = 8;

/**
 * Before a shell command: a scan of the project, which backs up every file
 * the session does not know yet (the first scan: all of them), so whatever
 * the command removes or rewrites can be restored. After it: a scan that
 * backs up what the command created as "absent" (a rewind deletes it), and
 * the command's record, compared with the scan before when that hook ran.
 * A resident server's session that follows the scope with a file watcher
 * (`opened.journal`) examines only what the watcher saw change.
 */
export async function scanAroundShell(opened: HookSession, event: Extract<HookEvent, { kind: 'shell-before' | 'shell-after' }>, storeDir: string): Promise<void> {
  const { session, journal } = opened;
  await ensureCheckpoint(session);
  const capture = captureScope(opened);
  const scans = new ShellScanState(storeDir, session.root, session.sessionId);
  if (event.kind === 'shell-before') {
    const before: CommandScanBefore = journal === undefined ? { via: 'full', snapshot: await snapshotScope(session, capture) } : await scanBeforeCommand(session, capture, journal);
    if (event.toolUseId !== undefined) {
      // On disk for an after-hook run by another process; a journaled scan is only good to the process that watches.
      if (before.via === 'full') scans.save(event.toolUseId, before.snapshot);
      let kept = scansInMemory.get(session);
      if (kept === undefined) scansInMemory.set(session, (kept = new Map()));
      kept.set(event.toolUseId, before);
      // A call whose after-hook never comes (denied, interrupted) is not kept for ever.
      if (kept.size > keptScans) kept.delete(kept.keys().next().value!);
    }
    return;
  }
  const kept = event.toolUseId !== undefined ? scansInMemory.get(session)?.get(event.toolUseId) : undefined;
  if (kept !== undefined) scansInMemory.get(session)!.delete(event.toolUseId!);
  if (kept?.via === 'journal' && journal !== undefined) {
    await recordCommandChangesWithJournal(session, capture, journal, kept, event.command);
    scans.remove(event.toolUseId!);
    return;
  }
  const before = kept?.via === 'full' ? kept.snapshot : event.toolUseId !== undefined ? scans.take(event.toolUseId) : undefined;
  if (before === undefined) {
    // No scan before it to compare with: the scan still backs up what appeared since the last recorded one, the record lists nothing.
    await snapshotScope(session, capture);
    return;
  }
  // What the process of the before-hook knew: its scan is the one a file the command created is new since.
  const known = session.state.lastScanStartedAtNs;
  if (known === undefined || before.startedAtNs > known) session.state.noteScan(before.startedAtNs, { scanRules: before.rules, scanLeftOut: before.leftOut });
  await recordCommandChanges(session, capture, { ...before, overCap: [], unreadable: [] }, event.command);
  scans.remove(event.toolUseId!);
}

/**
 * The session's first scan, taken by a resident server in the background
 * after the session's first prompt, before any shell command asks for it:
 * every file in scope is backed up against the current checkpoint and the
 * server's journal starts, so the first Bash hook examines only what changed
 * since. Only with a journal (a scan without one would be walked again by
 * that hook anyway); false when there is none or the session has scanned.
 * `betweenFiles` may stop it before it records anything (see `BetweenFiles`).
 */
export async function scanEarly(opened: HookSession, betweenFiles?: BetweenFiles): Promise<boolean> {
  const { session, journal } = opened;
  if (journal?.enabled !== true || session.state.lastScanStartedAtNs !== undefined || session.state.latestCheckpoint === undefined) return false;
  await scanBeforeCommand(session, captureScope(opened), journal, betweenFiles);
  return true;
}
