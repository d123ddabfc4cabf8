import { randomUUID } from 'node:crypto';
import { isUtf8 } from 'node:buffer';
import fs from 'node:fs';
import path from 'node:path';
import type fg from 'fast-glob';
import { RewindableError, RewindableErrorCode } from '../errors.js';
import { glanceMany } from '../fs/glance-many.js';
import { commonJsExports } from '../util/commonjs-exports.js';
import { modifiedNear, statSignature, wallClockNs, type StatKey } from '../fs/stat-signature.js';
import type { ResolvedCapture } from './capture-options.js';
import { isInside } from '../paths.js';
import { GitignoreRules } from './gitignore-rules.js';

export interface ScopeEntry {
  /** Absolute path (under the real project root). */
  path: string;
  /** Relative to the project root, POSIX separators. */
  relative: string;
  /** lstat of the entry: links are never followed. */
  stat: fs.BigIntStats;
}

/** One directory the walk listed: its own stat, and what it held. */
export interface ListedDirectory {
  stat: fs.BigIntStats;
  /** Relative paths of the non-directory entries in it (before `.gitignore` rules). */
  entries: string[];
  /**
   * Their absolute paths, made once: the strings the scan index is keyed by.
   * A walk that reuses the listing looks each one up there, and a string made
   * afresh at every walk is joined and hashed afresh (at 500,000 files, 0.4 s
   * of a 2.6 s scan).
   */
  absolutes?: string[];
  /** Relative paths of the directories in it that the walk went into. */
  subdirectories: string[];
}

/** A FIFO, socket or device in scope: never read (opening a FIFO waits for a writer), backed up or restored. */
export interface SkippedSpecialFile {
  path: string;
  reason: 'fifo' | 'socket' | 'device';
}

export interface ScopeWalk {
  /** Regular files and links in scope, except the unchanged ones. */
  entries: ScopeEntry[];
  /** Special files in scope, left out of `entries`: a rewind could not put one back, so no scan reports one as a change. */
  skipped: SkippedSpecialFile[];
  /** Absolute paths in scope that `isUnchanged` vouched for: no stat kept (a large scope stays light in memory). */
  unchanged: string[];
  /**
   * Relative paths the previous walk's listings held that this walk's do not, and paths gone while it looked.
   * Known only when it reused those listings; kept paths that left by other ways (a changed rule) are not in it.
   */
  gone: readonly string[] | undefined;
  /** Files the walk found that `.gitignore` rules leave out (relative paths). */
  ignored: string[];
  /** The exclude globs in force (defaults, options, and directories pruned by the root `.gitignore`). */
  excludePatterns: string[];
  /** What the next walk may reuse. */
  reusable: PreviousWalk;
}

/** What the previous walk found and decided. */
export interface PreviousWalk {
  /** When it started (ns since epoch). */
  startedAtNs: bigint;
  /** Identifies the ignore rules in force: while it is the same, the verdicts below stand. */
  rulesFingerprint: string;
  /** Relative paths it kept. */
  kept: ReadonlySet<string>;
  /** Relative paths it left out by `.gitignore` rules. */
  ignored: ReadonlySet<string>;
  /** Every directory it listed, by relative path ('' is the root); absent when it cannot be reused. */
  directories: ReadonlyMap<string, ListedDirectory> | undefined;
  /** The exclude globs those listings were made with: listings made with others are not reused. */
  listedWith: string;
  /** The `.gitignore` files the walk read (relative paths), in the order it read them. */
  ruleFiles: readonly string[];
}

/**
 * Lists the capture scope. fast-glob walks the tree without following links
 * (so a link loop cannot trap it) and prunes excluded directories.
 *
 * After a first full walk, a directory whose stat is what the previous walk
 * saw (and was not modified within the racy window before it) holds the same
 * entries: adding, removing or renaming an entry changes a directory's mtime.
 * Only changed and new directories are listed again, one level at a time,
 * with the same fast-glob options; git's untracked cache works the same way.
 *
 * `.gitignore` rules found on the way are applied after, and only to paths
 * the previous walk did not judge under the same rules. Each remaining entry
 * is lstat'ed once, which is what change detection compares.
 *
 * `watch`, when given, is called with each directory before it is listed or
 * its listing reused (see `WatchBeforeListing`); excluded and pruned
 * directories are never listed, so never watched.
 */
export async function walkScope(
  root: string,
  capture: ResolvedCapture,
  previous?: PreviousWalk,
  isUnchanged?: (absolute: string, key: StatKey) => boolean,
  watch?: WatchBeforeListing,
): Promise<ScopeWalk> {
  const startedAtNs = wallClockNs();
  const rules = capture.gitignore ? new GitignoreRules(root) : undefined;
  const { list, listingRules, listable } = await scopeLister(root, capture, rules, watch);

  const listOnce = (
    reusable: PreviousWalk | undefined,
  ): { candidates: string[]; absolutes: string[]; departed: string[] | undefined; directories: Map<string, ListedDirectory> | undefined; listedWith: string } => {
    const listedWith = listingRules();
    const directories = listable ? new Map<string, ListedDirectory>() : undefined;
    const candidates: string[] = [];
    const absolutes: string[] = [];
    // Entries of the previous walk's listings that this walk's listings no longer hold (known only when it reuses them).
    let departed: string[] | undefined;
    if (directories === undefined || reusable?.directories === undefined || reusable.listedWith !== listedWith || reusable.directories.get('') === undefined) {
      const found = list();
      for (const entry of found) {
        if (entry.dirent.isDirectory()) continue;
        candidates.push(entry.path);
        absolutes.push(absoluteOf(root, entry.path));
      }
      if (directories !== undefined) recordDirectories(root, found, absolutes, directories);
    } else {
      const gone: string[] = (departed = []);
      const visit = (directory: string) => {
        // Watched before its stat is compared: a listing reused is then what the watch started from.
        watch?.(directory);
        const stat = lstatIfPresent(directory === '' ? root : `${root}/${directory}`);
        if (stat === undefined || !stat.isDirectory()) return; // gone (or replaced): what it held is not listed
        const before = reusable.directories!.get(directory);
        const listing =
          before !== undefined && sameStat(before.stat, stat) && !modifiedNear(stat, reusable.startedAtNs) ? before : listOneLevel(directory, stat, list);
        directories.set(directory, listing);
        if (before !== undefined && listing !== before) for (const entry of entriesLeft(before, listing)) gone.push(entry);
        listing.absolutes ??= listing.entries.map((relative) => absoluteOf(root, relative));
        for (let index = 0; index < listing.entries.length; index += 1) {
          candidates.push(listing.entries[index]!);
          absolutes.push(listing.absolutes[index]!);
        }
        for (const subdirectory of listing.subdirectories) visit(subdirectory);
      };
      visit('');
      // A loop, not `push(...entries)`: spread over the 130,000 files of one directory, the call overflows the stack.
      for (const [directory, before] of reusable.directories) if (!directories.has(directory)) for (const entry of before.entries) gone.push(entry);
    }
    return { candidates, absolutes, departed, directories, listedWith };
  };
  let listed = listOnce(previous);
  let ruleFiles = addRuleFiles(rules, listed.candidates);
  // A nested `.gitignore` may re-include (`!build`) a directory the root rules pruned: list again without that pruning.
  if (listed.listedWith !== listingRules()) {
    listed = listOnce(undefined);
    ruleFiles = addRuleFiles(rules, listed.candidates);
  }
  const { candidates, directories, listedWith } = listed;
  const excludePatterns = [...capture.exclude, ...(rules?.pruningGlobs() ?? [])];
  const rulesFingerprint = rules === undefined ? 'none' : fingerprintOf(root, ruleFiles);
  const filter = rules?.hasRules === true ? rules : undefined;
  const reuse = previous !== undefined && previous.rulesFingerprint === rulesFingerprint ? previous : undefined;

  const ignored: string[] = [];
  const inScope: string[] = [];
  const absolutes: string[] = [];
  // Whether the previous walk kept each path in scope (only when its verdicts stand).
  const wasKept: boolean[] = [];
  for (let index = 0; index < candidates.length; index += 1) {
    const relative = candidates[index]!;
    const known = reuse?.kept.has(relative) === true;
    const leftOut = filter === undefined || known ? false : reuse?.ignored.has(relative) ? true : filter.isIgnored(relative);
    if (leftOut) {
      ignored.push(relative);
    } else {
      inScope.push(relative);
      absolutes.push(listed.absolutes[index]!);
      wasKept.push(known);
    }
  }
  // With an index to compare with, plain lstats of the whole scope first (in one batch): most files are unchanged, and only the others need nanoseconds.
  const vouched = new Array<boolean>(inScope.length).fill(false);
  if (isUnchanged !== undefined) await glanceMany(absolutes, (index, kind, key) => (vouched[index] = kind === 'file' && isUnchanged(absolutes[index]!, key)));
  const entries: ScopeEntry[] = [];
  const skipped: SkippedSpecialFile[] = [];
  const unchanged: string[] = [];
  const kept: string[] = [];
  const keptChanges = { added: [] as string[], removed: [...(listed.departed ?? [])] };
  inScope.forEach((relative, index) => {
    const absolute = absolutes[index]!;
    if (vouched[index]!) {
      kept.push(relative);
      unchanged.push(absolute);
      return;
    }
    const stat = lstatIfPresent(absolute);
    // Removed during the walk: it is simply not there.
    if (stat === undefined) {
      keptChanges.removed.push(relative);
      return;
    }
    kept.push(relative);
    if (!wasKept[index]!) keptChanges.added.push(relative);
    if (stat.isFile() || stat.isSymbolicLink()) entries.push({ path: absolute, relative, stat });
    else skipped.push({ path: absolute, reason: stat.isFIFO() ? 'fifo' : stat.isSocket() ? 'socket' : 'device' });
  });
  return {
    entries,
    skipped,
    unchanged,
    gone: listed.departed === undefined ? undefined : keptChanges.removed,
    ignored,
    excludePatterns,
    reusable: { startedAtNs, rulesFingerprint, kept: keptSet(reuse !== undefined && listed.departed !== undefined ? reuse.kept : undefined, keptChanges, kept), ignored: new Set(ignored), directories, listedWith, ruleFiles },
  };
}

/**
 * Called with each directory (relative, '' the root) before the walk lists
 * it or reuses its listing: a file watcher started there then reports every
 * change the listing does not show.
 */
export type WatchBeforeListing = (directory: string) => void;

/** How a walk lists the scope: all of it, or one directory (see `listOneLevel`), with the rules in force. */
export interface ScopeLister {
  list: (only?: string) => fg.Entry[];
  /** What listings depend on besides the tree: listings made otherwise are not reused. */
  listingRules: () => string;
  /** True when every directory is in scope as a whole (the default include): listings can be reused. */
  listable: boolean;
}

export async function scopeLister(root: string, capture: ResolvedCapture, rules: GitignoreRules | undefined, watch?: WatchBeforeListing): Promise<ScopeLister> {
  const glob = await loadFastGlob();
  // The store, and directories the `.gitignore` rules prune, are hidden from fast-glob's reads of their parent:
  // as globs they would also match files of that name, and a store named `store (v2)` would not match itself.
  const hidden = (relative: string) =>
    (capture.storeDirectory !== undefined && (relative === capture.storeDirectory || relative.startsWith(`${capture.storeDirectory}/`))) || rules?.isPruned(relative) === true;
  const options = { cwd: root, dot: true, onlyFiles: false, followSymbolicLinks: false, ignore: capture.exclude };
  // Reusing listings needs every directory to be in scope as a whole: true for the default include.
  const listable = capture.include.length === 1 && capture.include[0] === '**';
  /** What the include globs match, or, given `only` (a directory, relative), what they match in it, one level deep. */
  const list = (only?: string): fg.Entry[] => {
    try {
      const lineBreakNames: fg.Entry[] = [];
      // A whole listing watches each directory it reads; one level (`only`) is watched by its caller.
      const found = glob.sync(capture.include, { ...options, objectMode: true, fs: readingFileSystem(root, hidden, only, lineBreakNames, only === undefined ? watch : undefined) });
      // fast-glob's patterns never match a name with a line break (`.` in a regular expression stops there); with the
      // default include every file is in scope, so such files are taken as read. (Under a directory so named, none is.)
      if (listable) found.push(...lineBreakNames.filter((entry) => !entry.dirent.isDirectory() && !found.some((other) => other.path === entry.path)));
      return found.filter((entry) => isPlainRelative(entry.path) && (only === undefined || path.posix.dirname(entry.path) === (only === '' ? '.' : only)));
    } catch (error) {
      throw new RewindableError(
        RewindableErrorCode.CAPTURE_FAILED,
        `Could not scan the capture scope under ${root}: ${(error as Error).message}. Fix the permissions or exclude that directory.`,
        { cause: error },
      );
    }
  };

  // What listings depend on besides the tree: listings made otherwise are not reused.
  const listingRules = (): string => JSON.stringify([capture.exclude, capture.storeDirectory ?? null, rules?.pruningGlobs() ?? []]);
  return { list, listingRules, listable };
}

let fastGlob: Promise<typeof fg> | undefined;

/**
 * fast-glob, loaded on the first walk: it is CommonJS and `require`s Node's
 * modules, which an ESM bundle of an application cannot do without help (see
 * docs/packaging.md). Loaded here, a bundle that never captures never runs it.
 */
function loadFastGlob(): Promise<typeof fg> {
  fastGlob ??= import('fast-glob').then((module) => commonJsExports<typeof fg>(module));
  return fastGlob;
}

/**
 * One directory's entries, with the walk's own matching: the include globs
 * and excludes are applied from the root as in a full walk (see `only` in
 * `readingFileSystem`), so both find the same paths whatever the names (no
 * name is turned into a glob, which `+(x)` or `back\\slash` would not match).
 */
export function listOneLevel(directory: string, stat: fs.BigIntStats, list: (only: string) => fg.Entry[]): ListedDirectory {
  const listing: ListedDirectory = { stat, entries: [], subdirectories: [] };
  for (const entry of list(directory)) {
    if (entry.dirent.isDirectory()) listing.subdirectories.push(entry.path);
    else listing.entries.push(entry.path);
  }
  return listing;
}

/** Adds the `.gitignore` files among `candidates` to `rules`; returns them. */
function addRuleFiles(rules: GitignoreRules | undefined, candidates: readonly string[]): string[] {
  if (rules === undefined) return [];
  const ruleFiles = candidates.filter((relative) => path.posix.basename(relative) === '.gitignore');
  for (const file of ruleFiles) rules.addGitignore(file);
  return ruleFiles;
}

/** A path fast-glob returned that stays inside the root: no `..` segment, not absolute (globs are checked too, see capture-options.ts). */
function isPlainRelative(relative: string): boolean {
  return relative !== '' && !relative.startsWith('/') && !relative.split('/').includes('..');
}

/** The characters a regular expression's `.` does not match. */
const lineBreak = /[\n\r\u2028\u2029]/;

/**
 * fast-glob's file system. Directories for which `hidden` (given their path
 * relative to the root) is true are left out of their parent's listing, and
 * nothing is read outside the root; only directories are hidden
 * (`.gitignore`'s `build/` does not leave out a file named `build`). With
 * `only`, a relative directory, the walk reaches it and goes no deeper: its
 * ancestors show only the way to it. `watch` is called with each directory
 * just before it is read.
 */
function readingFileSystem(
  root: string,
  hidden: (relative: string) => boolean,
  only: string | undefined,
  lineBreakNames: fg.Entry[],
  watch: WatchBeforeListing | undefined,
): Partial<fg.FileSystemAdapter> {
  const readdirSync = (directory: string, options: { withFileTypes: true }): fs.Dirent[] => {
    const native = path.relative(root, directory);
    if (native !== '' && !isInside(directory, root)) return [];
    const relative = native.split(path.sep).join('/');
    const prefix = relative === '' ? '' : `${relative}/`;
    let listed: fs.Dirent[];
    if (only !== undefined && relative !== only) {
      if (!(only.startsWith(prefix) && only.length > prefix.length)) return []; // below it, or beside its path
      listed = nextOnTheWay(directory, only.slice(prefix.length).split('/')[0]!);
    } else {
      watch?.(relative);
      listed = decodable(directory, fs.readdirSync(directory, options)).filter((entry) => entry.name !== '');
    }
    const entries = listed.filter((entry) => !(entry.isDirectory() && hidden(`${prefix}${entry.name}`)));
    // Not under a directory so named: the walks never list one, so what it holds stays out of every walk alike.
    if (!lineBreak.test(prefix)) for (const entry of entries) if (lineBreak.test(entry.name)) lineBreakNames.push({ name: entry.name, path: `${prefix}${entry.name}`, dirent: entry });
    return entries;
  };
  return { readdirSync: readdirSync as unknown as fg.FileSystemAdapter['readdirSync'] };
}

/**
 * On the way to the one directory a walk lists: the next directory on its
 * path, `name` in `directory`, as its parent's listing would give it, without
 * reading that listing. The walk's own directories may hold hundreds of
 * entries (a monorepo's `packages/`), and a journaled checkpoint lists a
 * directory or two at every turn: reading each ancestor whole made that
 * grow with the project. Like the listing, it fails when `directory` cannot
 * be read. (Its name came from an earlier listing: valid UTF-8, no line break.)
 */
function nextOnTheWay(directory: string, name: string): fs.Dirent[] {
  fs.accessSync(directory, fs.constants.R_OK);
  const stat = fs.lstatSync(path.join(directory, name), { throwIfNoEntry: false });
  if (stat === undefined) return [];
  const entry = {
    name,
    parentPath: directory,
    path: directory,
    isDirectory: () => stat.isDirectory(),
    isFile: () => stat.isFile(),
    isSymbolicLink: () => stat.isSymbolicLink(),
    isBlockDevice: () => stat.isBlockDevice(),
    isCharacterDevice: () => stat.isCharacterDevice(),
    isFIFO: () => stat.isFIFO(),
    isSocket: () => stat.isSocket(),
  };
  return [entry as fs.Dirent];
}

/**
 * `entries` less those whose names are not valid UTF-8 (Linux allows any
 * bytes in a name). Node gives such a name mangled, so it cannot be named to
 * read, watch or restore what it holds: it stays out of scope in every walk
 * and every journal listing alike, rather than fail each look at it.
 */
function decodable(directory: string, entries: fs.Dirent[]): fs.Dirent[] {
  if (!entries.some((entry) => entry.name.includes('\uFFFD'))) return entries;
  const mangled = new Set(fs.readdirSync(directory, { encoding: 'buffer' }).flatMap((raw) => (isUtf8(raw) ? [] : [raw.toString('utf8')])));
  return entries.filter((entry) => !mangled.has(entry.name));
}

/**
 * After a full walk: the listing of every directory it went into, for the
 * next walk to reuse. Each directory's stat is taken after it was listed: one
 * changed in between has a newer mtime than this walk's start, so the racy
 * rule has the next walk list it again.
 */
function recordDirectories(root: string, found: readonly fg.Entry[], absolutes: readonly string[], directories: Map<string, ListedDirectory>): void {
  const byParent = new Map<string, Required<ListedDirectory>>();
  const listingOf = (directory: string) => {
    let listing = byParent.get(directory);
    if (listing === undefined) {
      listing = { stat: undefined as unknown as fs.BigIntStats, entries: [], absolutes: [], subdirectories: [] };
      byParent.set(directory, listing);
    }
    return listing;
  };
  listingOf('');
  let file = 0;
  for (const entry of found) {
    const parent = path.posix.dirname(entry.path);
    const listing = listingOf(parent === '.' ? '' : parent);
    if (entry.dirent.isDirectory()) {
      listing.subdirectories.push(entry.path);
      listingOf(entry.path);
    } else {
      // `absolutes` holds the non-directory entries of `found` in its order: the very strings the scan goes on with.
      listing.entries.push(entry.path);
      listing.absolutes.push(absolutes[file]!);
      file += 1;
    }
  }
  for (const [directory, listing] of byParent) {
    const stat = lstatIfPresent(directory === '' ? root : `${root}/${directory}`);
    if (stat === undefined || !stat.isDirectory()) return directories.clear(); // the tree moved under the walk: list it all next time
    directories.set(directory, { ...listing, stat });
  }
}

/** Entries of the listing `before` that `after`, the same directory's listing now, no longer holds. */
function entriesLeft(before: ListedDirectory, after: ListedDirectory): string[] {
  const now = new Set(after.entries);
  return before.entries.filter((entry) => !now.has(entry));
}

/**
 * The paths a walk kept, as a set. Building it afresh was 0.2 s of a full
 * scan of 500,000 files, so the previous walk's set is brought up to date in
 * place when it can be: `changes` holds every path kept now that it did not
 * hold, and paths it held that left (listings that lost them, files gone
 * during the walk). It is kept only if it then holds exactly as many paths
 * as `kept`, every one of which it holds: the same set. Otherwise (or with no
 * previous set whose verdicts stand) a new one is built.
 */
function keptSet(previous: ReadonlySet<string> | undefined, changes: { added: readonly string[]; removed: readonly string[] }, kept: readonly string[]): Set<string> {
  if (previous === undefined) return new Set(kept);
  // The previous walk is replaced by this one; the journal updates this set in place too (journal-walk.ts).
  const set = previous as Set<string>;
  for (const relative of changes.removed) set.delete(relative);
  for (const relative of changes.added) set.add(relative);
  return set.size === kept.length ? set : new Set(kept);
}

/** Special files (or anything with a path) sorted by path, as scans report them. */
export function inPathOrder<T extends { path: string }>(list: readonly T[]): T[] {
  return [...list].sort((a, b) => (a.path < b.path ? -1 : 1));
}

/** The absolute path of an entry of the walk (relative, POSIX separators) under `root`. */
export function absoluteOf(root: string, relative: string): string {
  return path.sep === '/' ? `${root}/${relative}` : path.join(root, ...relative.split('/'));
}

/**
 * An entry's lstat, or undefined when nothing is there now: removed (ENOENT), or a directory on its way
 * replaced by a file (ENOTDIR), as a shell's `rm -r a && mv x a` leaves it.
 */
export function lstatIfPresent(absolute: string): fs.BigIntStats | undefined {
  try {
    return fs.lstatSync(absolute, { bigint: true, throwIfNoEntry: false });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
    throw error;
  }
}

function sameStat(a: fs.BigIntStats, b: fs.BigIntStats): boolean {
  return a.ino === b.ino && a.dev === b.dev && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs;
}

/**
 * The `.gitignore` files in force and `.git/info/exclude`, by path and stat
 * signature. One modified within the racy window makes a fingerprint that
 * never matches: its signature cannot yet vouch for its content.
 */
export function fingerprintOf(root: string, ruleFiles: readonly string[]): string {
  const now = wallClockNs();
  const parts: string[] = [];
  for (const relative of [path.join('.git', 'info', 'exclude'), ...ruleFiles]) {
    const stat = lstatIfPresent(path.join(root, relative));
    if (stat !== undefined && modifiedNear(stat, now)) return `changing:${randomUUID()}`;
    parts.push(`${relative}=${stat === undefined ? '-' : statSignature(stat)}`);
  }
  return parts.join('\n');
}
