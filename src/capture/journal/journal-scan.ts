import { statKeyOf } from '../../fs/stat-signature.js';
import { fromStoredPath } from '../../paths.js';
import type { Session } from '../../session/session.js';
import type { ResolvedCapture } from '../capture-options.js';
import { checkpointWithScan, knownClean, previousScan, rulesOf, type ScanReport } from '../capture-scan.js';
import { scopeIndexOf, type ScopeIndex } from '../scope-index.js';
import { trackNewFiles } from '../track-new-files.js';
import { JournalFallback, walkJournal } from './journal-walk.js';
import type { FullScanReason, ScopeJournal } from './scope-journal.js';
import { wallClockNs } from '../../fs/stat-signature.js';

/**
 * What a journaled checkpoint needs besides the scope index, kept up to date
 * by each scan so that none has to go over the whole scope again.
 */
interface JournalState {
  index: ScopeIndex;
  /** Relative paths in scope whose content was not known to be their latest backup at the last scan: examined every time, as a full scan does. */
  unclean: Set<string>;
  /** Tracked paths outside the scope (tools' files elsewhere, deleted files): observed at every checkpoint, as a full scan does. */
  outside: Set<string>;
  /** Tracked paths seen so far, in the session's order: new ones are read from a live iterator, never by going over all. */
  tracked: Iterator<string>;
  trackedSeen: number;
  /** Files in scope the scans could not back up (over the cap, unreadable), by absolute path. */
  leftOut: Map<string, { size: number } | 'unreadable'>;
  /** The scope's ignored files, absolute, as the report gives them (rebuilt only when they change). */
  ignored: string[];
  excludePatterns: string[];
}

const states = new WeakMap<Session, JournalState>();

/**
 * A checkpoint with a capture scope and a journal: when the journal can
 * stand for the scope (see `ScopeJournal.uncertainty`), only the paths it
 * names are examined; otherwise the full scan runs, and the journal starts
 * afresh from it.
 */
export async function checkpointWithJournal(session: Session, id: string, capture: ResolvedCapture, journal: ScopeJournal): Promise<ScanReport> {
  await journal.sync();
  const reason = journal.uncertainty() ?? (states.get(session) === undefined || scopeIndexOf(session) !== states.get(session)!.index ? 'journal-starting' : undefined);
  if (reason === undefined) {
    const changes = journal.take();
    try {
      return await journaledCheckpoint(session, id, capture, journal, states.get(session)!, changes);
    } catch (error) {
      if (!(error instanceof JournalFallback)) {
        states.delete(session);
        journal.becomeUncertain('interrupted');
        throw error;
      }
      return fullCheckpoint(session, id, capture, journal, error.reason);
    }
  }
  return fullCheckpoint(session, id, capture, journal, reason);
}

async function fullCheckpoint(session: Session, id: string, capture: ResolvedCapture, journal: ScopeJournal, reason: FullScanReason): Promise<ScanReport> {
  states.delete(session);
  journal.startFullScan(reason);
  const report = await checkpointWithScan(session, id, capture, reason);
  const index = scopeIndexOf(session);
  const directories = index?.walk.directories;
  if (index === undefined || directories === undefined) {
    journal.becomeUncertain('include-globs');
    return report;
  }
  journal.watchScope(directories.keys(), (directory) => {
    const listing = directories.get(directory);
    return listing === undefined ? undefined : { entries: listing.entries, subdirectories: listing.subdirectories, dev: listing.stat.dev };
  });
  states.set(session, stateAfterFullScan(session, index, report));
  return report;
}

/** Everything the journal keeps, from a full scan's index and report (the one pass over the scope). */
function stateAfterFullScan(session: Session, index: ScopeIndex, report: ScanReport): JournalState {
  const prefix = `${session.root}/`;
  const unclean = new Set<string>();
  for (const [absolute, file] of index.files) if (!file.clean) unclean.add(absolute.slice(prefix.length));
  const outside = new Set<string>();
  const tracked = session.state.paths.keys();
  let trackedSeen = 0;
  for (let step = 0, size = session.state.paths.size; step < size; step += 1) {
    const next = tracked.next();
    if (next.done === true) break;
    trackedSeen += 1;
    if (!index.files.has(next.value)) outside.add(next.value);
  }
  const leftOut: JournalState['leftOut'] = new Map();
  for (const entry of report.overCap) leftOut.set(entry.path, { size: entry.size });
  for (const file of report.unreadable) leftOut.set(file, 'unreadable');
  return { index, unclean, outside, tracked, trackedSeen, leftOut, ignored: report.ignored, excludePatterns: report.excludePatterns };
}

async function journaledCheckpoint(
  session: Session,
  id: string,
  capture: ResolvedCapture,
  journal: ScopeJournal,
  state: JournalState,
  changes: ReturnType<ScopeJournal['take']>,
): Promise<ScanReport> {
  const startedAtNs = wallClockNs();
  const { index } = state;
  for (const relative of state.unclean) changes.paths.add(relative);
  const walk = await walkJournal(session.root, capture, index.walk, changes, journal);
  const rules = rulesOf(capture, index.walk);
  const batch = session.newBlobBatch();
  const fresh = await trackNewFiles(session, walk.entries, {
    previous: previousScan(session),
    rules,
    createdDuring: session.state.latestCheckpoint?.id,
    existingAt: id,
    maxFileBytes: capture.maxFileBytes,
    batch,
  });
  if (fresh.created !== undefined) await session.append([fresh.created]);
  for (const entry of walk.entries) state.leftOut.delete(entry.path);
  for (const removed of walk.removed) state.leftOut.delete(removed);
  for (const entry of fresh.overCap) state.leftOut.set(entry.path, { size: entry.size });
  for (const file of fresh.unreadable) state.leftOut.set(file, 'unreadable');
  noteNewlyTracked(session, state);
  const examine = new Set<string>(state.outside);
  for (const entry of walk.entries) examine.add(entry.path);
  for (const removed of walk.removed) examine.add(removed);
  const stats = new Map(walk.entries.map((entry) => [entry.path, entry.stat]));
  const leftOut = [...state.leftOut.keys()].map((file) => session.storedPath(file));
  const prepared = await session.prepareCheckpoint(id, { startedAtNs, stats, examine, rules, leftOut });
  if (walk.ignoredChanged) state.ignored = [...index.walk.ignored].map((relative) => fromStoredPath(relative, session.root));
  const report: ScanReport = {
    scanned: index.walk.kept.size,
    firstBackups: (fresh.existing?.files.length ?? 0) + (fresh.existing?.links.length ?? 0),
    created: [],
    modified: [],
    deleted: [],
    ignored: state.ignored,
    overCap: [],
    unreadable: [],
    excludePatterns: state.excludePatterns,
    via: 'journal',
  };
  for (const [file, left] of state.leftOut) {
    if (left === 'unreadable') report.unreadable.push(file);
    else report.overCap.push({ path: file, size: left.size });
  }
  for (const record of prepared.records) {
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
  await session.append([...prepared.records, ...(fresh.existing ? [fresh.existing] : [])], [...prepared.blobs, ...batch.take()]);
  // What the next scan compares with, for the paths this one looked at.
  const prefix = `${session.root}/`;
  for (const removed of walk.removed) {
    index.files.delete(removed);
    state.unclean.delete(removed.slice(prefix.length));
    if (session.state.paths.has(removed)) state.outside.add(removed);
  }
  for (const entry of walk.entries) {
    const clean = knownClean(session, entry.path, entry.stat);
    index.files.set(entry.path, { key: statKeyOf(entry.stat), clean });
    if (clean) state.unclean.delete(entry.relative);
    else state.unclean.add(entry.relative);
    state.outside.delete(entry.path);
  }
  noteNewlyTracked(session, state);
  return report;
}

/** Paths the session began to track since the last look (a tool's backup, a scan's): those outside the scope are observed from now on. */
function noteNewlyTracked(session: Session, state: JournalState): void {
  const size = session.state.paths.size;
  while (state.trackedSeen < size) {
    const next = state.tracked.next();
    if (next.done === true) break;
    state.trackedSeen += 1;
    if (!state.index.files.has(next.value)) state.outside.add(next.value);
  }
}
