import type fs from 'node:fs';
import { createHash } from 'node:crypto';
import { isUnchangedSince, sameStatKey, statKeyOf, statSignature, wallClockNs, type StatKey } from '../fs/stat-signature.js';
import { fromStoredPath } from '../paths.js';
import type { LogRecord } from '../schemas.js';
import { sameState } from '../session/session-state.js';
import type { Session } from '../session/session.js';
import { keepScopeIndex, scopeIndexOf, TrackedOutside, type ScopeIndex } from './scope-index.js';
import type { ResolvedCapture } from './capture-options.js';
import { trackNewFiles, type BetweenFiles, type NewFiles, type PreviousScan } from './track-new-files.js';
import type { FullScanReason } from './journal/scope-journal.js';
import { absoluteOf, inPathOrder, walkScope, type PreviousWalk, type ScopeEntry, type ScopeWalk, type SkippedSpecialFile, type WatchBeforeListing } from './walk-scope.js';

/** What a scan of the capture scope found. Paths are absolute. */
export interface ScanReport {
  /** Files in scope (after exclusions). */
  scanned: number;
  /** Files backed up for the first time because they were already there (the first scan, or no longer excluded). */
  firstBackups: number;
  /** Created, modified and deleted since the previous checkpoint, by anyone; each list in path order. */
  created: string[];
  modified: string[];
  deleted: string[];
  /** Files the walk found that `.gitignore` rules leave out. Never backed up. */
  ignored: string[];
  /** Files over the capture size cap: not backed up, so a rewind cannot restore them. */
  overCap: Array<{ path: string; size: number }>;
  /** Files in scope that could not be opened for reading (permissions): not backed up either. */
  unreadable: string[];
  /** Exclude globs in force, including directories the root `.gitignore` prunes. */
  excludePatterns: string[];
  /** FIFOs, sockets and devices in scope (present when there are any): never read, backed up or restored, so never listed as changes. */
  skipped?: SkippedSpecialFile[];
  /** `journal`: only the paths a file watcher saw change were examined (`capture.journal`); `full`: the whole scope was. */
  via: 'journal' | 'full';
  /** Why the whole scope was scanned (`via: 'full'`): see docs/capture-journal.md. */
  fullScanReason?: FullScanReason;
}

/** What one command changed in the capture scope. Paths are absolute. */
export interface CommandChanges {
  created: string[];
  modified: string[];
  deleted: string[];
  overCap: Array<{ path: string; size: number }>;
  unreadable: string[];
  /** FIFOs, sockets and devices in scope after the command (present when there are any): a rewind cannot restore them, so they are not changes. */
  skipped?: SkippedSpecialFile[];
}

/**
 * A checkpoint with a capture scope: scan, back up files that appeared
 * (created during the turn: "absent"; there before: their content), then take
 * the checkpoint, reusing the scan's stat of every file to skip unchanged ones.
 * `watch` starts the journal's watch of each directory before it is listed.
 */
export async function checkpointWithScan(
  session: Session,
  id: string,
  capture: ResolvedCapture,
  fullScanReason: FullScanReason = 'journal-off',
  watch?: WatchBeforeListing,
): Promise<ScanReport> {
  const startedAtNs = wallClockNs();
  const previous = scopeIndexOf(session);
  // A file whose stat is what the previous scan saw, and whose content was then known to be its
  // latest backup, is unchanged: the checkpoint need not look at it (git's index does the same).
  // Without a previous index (a first scan) nothing can be vouched for: no batch glance.
  const isUnchanged =
    previous === undefined
      ? undefined
      : (absolute: string, key: StatKey) => {
          const before = previous.files.get(absolute);
          return before !== undefined && before.clean && sameStatKey(before.key, key);
        };
  const walk = await walkScope(session.root, capture, previous?.walk, isUnchanged, watch);
  const batch = session.newBlobBatch();
  const rules = rulesOf(capture, walk.reusable);
  const fresh = await trackNewFiles(session, walk.entries, {
    previous: previousScan(session),
    rules,
    createdDuring: session.state.latestCheckpoint?.id,
    existingAt: id,
    maxFileBytes: capture.maxFileBytes,
    batch,
  });
  // "Absent" backups belong to the previous turn, which exists already; store them first.
  if (fresh.created !== undefined) await session.append([fresh.created]);
  const stats = new Map(walk.entries.map((entry) => [entry.path, entry.stat]));
  const left = previous === undefined ? [] : leftTheIndex(session.root, previous, walk, stats);
  // The checkpoint record carries what this scan knew; appending it notes that in the session state.
  const prepared = await session.prepareCheckpoint(id, {
    startedAtNs,
    stats,
    examine: previous === undefined ? undefined : examined(previous, walk, left),
    rules,
    leftOut: leftOutBy(fresh).map((file) => session.storedPath(file)),
  });
  const report: ScanReport = {
    scanned: walk.entries.length + walk.unchanged.length,
    firstBackups: (fresh.existing?.files.length ?? 0) + (fresh.existing?.links.length ?? 0),
    created: [],
    modified: [],
    deleted: [],
    ignored: walk.ignored.map((relative) => fromStoredPath(relative, session.root)),
    overCap: fresh.overCap,
    unreadable: fresh.unreadable,
    excludePatterns: walk.excludePatterns,
    ...(walk.skipped.length > 0 ? { skipped: walk.skipped } : {}),
    via: 'full',
    fullScanReason,
  };
  addCheckpointChanges(session, prepared.records, report);
  await session.append([...prepared.records, ...(fresh.existing ? [fresh.existing] : [])], [...prepared.blobs, ...batch.take()]);
  keepScopeIndex(session, nextIndex(session, walk, previous, left));
  return report;
}

/** Each file a checkpoint record of `records` names, as created, deleted or modified against its latest version (before `records` are appended); each list in path order. */
export function addCheckpointChanges(session: Session, records: readonly LogRecord[], report: Pick<ScanReport, 'created' | 'modified' | 'deleted'>): void {
  for (const record of records) {
    if (record.type !== 'checkpoint') continue;
    for (const file of record.files) {
      const absolute = fromStoredPath(file.path, session.root);
      const before = session.state.latestVersion(session.state.paths.get(absolute)!).state;
      const after = file.state.kind;
      if (before.kind === 'absent' && after !== 'absent') report.created.push(absolute);
      else if (before.kind !== 'absent' && after === 'absent') report.deleted.push(absolute);
      else report.modified.push(absolute);
    }
  }
  for (const list of [report.created, report.modified, report.deleted]) list.sort();
}

/**
 * Index paths this walk did not find: deleted, or no longer in scope. The walk names those that left its
 * listings or vanished while it looked; as every path it vouched for is in the index, a count tells whether
 * they are all. Otherwise (a rule changed, say) the whole index is gone over.
 */
function leftTheIndex(root: string, previous: ScopeIndex, walk: ScopeWalk, stats: ReadonlyMap<string, unknown>): string[] {
  let found = walk.unchanged.length;
  for (const entry of walk.entries) if (previous.files.has(entry.path)) found += 1;
  const missing = previous.files.size - found;
  if (missing === 0) return [];
  const left = new Set<string>();
  const named = [...(walk.gone ?? []).map((relative) => absoluteOf(root, relative)), ...walk.skipped.map((special) => special.path)];
  for (const path of named) if (previous.files.has(path) && !stats.has(path)) left.add(path);
  if (left.size === missing) return [...left];
  const walked = new Set(walk.unchanged);
  return [...previous.files.keys()].filter((path) => !walked.has(path) && !stats.has(path));
}

/**
 * The tracked paths a checkpoint after a scan examines: those the walk did not vouch for (its entries), those
 * that left the index, and those outside it. Every other tracked path is a file in scope the walk found unchanged.
 */
function examined(previous: ScopeIndex, walk: ScopeWalk, left: readonly string[]): Set<string> {
  previous.outside.catchUp();
  const examine = new Set(previous.outside.paths);
  for (const entry of walk.entries) examine.add(entry.path);
  for (const path of left) examine.add(path);
  return examine;
}

/**
 * What the next scan compares with: each file's stat now, whether its content is known to be its latest backup,
 * and the walk's verdicts. The previous index's map is updated in place: copying it (500,000 entries) cost as much
 * as the rest of the scan's work on them. A scan that compares with it afterwards (a command's, taken before this
 * checkpoint) then compares with this checkpoint, as it does after a journaled one.
 */
function nextIndex(session: Session, walk: ScopeWalk, previous: ScopeIndex | undefined, left: readonly string[]): ScopeIndex {
  const files: ScopeIndex['files'] = previous?.files ?? new Map();
  for (const entry of walk.entries) files.set(entry.path, { key: statKeyOf(entry.stat), clean: knownClean(session, entry.path, entry.stat) });
  for (const path of left) files.delete(path);
  if (previous === undefined) return { files, walk: walk.reusable, outside: new TrackedOutside(session, files) };
  for (const entry of walk.entries) previous.outside.entered(entry.path);
  for (const path of left) previous.outside.left(path);
  return { files, walk: walk.reusable, outside: previous.outside };
}

/**
 * True when the file's content, as `stat` shows it, is known to be its
 * latest backup: the next scan need not look at it unless its stat changes.
 * Never for a file with another hard link: written through that other name
 * (outside the scope, say), it raises no watcher event here, so the journal
 * must look at it every time (the full scan's lstat would see it anyway).
 */
export function knownClean(session: Session, absolute: string, stat: fs.BigIntStats): boolean {
  if (stat.nlink > 1n) return false;
  const tracked = session.state.paths.get(absolute);
  const seen = tracked?.lastSeen;
  return tracked !== undefined && seen !== undefined && sameState(seen.state, session.state.latestVersion(tracked).state) && isUnchangedSince(seen.observed, stat);
}

export interface ScopeSnapshot {
  startedAtNs: bigint;
  /** Every file in scope, with its stat (absent from snapshots rebuilt from a log). */
  entries?: readonly ScopeEntry[];
  /** Stat signature of every file in scope. */
  signatures: Map<string, string>;
  overCap: Array<{ path: string; size: number }>;
  unreadable: string[];
  /** The rules it applied, and the files it found but could not back up, for the record of the command. */
  rules: string;
  leftOut: string[];
  /** FIFOs, sockets and devices in scope. */
  skipped?: SkippedSpecialFile[];
  /** The walk itself, for the journal to start from (absent from snapshots read back from disk). */
  walk?: ScopeWalk;
}

/**
 * A scan between checkpoints, around one command: files that appeared are
 * backed up against the current checkpoint (so a rewind deletes what the
 * command created), and every file's stat signature is kept for comparison.
 * `watch` starts the journal's watch of each directory before it is listed;
 * `betweenFiles` may stop the scan before it records anything.
 */
export async function snapshotScope(session: Session, capture: ResolvedCapture, watch?: WatchBeforeListing, betweenFiles?: BetweenFiles): Promise<ScopeSnapshot> {
  const startedAtNs = wallClockNs();
  const walk = await walkScope(session.root, capture, scopeIndexOf(session)?.walk, undefined, watch);
  const current = session.state.latestCheckpoint!;
  const batch = session.newBlobBatch();
  const rules = rulesOf(capture, walk.reusable);
  const fresh = await trackNewFiles(session, walk.entries, {
    previous: previousScan(session),
    rules,
    createdDuring: current.id,
    existingAt: current.id,
    maxFileBytes: capture.maxFileBytes,
    batch,
    betweenFiles,
  });
  const records: LogRecord[] = [fresh.created, fresh.existing].filter((record) => record !== undefined);
  if (records.length > 0) await session.append(records, batch.take());
  const leftOut = leftOutBy(fresh).map((file) => session.storedPath(file));
  // No record for the scan before a command (the one after it is noted again by its `capture` record).
  session.state.noteScan(startedAtNs, { scanRules: rules, scanLeftOut: leftOut });
  return {
    startedAtNs,
    entries: walk.entries,
    signatures: new Map(walk.entries.map((entry) => [entry.path, statSignature(entry.stat)])),
    overCap: fresh.overCap,
    unreadable: fresh.unreadable,
    rules,
    leftOut,
    skipped: walk.skipped,
    walk,
  };
}

/** What the previous scan knew, as the session state keeps it; undefined before the first scan. */
export function previousScan(session: Session): PreviousScan | undefined {
  const { lastScanStartedAtNs, lastScanRules, lastScanLeftOut } = session.state;
  if (lastScanStartedAtNs === undefined) return undefined;
  return { startedAtNs: lastScanStartedAtNs, rules: lastScanRules, leftOut: lastScanLeftOut, ignored: scopeIndexOf(session)?.walk.ignored };
}

/** Identifies the scope's rules: the options that shape it, and the `.gitignore` files in force (by stat signature). */
export function rulesOf(capture: ResolvedCapture, walk: PreviousWalk): string {
  const options = JSON.stringify([capture.include, capture.exclude, capture.gitignore, capture.storeDirectory ?? null]);
  return createHash('sha256').update(`${options}\n${walk.rulesFingerprint}`).digest('hex').slice(0, 32);
}

/** Files the scan found in scope but could not back up. */
export function leftOutBy(fresh: NewFiles): string[] {
  return [...fresh.overCap.map((entry) => entry.path), ...fresh.unreadable];
}

export function compareSnapshots(before: ScopeSnapshot, after: ScopeSnapshot): CommandChanges {
  const changes: CommandChanges = { created: [], modified: [], deleted: [], overCap: after.overCap, unreadable: after.unreadable };
  if (after.skipped !== undefined && after.skipped.length > 0) changes.skipped = inPathOrder(after.skipped);
  for (const [file, signature] of after.signatures) {
    const previous = before.signatures.get(file);
    if (previous === undefined) changes.created.push(file);
    else if (previous !== signature) changes.modified.push(file);
  }
  for (const file of before.signatures.keys()) if (!after.signatures.has(file)) changes.deleted.push(file);
  for (const list of [changes.created, changes.modified, changes.deleted]) list.sort();
  return changes;
}
