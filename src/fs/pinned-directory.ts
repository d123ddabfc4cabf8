import fs from 'node:fs';
import path from 'node:path';
import { flushFile } from './flush.js';

const procFd = process.platform === 'linux' && fs.existsSync('/proc/self/fd');
export const noFollow = fs.constants.O_NOFOLLOW ?? 0;
const directoryFlag = fs.constants.O_DIRECTORY ?? 0;

export type PinFailure = 'missing' | 'link' | 'not-directory' | 'moved';

/** A pinned directory as a check of one of its entries needs it. */
export interface EntryDirectory {
  entry(name: string): string;
  isStillAtPath(): boolean;
}

/**
 * A directory pinned by `PinnedDirectory` in this process, reached through its
 * handle path (`handlePath()`) from any thread, while it stays open there.
 */
export function directoryAtHandle(handle: string, directoryPath: string): EntryDirectory {
  return {
    entry: (name) => `${handle}/${name}`,
    isStillAtPath: () => unlessGone(() => fs.readlinkSync(handle) === directoryPath),
  };
}

/**
 * An open directory that every later operation goes through. On Linux,
 * `/proc/self/fd/<fd>/<name>` resolves inside the directory that was opened,
 * whatever happens to its path afterwards, so a directory swapped for a link
 * between our check and our write cannot redirect the write (Node has no
 * `openat`; this is the same guarantee). Elsewhere, names resolve by path and
 * each operation re-checks the directory first.
 */
export class PinnedDirectory implements EntryDirectory {
  private constructor(
    readonly path: string,
    private fd: number,
  ) {}

  /**
   * Opens `directory`, which must be a canonical path (no links in it), and
   * checks that it really is where that path says.
   */
  static open(directory: string): PinnedDirectory | PinFailure {
    let fd: number;
    try {
      fd = fs.openSync(directory, fs.constants.O_RDONLY | directoryFlag | noFollow);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return 'missing';
      if (code === 'ELOOP') return 'link';
      if (code === 'ENOTDIR') return isLink(directory) ? 'link' : 'not-directory';
      throw error;
    }
    const pinned = new PinnedDirectory(directory, fd);
    let failure: PinFailure | undefined;
    try {
      // With O_DIRECTORY the open itself refuses anything else.
      if (directoryFlag === 0 && !fs.fstatSync(fd).isDirectory()) failure = 'not-directory';
      else if (!pinned.isStillAtPath()) failure = 'moved';
    } catch (error) {
      pinned.close();
      throw error;
    }
    if (failure === undefined) return pinned;
    pinned.close();
    return failure;
  }

  /**
   * The path of the open handle itself (`/proc/self/fd/<fd>`), valid in every
   * thread of this process while the directory stays open; undefined where
   * there is no such path (not Linux).
   */
  handlePath(): string | undefined {
    return procFd ? `/proc/self/fd/${this.fd}` : undefined;
  }

  /** A path for `name` inside this directory. */
  entry(name: string): string {
    return procFd ? `/proc/self/fd/${this.fd}/${name}` : path.join(this.path, name);
  }

  /**
   * The names in this directory, read through the handle; where names
   * resolve by path, only while the directory is still at its path
   * (undefined otherwise).
   */
  names(): string[] | undefined {
    if (procFd) return fs.readdirSync(`/proc/self/fd/${this.fd}`);
    return this.isStillAtPath() ? fs.readdirSync(this.path) : undefined;
  }

  /**
   * True while the opened directory is still the one at its path (no link on
   * the way, not moved or deleted). An I/O error is thrown, not taken for a
   * move: recording a path as behind a moved directory because a read failed
   * once would cost it its backup at that checkpoint.
   */
  isStillAtPath(): boolean {
    return unlessGone(() => {
      const actual = procFd ? fs.readlinkSync(`/proc/self/fd/${this.fd}`) : fs.realpathSync.native(this.path);
      if (actual !== this.path) return false;
      if (procFd) return true;
      const opened = fs.fstatSync(this.fd);
      const current = fs.lstatSync(this.path);
      return opened.ino === current.ino && opened.dev === current.dev;
    });
  }

  /**
   * Removes the empty directory `name` inside this one (rmdir never follows a
   * link, and fails on a directory that is not empty). Where names resolve by
   * path, the caller checks this directory is still at its path first.
   */
  removeDirectory(name: string): void {
    fs.rmdirSync(this.entry(name));
  }

  /** Makes created, renamed and removed entries durable. */
  flush(): Promise<void> {
    return flushFile(this.fd);
  }

  close(): void {
    const fd = this.fd;
    this.fd = -1;
    try {
      if (fd >= 0) fs.closeSync(fd);
    } catch {
      // A read-only directory handle holds no data to lose; its close failing must not hide the error being thrown.
    }
  }
}

/**
 * Pins the nearest directory at or above `directory` (a canonical path) that
 * exists, and names the missing ones below it, top down. Each is opened as
 * `PinnedDirectory.open` opens a directory, so a link or a moved directory on
 * the way is a failure at that directory, never walked through.
 */
export function pinNearestDirectory(directory: string): { pinned: PinnedDirectory; missing: string[] } | { failure: PinFailure; at: string } {
  const missing: string[] = [];
  for (let current = directory; ; current = path.dirname(current)) {
    const pinned = PinnedDirectory.open(current);
    if (typeof pinned !== 'string') return { pinned, missing };
    if (pinned !== 'missing' || path.dirname(current) === current) return { failure: pinned, at: current };
    missing.unshift(path.basename(current));
  }
}

/**
 * Pins the parent directory of `filePath`, creating the missing ones one
 * level at a time, each inside the pinned level above it, so no link can
 * redirect where they go.
 */
export function pinCreatingParents(filePath: string): PinnedDirectory | PinFailure {
  const nearest = pinNearestDirectory(path.dirname(filePath));
  if ('failure' in nearest) return nearest.failure;
  let current = nearest.pinned;
  for (const name of nearest.missing) {
    try {
      fs.mkdirSync(current.entry(name));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
        current.close();
        throw error;
      }
    }
    const next = PinnedDirectory.open(path.join(current.path, name));
    current.close();
    if (typeof next === 'string') return next;
    current = next;
  }
  return current;
}

/** `check`'s answer, or false when it fails because the path no longer leads to the directory; a failed read is thrown. */
function unlessGone(check: () => boolean): boolean {
  try {
    return check();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'ELOOP') return false;
    throw error;
  }
}

function isLink(target: string): boolean {
  try {
    return fs.lstatSync(target).isSymbolicLink();
  } catch {
    return false;
  }
}
