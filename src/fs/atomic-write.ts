import fs from 'node:fs';
import { randomBytes } from 'node:crypto';
import { flushFile, writeAll } from './flush.js';
import { noFollow, PinnedDirectory, type EntryDirectory } from './pinned-directory.js';

/** 12 hex digits unique to this process and call: random per process, then a counter (no syscall per file). */
const processPrefix = randomBytes(3).toString('hex');
let temporaryCounter = 0;

/** The names of temporary files, so that ones left by a crash can be recognised and swept. */
const temporaryPattern = /^\..*\.[0-9a-f]{12}\.rewindable-tmp$/s;
/**
 * At most this many bytes of a name go into its temporary file's name, which
 * then stays within the 255 bytes most filesystems allow for a name. Bytes,
 * not characters: 180 characters of CJK text are 540 bytes.
 */
const keptNameBytes = 180;
const encoder = new TextEncoder();

/** A fresh name for a temporary file next to `name` (hidden, unique to this process and call, recognised by the sweep). */
export function temporaryName(name: string): string {
  temporaryCounter = (temporaryCounter + 1) % 0x1000000;
  return `.${headOf(name)}.${processPrefix}${temporaryCounter.toString(16).padStart(6, '0')}.rewindable-tmp`;
}

/** The longest start of `name` of at most `keptNameBytes` bytes in UTF-8: `encodeInto` stops before a character that does not fit whole. */
function headOf(name: string): string {
  if (Buffer.byteLength(name) <= keptNameBytes) return name;
  return name.slice(0, encoder.encodeInto(name, new Uint8Array(keptNameBytes)).read);
}

/**
 * Replaces `name` in `directory` with `bytes` and `mode`, atomically: the
 * bytes go to a temporary file next to it (rename is only atomic within one
 * directory's filesystem), which is flushed when `durable` and then renamed
 * over the name. A reader sees the old file or the new one, never a mix; a
 * link at `name` is replaced, never followed. Nothing already at `name` is
 * ever opened: the temporary file is created new (O_EXCL), and the rename
 * only replaces the name, so a hard link of an outside file renamed there
 * loses that name and keeps its bytes and mode.
 */
export async function writeFileAtomically(directory: EntryDirectory, name: string, bytes: Uint8Array, mode: number, durable: boolean): Promise<void> {
  const prepared = await prepareAtomicWrite(directory, name, bytes, mode, durable);
  prepared.commit();
}

/** A temporary file holding the new content, not yet in place. */
export interface PreparedWrite {
  /** Renames the temporary file over the target name. Once. */
  commit(): void;
  /** Removes the temporary file; the target was never touched. */
  discard(): void;
}

/**
 * The first half of `writeFileAtomically`: writes (and, when `durable`,
 * flushes) the temporary file next to `name` without touching `name` itself,
 * so a caller can do other work (a backup) before deciding to commit or
 * discard. `mode` is applied exactly; `'umask'` lets the process umask decide,
 * as for any newly created file (0o666 & ~umask). `directory` must stay open
 * until the write is committed or discarded: both go through it.
 */
export async function prepareAtomicWrite(directory: EntryDirectory, name: string, bytes: Uint8Array, mode: number | 'umask', durable: boolean): Promise<PreparedWrite> {
  const { temporaryEntry, fd } = writeTemporaryFile(directory, name, bytes, mode, false);
  try {
    try {
      if (durable) await flushFile(fd);
    } finally {
      fs.closeSync(fd);
    }
  } catch (error) {
    fs.rmSync(temporaryEntry, { force: true });
    throw error;
  }
  let settled = false;
  return {
    commit() {
      if (settled) throw new Error('This prepared write was already committed or discarded.');
      settled = true;
      try {
        fs.renameSync(temporaryEntry, directory.entry(name));
      } catch (error) {
        fs.rmSync(temporaryEntry, { force: true });
        throw error;
      }
    },
    discard() {
      if (settled) return;
      settled = true;
      fs.rmSync(temporaryEntry, { force: true });
    },
  };
}

/**
 * `writeFileAtomically` in one synchronous run, for a thread that does whole
 * files one after another (replace-one.ts): its flush blocks this thread only.
 * Returns the lstat of the file written, taken through its still-open handle
 * once it is in place (the rename changes its ctime): that of the very file
 * written, whatever has been put at `name` since, and without looking the
 * name up again. Undefined when that fstat failed: the file is in place all
 * the same.
 */
export function writeFileAtomicallySync(directory: EntryDirectory, name: string, bytes: Uint8Array, mode: number, durable: boolean): fs.BigIntStats | undefined {
  const { temporaryEntry, fd } = writeTemporaryFile(directory, name, bytes, mode, durable);
  try {
    fs.renameSync(temporaryEntry, directory.entry(name));
  } catch (error) {
    closeQuietly(fd);
    fs.rmSync(temporaryEntry, { force: true });
    throw error;
  }
  let written: fs.BigIntStats | undefined;
  try {
    written = fs.fstatSync(fd, { bigint: true });
  } catch {
    written = undefined;
  }
  // Once renamed the file is in place, and the caller must know it (to roll it back): a failed close cannot take
  // that back. Its bytes were handed over by the write (and flushed first when durable), on a local filesystem.
  closeQuietly(fd);
  return written;
}

function closeQuietly(fd: number): void {
  try {
    fs.closeSync(fd);
  } catch {
    // See the callers: nothing is lost that an error here could report.
  }
}

/** A new temporary file next to `name` holding `bytes` with `mode` applied (and flushed when `flushNow`), still open: the caller closes it. */
function writeTemporaryFile(directory: EntryDirectory, name: string, bytes: Uint8Array, mode: number | 'umask', flushNow: boolean): { temporaryEntry: string; fd: number } {
  const createMode = mode === 'umask' ? 0o666 : 0o600;
  let temporaryEntry = '';
  let fd = -1;
  for (let attempt = 0; fd === -1; attempt += 1) {
    temporaryEntry = directory.entry(temporaryName(name));
    try {
      fd = fs.openSync(temporaryEntry, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | noFollow, createMode);
    } catch (error) {
      // Another process chose the same name (or one is left from a crash): take the next one.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 3) throw error;
    }
  }
  try {
    writeAll(fd, bytes);
    if (mode !== 'umask') fs.fchmodSync(fd, mode); // exact mode, whatever the umask
    if (flushNow) fs.fsyncSync(fd);
  } catch (error) {
    fs.closeSync(fd);
    fs.rmSync(temporaryEntry, { force: true });
    throw error;
  }
  return { temporaryEntry, fd };
}

/**
 * Removes temporary files a crashed write left in `directory`. Only files
 * older than 30 seconds go: another session may be writing in the same
 * directory right now. The directory is pinned like any directory a write
 * goes to: one that is now a link, or no longer where its path says, is not
 * swept (its files are someone else's), and only regular files with a single
 * link are removed, each by its name in the directory that was opened.
 */
export function sweepTemporaryFiles(directory: string): void {
  const cutoffMs = Date.now() - 30_000;
  let pinned: ReturnType<typeof PinnedDirectory.open> | undefined;
  try {
    pinned = PinnedDirectory.open(directory);
    if (typeof pinned === 'string') return;
    for (const name of pinned.names() ?? []) {
      if (!temporaryPattern.test(name)) continue;
      try {
        const stat = fs.lstatSync(pinned.entry(name));
        if (!stat.isFile() || stat.nlink !== 1 || stat.mtimeMs > cutoffMs) continue;
        // Where names resolve by path, the directory is checked again right before the removal.
        if (pinned.handlePath() === undefined && !pinned.isStillAtPath()) break;
        fs.unlinkSync(pinned.entry(name));
      } catch {
        // Gone already, or not ours to remove.
      }
    }
  } catch {
    // Housekeeping: a directory that cannot be read is swept by a later open.
  } finally {
    if (typeof pinned === 'object') pinned.close();
  }
}
