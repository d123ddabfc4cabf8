import fs from 'node:fs';
import path from 'node:path';
import { wallClockNs } from '../../fs/stat-signature.js';
import type { ResolvedCapture } from '../capture-options.js';
import { GitignoreRules } from '../gitignore-rules.js';
import { fingerprintOf, listOneLevel, lstatIfPresent, scopeLister, type ListedDirectory, type PreviousWalk, type ScopeEntry, type SkippedSpecialFile } from '../walk-scope.js';
import type { FullScanReason, JournalChanges } from './scope-journal.js';

/** What the journal's changes did to the scope, the previous walk's record brought up to date in place. */
export interface JournalWalk {
  /** Files in scope the journal names, as they are now (lstat), to compare and back up. */
  entries: ScopeEntry[];
  /** FIFOs, sockets and devices among the paths named (never read, as in a full walk). */
  skipped: SkippedSpecialFile[];
  /** Absolute paths that were in scope and no longer are (deleted, moved away, now ignored). */
  removed: string[];
  /** True when the set of ignored files changed. */
  ignoredChanged: boolean;
}

/** The journal cannot stand for this checkpoint: take the full scan. */
export class JournalFallback extends Error {
  constructor(readonly reason: FullScanReason) {
    super(`journal fallback: ${reason}`);
  }
}

/** Mutable views of what the previous walk kept: the journal updates them in place rather than copy 500,000 entries. */
interface MutableWalk {
  startedAtNs: bigint;
  kept: Set<string>;
  ignored: Set<string>;
  directories: Map<string, ListedDirectory>;
}

export interface Watching {
  /** Undefined once watched; otherwise why the journal cannot stand for this checkpoint. */
  watch(directory: string): FullScanReason | undefined;
  unwatch(directory: string): void;
}

/**
 * Brings the previous walk's record up to date with what the journal
 * saw, touching only the paths it names and the listings of the directories
 * it names: directories whose entries changed are listed again (with the
 * walk's own matching, see `listOneLevel`), new directories are watched and
 * then listed (so a change after the listing raises an event, and one before
 * it is in the listing), directories gone take what they held out of scope,
 * and the files named are lstat'ed.
 *
 * A change to the rules (a `.gitignore` or `.git/info/exclude` named or
 * changed, another fingerprint) throws `JournalFallback`: every verdict must
 * be made again. So does a directory in scope on another device.
 */
export async function walkJournal(root: string, capture: ResolvedCapture, previous: PreviousWalk, changes: JournalChanges, watching: Watching): Promise<JournalWalk> {
  const startedAtNs = wallClockNs();
  if (previous.directories === undefined) throw new JournalFallback('include-globs');
  const walk = previous as unknown as MutableWalk;
  const rules = capture.gitignore ? new GitignoreRules(root) : undefined;
  for (const file of previous.ruleFiles) rules?.addGitignore(file);
  const lister = await scopeLister(root, capture, rules);
  if (lister.listingRules() !== previous.listedWith) throw new JournalFallback('rules-changed');
  if ((rules === undefined ? 'none' : fingerprintOf(root, previous.ruleFiles)) !== previous.rulesFingerprint) throw new JournalFallback('rules-changed');
  // A rule file the walk read is vouched for by the fingerprint above (its stat signature); any other is new.
  const knownRuleFiles = new Set(previous.ruleFiles);
  for (const entry of changes.paths) if (isRuleFile(entry) && !knownRuleFiles.has(entry)) throw new JournalFallback('rules-changed');
  const filter = rules?.hasRules === true ? rules : undefined;
  const rootStat = fs.lstatSync(root, { bigint: true });

  const examine = new Set<string>();
  const removed: string[] = [];
  let ignoredChanged = false;
  const absoluteOf = (relative: string) => `${root}/${relative}`;

  const removeEntry = (relative: string) => {
    if (walk.kept.delete(relative)) removed.push(absoluteOf(relative));
    if (walk.ignored.delete(relative)) ignoredChanged = true;
    examine.delete(relative);
  };
  const addEntry = (relative: string) => {
    if (isRuleFile(relative)) throw new JournalFallback('rules-changed');
    if (filter?.isIgnored(relative) === true) {
      if (!walk.ignored.has(relative)) ignoredChanged = true;
      walk.ignored.add(relative);
      walk.kept.delete(relative);
    } else {
      examine.add(relative);
    }
  };
  const removeTree = (directory: string) => {
    const listing = walk.directories.get(directory);
    walk.directories.delete(directory);
    watching.unwatch(directory);
    if (listing === undefined) return;
    for (const entry of listing.entries) removeEntry(entry);
    for (const subdirectory of listing.subdirectories) removeTree(subdirectory);
  };
  const addTree = (directory: string) => {
    // Watched before it is listed: see above.
    const refused = watching.watch(directory);
    if (refused !== undefined) throw new JournalFallback(refused);
    const stat = lstatIfPresent(absoluteOf(directory));
    if (stat === undefined || !stat.isDirectory()) return; // gone again: its parent's listing changed, so the next checkpoint sees it
    if (stat.dev !== rootStat.dev) throw new JournalFallback('mount-in-scope');
    const listing = listOneLevel(directory, stat, lister.list);
    walk.directories.set(directory, listing);
    for (const entry of listing.entries) addEntry(entry);
    for (const subdirectory of listing.subdirectories) addTree(subdirectory);
  };

  // Known directories the journal names: renamed in their parent, or no longer the same inode, they are taken out of
  // scope with all they held; the parent's listing brings back what is there now, watched and listed afresh.
  const relist = new Set(changes.directories);
  for (const entry of changes.paths) {
    const known = walk.directories.get(entry);
    if (known === undefined) continue;
    const stat = lstatIfPresent(absoluteOf(entry));
    if (changes.renamed.has(entry) || stat === undefined || !stat.isDirectory() || stat.ino !== known.stat.ino || stat.dev !== known.stat.dev) {
      removeTree(entry);
      relist.add(parentOf(entry));
    }
  }
  // Listings, parents before children (a child a parent's listing dropped is gone already).
  for (const directory of [...relist].sort((a, b) => depthOf(a) - depthOf(b))) {
    const before = walk.directories.get(directory);
    if (before === undefined) continue; // not in scope (excluded, ignored, or gone with its parent)
    const stat = lstatIfPresent(directory === '' ? root : absoluteOf(directory));
    if (stat === undefined || !stat.isDirectory() || stat.ino !== before.stat.ino) {
      if (directory === '') throw new JournalFallback('root-recreated');
      removeTree(directory);
      continue;
    }
    const listing = listOneLevel(directory, stat, lister.list);
    walk.directories.set(directory, listing);
    const nowEntries = new Set(listing.entries);
    const nowSubdirectories = new Set(listing.subdirectories);
    const hadEntries = new Set(before.entries);
    for (const entry of before.entries) if (!nowEntries.has(entry)) removeEntry(entry);
    for (const subdirectory of before.subdirectories) if (!nowSubdirectories.has(subdirectory)) removeTree(subdirectory);
    for (const entry of listing.entries) if (!hadEntries.has(entry)) addEntry(entry);
    const hadSubdirectories = new Set(before.subdirectories);
    for (const subdirectory of listing.subdirectories) if (!hadSubdirectories.has(subdirectory) || !walk.directories.has(subdirectory)) addTree(subdirectory);
  }
  // Files the journal names that were in scope and still are: their content or metadata may have changed.
  for (const entry of changes.paths) if (walk.kept.has(entry)) examine.add(entry);

  const entries: ScopeEntry[] = [];
  const skipped: SkippedSpecialFile[] = [];
  for (const relative of examine) {
    const absolute = absoluteOf(relative);
    const stat = lstatIfPresent(absolute);
    // Removed (or replaced by a directory) since its listing: not there; its parent's listing changed, so it is looked at again.
    if (stat === undefined || stat.isDirectory()) {
      removeEntry(relative);
      continue;
    }
    walk.kept.add(relative);
    if (stat.isFile() || stat.isSymbolicLink()) entries.push({ path: absolute, relative, stat });
    else skipped.push({ path: absolute, reason: stat.isFIFO() ? 'fifo' : stat.isSocket() ? 'socket' : 'device' });
  }
  walk.startedAtNs = startedAtNs;
  return { entries, skipped, removed, ignoredChanged };
}

function isRuleFile(relative: string): boolean {
  return path.posix.basename(relative) === '.gitignore';
}

function parentOf(relative: string): string {
  const parent = path.posix.dirname(relative);
  return parent === '.' ? '' : parent;
}

function depthOf(relative: string): number {
  return relative === '' ? 0 : relative.split('/').length;
}
