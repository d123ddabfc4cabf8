import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { lstatIfPresent } from '../walk-scope.js';

/**
 * Why a checkpoint with a capture scope took the full scan rather than the
 * journal: the journal is off, still starting, or could have missed a change.
 */
export type FullScanReason =
  /** The `capture.journal` option is off (the default). */
  | 'journal-off'
  /** The watchers were not all in place before the previous scan: nothing proves what happened meanwhile. */
  | 'journal-starting'
  /** So many events since the previous checkpoint that the kernel's queue may have overflowed (it drops events silently). */
  | 'overflow'
  /** A watcher reported an error, an event without a name, or the sync point never came back. */
  | 'watcher-error'
  /** The project root itself was deleted, moved or replaced. */
  | 'root-recreated'
  /** A watched directory was moved while events about it were being read: they may name the wrong path. */
  | 'directory-moved'
  /** A `.gitignore`, `.git/info/exclude` or the scope's options changed: every verdict must be made again. */
  | 'rules-changed'
  /** The kernel refused another watch, or the journal reached half of `fs.inotify.max_user_watches`: it stays off for this manager. */
  | 'watch-limit'
  /** A directory in scope is on another filesystem (a mount point), which the journal does not follow. */
  | 'mount-in-scope'
  /** `include` globs other than the default `**`: the journal does not evaluate them. */
  | 'include-globs'
  /** Not Linux: only inotify (through Node's `fs.watch`) gives the ordering the journal's sync point relies on. */
  | 'unsupported-platform'
  /** The project is on a network or FUSE filesystem, where changes made by other machines raise no events. */
  | 'unsupported-filesystem'
  /** The process was suspended (or its event loop blocked) longer than the bound: events may have been dropped meanwhile. */
  | 'suspended'
  /** The previous journaled checkpoint failed part way: what it had taken from the journal is gone. */
  | 'interrupted';

/** What the journal holds for the next checkpoint: paths (relative, POSIX) that may have changed, and directories whose listing may have. */
export interface JournalChanges {
  paths: Set<string>;
  directories: Set<string>;
  /**
   * Paths a directory's listing said were created, deleted or renamed. A
   * directory among them is watched and listed afresh: a new directory may
   * reuse the inode number of the one deleted (an `rm -r a && mkdir a`), and
   * the old watch died with it.
   */
  renamed: Set<string>;
}

export interface ScopeJournalOptions {
  /** Events since the previous checkpoint from which the journal is taken as overflowed (tests lower it). */
  eventBound?: number;
  /** How long the event loop may stall before the journal is taken as uncertain, in ms. */
  stallBoundMs?: number;
}

/** Bounds the tests lower to force a fallback without creating thousands of events. Not part of the public API. */
let watchLimit: number | undefined;

/**
 * The most watches one journal takes: half the per-user limit. The user's
 * editor and other tools need watches of their own; taking every one left
 * would make theirs fail.
 */
function ownWatchLimit(): number {
  if (watchLimit === undefined) {
    try {
      watchLimit = Math.floor(Number(fs.readFileSync('/proc/sys/fs/inotify/max_user_watches', 'utf8')) / 2) || Infinity;
    } catch {
      watchLimit = Infinity; // unknown: the kernel's own refusal still stops the journal
    }
  }
  return watchLimit;
}

export const journalTestHooks: { eventBound?: number; stallBoundMs?: number; maxWatches?: number } = {};

/** Filesystems (`statfs` types) whose changes may come from elsewhere, without an event here. */
const remoteFilesystemTypes: ReadonlySet<number> = new Set([
  0x6969, // NFS
  0xff534d42, // CIFS
  0xfe534d42, // SMB2
  0x517b, // SMB
  0x65735546, // FUSE (sshfs, and the like)
  0x01021997, // 9p (WSL's Windows drives, VM shares)
  0x564c, // NCP
  0x00c36400, // Ceph
  0x47504653, // GPFS
  0x5346414f, // AFS
]);

/** How often the stall detector ticks, in ms. */
const tickMs = 1000;

/**
 * A journal of the paths in the capture scope that may have changed since the
 * previous checkpoint, from one non-recursive `fs.watch` per directory in
 * scope (on Linux, inotify). A checkpoint then examines only those paths and
 * the listings of their directories; anything that could have made the
 * journal miss a change makes `uncertainty()` name a reason, and that
 * checkpoint takes the full scan, which also starts the journal afresh.
 *
 * Watchers never keep the process alive (`persistent: false`, and `unref`);
 * `stop()` closes them all. Memory: one watcher per directory in scope, and
 * at most `eventBound` dirty paths (beyond that the journal is dropped).
 */
export class ScopeJournal {
  private readonly watchers = new Map<string, fs.FSWatcher>();
  /** The inode each watch was made on, to tell a directory replaced under the same name. */
  private readonly watchedInodes = new Map<string, number>();
  /**
   * Watched directories that reported themselves deleted or moved: their
   * watch is dead or follows another directory. Kept even while the journal
   * is uncertain, because the inode check cannot tell: a directory deleted
   * and made again may get the same inode number (ext4 reuses them at once).
   */
  private readonly lostWatches = new Set<string>();
  private changes: JournalChanges = { paths: new Set(), directories: new Set(), renamed: new Set() };
  private events = 0;
  /** Why the journal cannot be trusted until the next full scan; undefined when it can. */
  private uncertain: FullScanReason | undefined = 'journal-starting';
  /** Why the journal can never be used by this manager. */
  private readonly disabled: FullScanReason | undefined;
  /** A reason that holds as long as the scope is what it is (a mount in it); checked again at each full scan. */
  private blocked: FullScanReason | undefined;
  private readonly eventBound: number;
  private readonly stallBoundMs: number;
  private rootIdentity: { dev: number; ino: number } | undefined;
  private cookieDirectory: string | undefined;
  private cookieWatcher: fs.FSWatcher | undefined;
  private readonly cookies = new Map<string, () => void>();
  private cookieCount = 0;
  private timer: NodeJS.Timeout | undefined;
  private lastTick = Date.now();
  private stopped = false;
  /** True once the kernel refused a watch: the journal stopped for good. */
  private disabledByLimit = false;

  constructor(
    private readonly root: string,
    include: readonly string[],
    options: ScopeJournalOptions = {},
  ) {
    this.eventBound = options.eventBound ?? journalTestHooks.eventBound ?? defaultEventBound();
    this.stallBoundMs = options.stallBoundMs ?? journalTestHooks.stallBoundMs ?? 30_000;
    this.disabled = disabledReason(root, include);
    if (this.disabled !== undefined) return;
    this.timer = setInterval(() => {
      const now = Date.now();
      if (now - this.lastTick > this.stallBoundMs) this.becomeUncertain('suspended');
      this.lastTick = now;
    }, tickMs);
    this.timer.unref();
  }

  /** True when the journal may ever be used. */
  get enabled(): boolean {
    return this.disabled === undefined && !this.stopped;
  }

  /** Why the next checkpoint must take the full scan, or undefined when the journal can stand for it. Call after `sync()`. */
  uncertainty(): FullScanReason | undefined {
    if (this.disabled !== undefined) return this.disabled;
    if (this.stopped) return this.disabledByLimit ? 'watch-limit' : 'watcher-error';
    if (this.blocked !== undefined) return this.blocked;
    if (Date.now() - this.lastTick > this.stallBoundMs + tickMs) this.becomeUncertain('suspended');
    if (this.uncertain === undefined && !this.rootUnchanged()) this.becomeUncertain('root-recreated');
    return this.uncertain;
  }

  /**
   * Waits until every event of a change made before this call has been
   * handled: writes a file in a private directory that is also watched, and
   * waits for its event. Sound on Linux because libuv reads the events of all
   * of a loop's `fs.watch` handles from one inotify descriptor, in the order
   * the kernel queued them, and a change's event is queued before the system
   * call that made it returns: once the cookie's event is handled, so is every
   * event queued before it. The cookie stays out of the project, where it
   * would show up to the user and to git.
   */
  async sync(): Promise<void> {
    if (!this.enabled || this.cookieDirectory === undefined) return;
    const name = `cookie-${process.pid}-${(this.cookieCount += 1)}`;
    const file = path.join(this.cookieDirectory, name);
    const arrived = new Promise<boolean>((resolve) => {
      // Not unref'd: a checkpoint waiting for its cookie keeps the process alive, as any pending I/O does.
      const timeout = setTimeout(() => resolve(false), 5000);
      this.cookies.set(name, () => {
        clearTimeout(timeout);
        resolve(true);
      });
    });
    try {
      fs.writeFileSync(file, '');
    } catch {
      this.cookies.delete(name);
      this.becomeUncertain('watcher-error');
      return;
    }
    const ok = await arrived;
    this.cookies.delete(name);
    fs.rmSync(file, { force: true });
    if (!ok) this.becomeUncertain('watcher-error');
  }

  /** Hands over what the journal holds, and starts a new one: events from now on are for the next checkpoint. */
  take(): JournalChanges {
    const taken = this.changes;
    this.changes = { paths: new Set(), directories: new Set(), renamed: new Set() };
    this.events = 0;
    return taken;
  }

  /**
   * A full scan is starting, after `sync()`: what the journal held no longer
   * matters. From here on it is trusted again, once every directory the scan
   * lists is watched: the scan calls `watchBeforeListing` with each, and
   * `watchScope` after it checks them all. Events that arrive during the
   * scan are kept for the next checkpoint.
   */
  startFullScan(reason: FullScanReason): void {
    this.take();
    // Watchers that may watch the wrong directory (the root replaced, a watch that failed) are made again.
    if (reason === 'root-recreated' || reason === 'watcher-error' || reason === 'directory-moved') for (const directory of [...this.watchers.keys()]) this.unwatch(directory);
    this.uncertain = undefined;
    this.rootIdentity = identityOf(this.root);
    this.ensureCookieWatcher();
  }

  /**
   * During a full scan, just before it lists a directory (relative) or reuses
   * its listing: watches it, so a change made after the listing raises an
   * event and one made before it is in the listing. A watch made earlier on a
   * directory since replaced under the same name is made again. A refusal
   * leaves the journal uncertain (or stopped); the scan goes on.
   */
  watchBeforeListing(directory: string): void {
    if (!this.enabled) return;
    if (this.watchers.has(directory) && !this.lostWatches.has(directory)) {
      const stat = lstatIfPresent(this.absoluteOf(directory));
      if (stat !== undefined && Number(stat.ino) === this.watchedInodes.get(directory)) return;
      this.unwatch(directory);
    }
    this.watch(directory);
  }

  /**
   * After a full scan: makes sure every directory it listed (`directories`,
   * relative, '' the root) is watched, and lets go of the others. A directory
   * the scan did not watch before listing it (or whose watch follows another
   * directory now) may have changed after its listing and before its watch:
   * it is listed again at the next checkpoint, and everything it held
   * examined. `listingOf` gives what the scan found in it.
   */
  watchScope(
    directories: Iterable<string>,
    listingOf: (directory: string) => { entries: readonly string[]; subdirectories: readonly string[]; dev: bigint; ino: bigint } | undefined,
  ): void {
    if (!this.enabled) return;
    this.ensureCookieWatcher();
    const inScope = new Set<string>();
    const rootDev = this.rootIdentity?.dev;
    this.blocked = undefined;
    for (const directory of directories) {
      inScope.add(directory);
      const listing = listingOf(directory);
      if (listing !== undefined && rootDev !== undefined && Number(listing.dev) !== rootDev) this.blocked = 'mount-in-scope';
      if (this.watchers.has(directory)) {
        // A directory replaced (moved away, another made in its place) since it was watched: the watch follows the old one.
        if (!this.lostWatches.has(directory) && (listing === undefined || this.watchedInodes.get(directory) === Number(listing.ino))) continue;
        this.unwatch(directory);
      }
      if (this.watch(directory) !== undefined) return;
      this.markListed(directory, listing);
    }
    for (const directory of [...this.watchers.keys()]) if (!inScope.has(directory)) this.unwatch(directory);
    if (this.watchers.size === 0) this.becomeUncertain('journal-starting');
  }

  /**
   * Starts watching a directory (relative) the journal found while examining
   * changes. Call it before listing the directory: a change made after the
   * listing then raises an event, and one made before it is in the listing.
   * Undefined once watched; otherwise why not (the journal is then uncertain, or stopped).
   */
  watch(directory: string): FullScanReason | undefined {
    if (!this.enabled) return this.uncertainty();
    if (this.watchers.has(directory)) {
      if (!this.lostWatches.has(directory)) return undefined;
      this.unwatch(directory);
    }
    const absolute = this.absoluteOf(directory);
    try {
      if (this.watchers.size >= (journalTestHooks.maxWatches ?? ownWatchLimit())) {
        throw Object.assign(new Error('ENOSPC: System limit for number of file watchers reached'), { code: 'ENOSPC' });
      }
      const watcher = fs.watch(absolute, { persistent: false }, (type, name) => this.onEvent(directory, type, name));
      watcher.on('error', () => this.becomeUncertain('watcher-error'));
      watcher.unref();
      this.watchers.set(directory, watcher);
      const inode = fs.lstatSync(absolute, { throwIfNoEntry: false })?.ino;
      if (inode !== undefined) this.watchedInodes.set(directory, inode);
      return undefined;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOSPC') {
        // The per-user watch limit: every further watch would fail too. Free the ones held for other programs.
        this.disabledByLimit = true;
        this.stop();
        return 'watch-limit';
      }
      // Gone or replaced between its listing and its watch, or a watch the kernel refused: no proof either way.
      const reason = code === 'ENOENT' || code === 'ENOTDIR' ? 'directory-moved' : 'watcher-error';
      this.becomeUncertain(reason);
      return reason;
    }
  }

  /** Stops watching a directory (relative). */
  unwatch(directory: string): void {
    this.watchers.get(directory)?.close();
    this.watchers.delete(directory);
    this.watchedInodes.delete(directory);
    this.lostWatches.delete(directory);
  }

  /** Closes every watcher; the journal is never used again. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    for (const watcher of this.watchers.values()) watcher.close();
    this.watchers.clear();
    this.lostWatches.clear();
    this.cookieWatcher?.close();
    this.cookieWatcher = undefined;
    if (this.timer !== undefined) clearInterval(this.timer);
    for (const resolve of this.cookies.values()) resolve();
    if (this.cookieDirectory !== undefined) fs.rmSync(this.cookieDirectory, { recursive: true, force: true });
    this.changes = { paths: new Set(), directories: new Set(), renamed: new Set() };
  }

  /** Number of directories watched (for tests and measurements). */
  get watchCount(): number {
    return this.watchers.size;
  }

  /** Makes the next checkpoint take the full scan. */
  becomeUncertain(reason: FullScanReason): void {
    this.uncertain ??= reason;
    this.changes = { paths: new Set(), directories: new Set(), renamed: new Set() };
  }

  private onEvent(directory: string, type: string, name: string | Buffer | null): void {
    // inotify reports the watched directory itself deleted or moved as a 'rename' named after it (a child of the same
    // name looks alike, and only costs a watch made again).
    const self = type === 'rename' && name !== null && String(name) === path.basename(directory === '' ? this.root : directory);
    if (self) this.lostWatches.add(directory);
    if (this.uncertain !== undefined) return;
    if (name === null || name === undefined) {
      this.becomeUncertain('watcher-error');
      return;
    }
    this.events += 1;
    if (this.events >= this.eventBound) {
      this.becomeUncertain('overflow');
      return;
    }
    // For a directory below the root its parent reports the same change; the root has no watched parent.
    if (directory === '' && self) {
      this.becomeUncertain('root-recreated');
      return;
    }
    const entry = directory === '' ? String(name) : `${directory}/${String(name)}`;
    this.changes.paths.add(entry);
    // Entries added, removed or renamed change the listing.
    if (type === 'rename') {
      this.changes.directories.add(directory);
      this.changes.renamed.add(entry);
    }
  }

  /** A directory watched after the scan listed it: list it again, and examine all it held. */
  private markListed(directory: string, listing: { entries: readonly string[]; subdirectories: readonly string[] } | undefined): void {
    this.changes.directories.add(directory);
    if (directory !== '') this.changes.paths.add(directory);
    if (listing === undefined) return;
    for (const entry of listing.entries) this.changes.paths.add(entry);
    for (const entry of listing.subdirectories) this.changes.paths.add(entry);
    this.events += listing.entries.length + listing.subdirectories.length;
    if (this.events >= this.eventBound) this.becomeUncertain('journal-starting');
  }

  private absoluteOf(directory: string): string {
    return directory === '' ? this.root : path.join(this.root, ...directory.split('/'));
  }

  private ensureCookieWatcher(): void {
    if (this.cookieWatcher !== undefined || this.stopped) return;
    try {
      this.cookieDirectory ??= fs.mkdtempSync(path.join(os.tmpdir(), 'rewindable-journal-'));
      const watcher = fs.watch(this.cookieDirectory, { persistent: false }, (_type, name) => {
        if (typeof name === 'string') this.cookies.get(name)?.();
      });
      watcher.on('error', () => this.becomeUncertain('watcher-error'));
      watcher.unref();
      this.cookieWatcher = watcher;
    } catch {
      this.becomeUncertain('watcher-error');
    }
  }

  private rootUnchanged(): boolean {
    const now = identityOf(this.root);
    return now !== undefined && this.rootIdentity !== undefined && now.dev === this.rootIdentity.dev && now.ino === this.rootIdentity.ino;
  }
}

function identityOf(directory: string): { dev: number; ino: number } | undefined {
  const stat = fs.lstatSync(directory, { throwIfNoEntry: false });
  return stat?.isDirectory() === true ? { dev: stat.dev, ino: stat.ino } : undefined;
}

function disabledReason(root: string, include: readonly string[]): FullScanReason | undefined {
  if (process.platform !== 'linux') return 'unsupported-platform';
  if (include.length !== 1 || include[0] !== '**') return 'include-globs';
  try {
    if (remoteFilesystemTypes.has(fs.statfsSync(root).type)) return 'unsupported-filesystem';
  } catch {
    return 'unsupported-filesystem';
  }
  return undefined;
}

/**
 * Half the kernel's per-instance event queue (`fs.inotify.max_queued_events`,
 * 16,384 by default). libuv drops the overflow notice, so the journal counts
 * events itself: once as many arrived since the previous checkpoint, some may
 * have been dropped. Counting across the whole turn, not one read, errs on
 * the safe side (a full scan then costs little more than that many events).
 */
function defaultEventBound(): number {
  try {
    const queued = Number(fs.readFileSync('/proc/sys/fs/inotify/max_queued_events', 'utf8').trim());
    if (Number.isInteger(queued) && queued > 1) return Math.floor(queued / 2);
  } catch {
    // not readable: the kernel's default
  }
  return 8192;
}
