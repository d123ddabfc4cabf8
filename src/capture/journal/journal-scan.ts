import { sameStatKey, statKeyOf, wallClockNs, type StatKey } from '../../fs/stat-signature.js';
import { fromStoredPath } from '../../paths.js';
import type { LogRecord } from '../../schemas.js';
import type { Session } from '../../session/session.js';
import type { BlobBatch } from '../../store/blob-batch.js';
import { appendCommandRecord, recordCommandChanges } from '../capture-command.js';
import type { ResolvedCapture } from '../capture-options.js';
import { addCheckpointChanges, checkpointWithScan, knownClean, previousScan, rulesOf, snapshotScope, type CommandChanges, type ScanReport, type ScopeSnapshot } from '../capture-scan.js';
import { keepScopeIndex, scopeIndexOf, TrackedOutside, type ScopeIndex } from '../scope-index.js';
import { inPathOrder, lstatIfPresent, type ScopeEntry, type SkippedSpecialFile } from '../walk-scope.js';
import { trackNewFiles, type BetweenFiles, type NewFiles } from '../track-new-files.js';
import { JournalFallback, walkJournal, type JournalWalk } from './journal-walk.js';
import type { FullScanReason, JournalChanges, ScopeJournal } from './scope-journal.js';

/**
 * What a journaled checkpoint needs besides the scope index, kept up to date
 * by each scan so that none has to go over the whole scope again.
 */
interface JournalState {
  index: ScopeIndex;
  /** Relative paths in scope whose content was not known to be their latest backup at the last scan: examined every time, as a full scan does. */
  unclean: Set<string>;
  /** Files in scope the scans could not back up (over the cap, unreadable), by absolute path. */
  leftOut: Map<string, { size: number } | 'unreadable'>;
  /** FIFOs, sockets and devices in scope, by absolute path: reported by every scan, as a full scan finds them all. */
  skipped: Map<string, SkippedSpecialFile>;
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
  const report = await checkpointWithScan(session, id, capture, reason, (directory) => journal.watchBeforeListing(directory));
  const index = scopeIndexOf(session);
  if (index !== undefined) startJournal(session, journal, index, report);
  else journal.becomeUncertain('include-globs');
  return report;
}

/** After a full scan that watched each directory before listing it: the journal stands for the scope from here on. */
function startJournal(session: Session, journal: ScopeJournal, index: ScopeIndex, report: Pick<ScanReport, 'overCap' | 'unreadable' | 'ignored' | 'excludePatterns' | 'skipped'>): boolean {
  const directories = index.walk.directories;
  if (directories === undefined) {
    journal.becomeUncertain('include-globs');
    return false;
  }
  journal.watchScope(directories.keys(), (directory) => {
    const listing = directories.get(directory);
    return listing === undefined ? undefined : { entries: listing.entries, subdirectories: listing.subdirectories, dev: listing.stat.dev, ino: listing.stat.ino };
  });
  states.set(session, stateAfterFullScan(session, index, report));
  return true;
}

/** Everything the journal keeps, from a full scan's index and report (the one pass over the scope). */
function stateAfterFullScan(session: Session, index: ScopeIndex, report: Pick<ScanReport, 'overCap' | 'unreadable' | 'ignored' | 'excludePatterns' | 'skipped'>): JournalState {
  const prefix = `${session.root}/`;
  const unclean = new Set<string>();
  for (const [absolute, file] of index.files) if (!file.clean) unclean.add(absolute.slice(prefix.length));
  const leftOut: JournalState['leftOut'] = new Map();
  for (const entry of report.overCap) leftOut.set(entry.path, { size: entry.size });
  for (const file of report.unreadable) leftOut.set(file, 'unreadable');
  const skipped = new Map((report.skipped ?? []).map((special) => [special.path, special]));
  return { index, unclean, leftOut, skipped, ignored: report.ignored, excludePatterns: report.excludePatterns };
}

/**
 * Other names in scope of the files found with more than one link. A write
 * through one name raises its event in that name's directory only, and a new
 * link tells only the file's own watchers that its count changed: every name
 * of such a file is looked at now, and (linked, so never known clean) at
 * every checkpoint while it stays linked.
 */
function addOtherNames(root: string, index: ScopeIndex, walk: JournalWalk): void {
  // Only a file whose stat moved since the last look: a new link, or a write through any name, moves its ctime.
  // One that kept its stat had nothing happen to it, and the whole index is not searched again at every checkpoint.
  const moved = (entry: ScopeEntry) => {
    const before = index.files.get(entry.path)?.key;
    return before === undefined || !sameStatKey(before, statKeyOf(entry.stat));
  };
  const linked = new Set(walk.entries.filter((entry) => entry.stat.isFile() && entry.stat.nlink > 1n && moved(entry)).map((entry) => `${entry.stat.dev}:${entry.stat.ino}`));
  if (linked.size === 0) return;
  const named = new Set(walk.entries.map((entry) => entry.path));
  for (const [absolute, file] of index.files) {
    if (named.has(absolute) || !linked.has(`${file.key.dev}:${file.key.ino}`)) continue;
    const stat = lstatIfPresent(absolute);
    if (stat !== undefined && !stat.isDirectory()) walk.entries.push({ path: absolute, relative: absolute.slice(root.length + 1), stat });
  }
}

/** The special files in scope, in path order, as a full scan lists them. */
function skippedOf(state: JournalState): SkippedSpecialFile[] {
  return inPathOrder([...state.skipped.values()]);
}

/** What a journaled scan found, before the scan index is brought up to date (see `keepJournaledScan`). */
interface JournaledScan {
  startedAtNs: bigint;
  walk: JournalWalk;
  fresh: NewFiles;
  batch: BlobBatch;
  rules: string;
  /** Stored paths of the files in scope that could not be backed up. */
  leftOut: string[];
}

/**
 * The journal's paths examined: new files tracked (created during `createdDuring`, or there before and
 * backed up at `existingAt`), and what the scope left out brought up to date.
 */
async function journaledScan(
  session: Session,
  capture: ResolvedCapture,
  journal: ScopeJournal,
  state: JournalState,
  changes: JournalChanges,
  turn: { createdDuring: string | undefined; existingAt: string },
): Promise<JournaledScan> {
  const startedAtNs = wallClockNs();
  const { index } = state;
  for (const relative of state.unclean) changes.paths.add(relative);
  const walk = await walkJournal(session.root, capture, index.walk, changes, journal);
  addOtherNames(session.root, index, walk);
  const rules = rulesOf(capture, index.walk);
  const batch = session.newBlobBatch();
  const fresh = await trackNewFiles(session, walk.entries, { previous: previousScan(session), rules, ...turn, maxFileBytes: capture.maxFileBytes, batch });
  for (const entry of walk.entries) state.leftOut.delete(entry.path);
  for (const removed of walk.removed) state.leftOut.delete(removed);
  for (const path of [...walk.entries.map((entry) => entry.path), ...walk.removed]) state.skipped.delete(path);
  for (const special of walk.skipped) state.skipped.set(special.path, special);
  for (const entry of fresh.overCap) state.leftOut.set(entry.path, { size: entry.size });
  for (const file of fresh.unreadable) state.leftOut.set(file, 'unreadable');
  if (walk.ignoredChanged) state.ignored = [...index.walk.ignored].map((relative) => fromStoredPath(relative, session.root));
  const leftOut = [...state.leftOut.keys()].map((file) => session.storedPath(file));
  return { startedAtNs, walk, fresh, batch, rules, leftOut };
}

/** What the next scan compares with, for the paths this one looked at. */
function keepJournaledScan(session: Session, state: JournalState, walk: JournalWalk): void {
  const { index } = state;
  const prefix = `${session.root}/`;
  for (const removed of walk.removed) {
    index.files.delete(removed);
    state.unclean.delete(removed.slice(prefix.length));
    index.outside.left(removed);
  }
  for (const entry of walk.entries) {
    const clean = knownClean(session, entry.path, entry.stat);
    index.files.set(entry.path, { key: statKeyOf(entry.stat), clean });
    if (clean) state.unclean.delete(entry.relative);
    else state.unclean.add(entry.relative);
    index.outside.entered(entry.path);
  }
  index.outside.catchUp();
}

async function journaledCheckpoint(session: Session, id: string, capture: ResolvedCapture, journal: ScopeJournal, state: JournalState, changes: JournalChanges): Promise<ScanReport> {
  const { index } = state;
  const scan = await journaledScan(session, capture, journal, state, changes, { createdDuring: session.state.latestCheckpoint?.id, existingAt: id });
  const { walk, fresh, batch } = scan;
  // "Absent" backups belong to the previous turn, which exists already; store them first.
  if (fresh.created !== undefined) await session.append([fresh.created]);
  index.outside.catchUp();
  const examine = new Set<string>(index.outside.paths);
  for (const entry of walk.entries) examine.add(entry.path);
  for (const removed of walk.removed) examine.add(removed);
  for (const special of walk.skipped) examine.add(special.path);
  const stats = new Map(walk.entries.map((entry) => [entry.path, entry.stat]));
  const prepared = await session.prepareCheckpoint(id, { startedAtNs: scan.startedAtNs, stats, examine, rules: scan.rules, leftOut: scan.leftOut });
  const report: ScanReport = {
    scanned: index.walk.kept.size,
    firstBackups: (fresh.existing?.files.length ?? 0) + (fresh.existing?.links.length ?? 0),
    created: [],
    modified: [],
    deleted: [],
    ignored: [...state.ignored],
    overCap: [],
    unreadable: [],
    excludePatterns: [...state.excludePatterns],
    ...(state.skipped.size > 0 ? { skipped: skippedOf(state) } : {}),
    via: 'journal',
  };
  for (const [file, left] of state.leftOut) {
    if (left === 'unreadable') report.unreadable.push(file);
    else report.overCap.push({ path: file, size: left.size });
  }
  addCheckpointChanges(session, prepared.records, report);
  await session.append([...prepared.records, ...(fresh.existing ? [fresh.existing] : [])], [...prepared.blobs, ...batch.take()]);
  keepJournaledScan(session, state, walk);
  return report;
}

/** The scan before a captured command, from the journal when it can stand for the scope. */
export type CommandScanBefore = { via: 'journal'; index: ScopeIndex } | { via: 'full'; snapshot: ScopeSnapshot };

/**
 * The scan before a command (see `snapshotScope`): with the journal, files
 * that appeared are backed up against the current checkpoint, and the scan
 * index brought up to date, so the scan after compares with it.
 * `betweenFiles` may stop a full scan before it records anything.
 */
export async function scanBeforeCommand(session: Session, capture: ResolvedCapture, journal: ScopeJournal | undefined, betweenFiles?: BetweenFiles): Promise<CommandScanBefore> {
  const state = states.get(session);
  if (journal !== undefined && state !== undefined && scopeIndexOf(session) === state.index) {
    await journal.sync();
    if (journal.uncertainty() === undefined) {
      const scan = await journaledCommandScan(session, capture, journal, state);
      if (scan !== undefined) return { via: 'journal', index: state.index };
    }
  }
  if (journal?.enabled === true) return fullScanBeforeCommand(session, capture, journal, betweenFiles);
  return { via: 'full', snapshot: await snapshotScope(session, capture, undefined, betweenFiles) };
}

/**
 * The full scan before a command, which starts the journal as a full
 * checkpoint does: each directory is watched before it is listed, and the
 * scan's stats become the index, so the scan after the command, and every
 * scan until the journal loses track, examines only what changed. The first
 * shell command of a session's first turn is then the only one to cost a
 * full scan.
 */
async function fullScanBeforeCommand(session: Session, capture: ResolvedCapture, journal: ScopeJournal, betweenFiles?: BetweenFiles): Promise<CommandScanBefore> {
  await journal.sync();
  states.delete(session);
  journal.startFullScan(journal.uncertainty() ?? 'journal-starting');
  const snapshot = await snapshotScope(session, capture, (directory) => journal.watchBeforeListing(directory), betweenFiles);
  const { walk } = snapshot;
  if (walk === undefined) return { via: 'full', snapshot };
  const files: ScopeIndex['files'] = new Map();
  for (const entry of walk.entries) files.set(entry.path, { key: statKeyOf(entry.stat), clean: knownClean(session, entry.path, entry.stat) });
  const index: ScopeIndex = { files, walk: walk.reusable, outside: new TrackedOutside(session, files) };
  keepScopeIndex(session, index);
  const ignored = walk.ignored.map((relative) => fromStoredPath(relative, session.root));
  if (!startJournal(session, journal, index, { overCap: snapshot.overCap, unreadable: snapshot.unreadable, ignored, excludePatterns: walk.excludePatterns, skipped: snapshot.skipped })) return { via: 'full', snapshot };
  return { via: 'journal', index };
}

/**
 * The scan after a command, and what it changed: created (not in scope
 * before), modified (another stat than before), deleted. With the journal
 * before it, the scan index holds every file's stat from before the command.
 */
export async function recordCommandChangesWithJournal(
  session: Session,
  capture: ResolvedCapture,
  journal: ScopeJournal | undefined,
  before: CommandScanBefore,
  label: string | undefined,
): Promise<CommandChanges> {
  if (before.via === 'full') return recordCommandChanges(session, capture, before.snapshot, label);
  const { index } = before;
  await journal!.sync();
  let changes: CommandChanges;
  let record: { startedAtNs: bigint; rules: string; leftOut: string[] };
  // A checkpoint taken while the command ran may have started the journal afresh: then only the full scan compares.
  const state = states.get(session);
  const scan = journal!.uncertainty() === undefined && state?.index === index ? await journaledCommandScan(session, capture, journal!, state) : undefined;
  if (scan !== undefined) {
    changes = { created: [], modified: [], deleted: [], overCap: [], unreadable: [] };
    for (const entry of scan.walk.entries) {
      const previous = scan.keysBefore.get(entry.path);
      if (previous === undefined) changes.created.push(entry.path);
      else if (!sameStatKey(previous, statKeyOf(entry.stat))) changes.modified.push(entry.path);
    }
    const present = new Set(scan.walk.entries.map((entry) => entry.path));
    for (const removed of scan.walk.removed) if (!present.has(removed) && scan.keysBefore.get(removed) !== undefined) changes.deleted.push(removed);
    for (const [file, left] of state!.leftOut) {
      if (left === 'unreadable') changes.unreadable.push(file);
      else changes.overCap.push({ path: file, size: left.size });
    }
    if (state!.skipped.size > 0) changes.skipped = skippedOf(state!);
    record = { startedAtNs: scan.startedAtNs, rules: scan.rules, leftOut: scan.leftOut };
  } else {
    // The journal lost track during the command: a full scan, compared with the stats the index kept from before it.
    states.delete(session);
    const after = await snapshotScope(session, capture);
    changes = { created: [], modified: [], deleted: [], overCap: after.overCap, unreadable: after.unreadable };
    for (const entry of after.entries ?? []) {
      const previous = index.files.get(entry.path);
      if (previous === undefined) changes.created.push(entry.path);
      else if (!sameStatKey(previous.key, statKeyOf(entry.stat))) changes.modified.push(entry.path);
    }
    for (const file of index.files.keys()) if (!after.signatures.has(file)) changes.deleted.push(file);
    if (after.skipped !== undefined && after.skipped.length > 0) changes.skipped = inPathOrder(after.skipped);
    record = { startedAtNs: after.startedAtNs, rules: after.rules, leftOut: after.leftOut };
  }
  for (const list of [changes.created, changes.modified, changes.deleted]) list.sort();
  await appendCommandRecord(session, changes, record, label);
  return changes;
}

/** A journaled scan between checkpoints; undefined when the journal could not stand for it (the journal is then uncertain). */
async function journaledCommandScan(
  session: Session,
  capture: ResolvedCapture,
  journal: ScopeJournal,
  state: JournalState,
): Promise<(JournaledScan & { keysBefore: Map<string, StatKey | undefined> }) | undefined> {
  const current = session.state.latestCheckpoint!;
  const changes = journal.take();
  try {
    const scan = await journaledScan(session, capture, journal, state, changes, { createdDuring: current.id, existingAt: current.id });
    const records: LogRecord[] = [scan.fresh.created, scan.fresh.existing].filter((record) => record !== undefined);
    if (records.length > 0) await session.append(records, scan.batch.take());
    session.state.noteScan(scan.startedAtNs, { scanRules: scan.rules, scanLeftOut: scan.leftOut });
    const keysBefore = new Map<string, StatKey | undefined>();
    for (const entry of scan.walk.entries) keysBefore.set(entry.path, state.index.files.get(entry.path)?.key);
    for (const removed of scan.walk.removed) keysBefore.set(removed, state.index.files.get(removed)?.key);
    keepJournaledScan(session, state, scan.walk);
    return { ...scan, keysBefore };
  } catch (error) {
    states.delete(session);
    journal.becomeUncertain(error instanceof JournalFallback ? error.reason : 'interrupted');
    if (error instanceof JournalFallback) return undefined;
    throw error;
  }
}
