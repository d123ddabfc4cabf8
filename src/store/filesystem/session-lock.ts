import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { RewindableError, RewindableErrorCode, storeIoError } from '../../errors.js';
import { flushFile, writeAll } from '../../fs/flush.js';
import type { StorageLock } from '../storage-adapter.js';

/**
 * One writer per session: a lock file holding the owner's pid, host and
 * process start time. A lock whose process is gone (or whose pid now belongs
 * to a different process) is reclaimed, and so is one that names no process
 * at all (empty or garbage, left by a power cut or by damage): a lock is
 * complete the moment it becomes visible (see `tryCreate`), so an unreadable
 * one is never a live writer's lock being filled.
 */

interface LockOwner {
  pid: number;
  hostname: string;
  /** Process start time from /proc, so a recycled pid is not taken for the owner. */
  processStart: string | null;
  token: string;
  acquiredAt: string;
}

export async function acquireSessionLock(lockPath: string, sessionLabel: string): Promise<StorageLock> {
  try {
    return await acquire(lockPath, sessionLabel);
  } catch (error) {
    if (RewindableError.isInstance(error)) throw error;
    throw storeIoError(`lock session ${sessionLabel} (${lockPath})`, error);
  }
}

async function acquire(lockPath: string, sessionLabel: string): Promise<StorageLock> {
  const owner: LockOwner = {
    pid: process.pid,
    hostname: os.hostname(),
    processStart: processStartTime(process.pid),
    token: randomUUID(),
    acquiredAt: new Date().toISOString(),
  };
  fs.mkdirSync(path.dirname(lockPath), { recursive: true });
  sweepLeftovers(lockPath);
  for (let attempt = 0; attempt < 20; attempt += 1) {
    if (await tryCreate(lockPath, owner)) return { release: async () => release(lockPath, owner.token) };
    const found = readLock(lockPath);
    if (found === undefined) continue; // removed while we looked: try again
    if (found.owner !== undefined && isAlive(found.owner)) {
      const holder = found.owner;
      throw new RewindableError(
        RewindableErrorCode.SESSION_LOCKED,
        `Session ${sessionLabel} is locked: process ${holder.pid} on ${holder.hostname} has it open (since ${holder.acquiredAt}). ` +
          'Close it there first; only one process may write to a session at a time.',
        { details: { pid: holder.pid, hostname: holder.hostname } },
      );
    }
    reclaim(lockPath, found.content);
  }
  throw new RewindableError(RewindableErrorCode.SESSION_LOCKED, `Session ${sessionLabel} is locked: the lock kept changing hands; try again.`);
}

/**
 * Creates the lock with its content in one step: a temp file linked into place
 * (link fails if the name exists). The temp file is flushed before the link,
 * so a power cut cannot leave a visible lock that is empty.
 */
async function tryCreate(lockPath: string, owner: LockOwner): Promise<boolean> {
  const temporary = `${lockPath}.${owner.token}.tmp`;
  try {
    const fd = fs.openSync(temporary, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL, 0o600);
    try {
      writeAll(fd, Buffer.from(JSON.stringify(owner)));
      await flushFile(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.linkSync(temporary, lockPath);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    fs.rmSync(temporary, { force: true });
  }
}

/** Temporary and moved-aside lock files a killed process left behind (older than a minute). */
function sweepLeftovers(lockPath: string): void {
  const directory = path.dirname(lockPath);
  const prefix = `${path.basename(lockPath)}.`;
  const cutoff = Date.now() - 60_000;
  for (const name of fs.readdirSync(directory)) {
    if (!name.startsWith(prefix) || !(name.endsWith('.tmp') || name.endsWith('.stale'))) continue;
    try {
      if (fs.lstatSync(path.join(directory, name)).mtimeMs < cutoff) fs.rmSync(path.join(directory, name), { force: true });
    } catch {
      // Gone already.
    }
  }
}

/** A lock file as found: its raw content, and its owner when the content names one. */
interface FoundLock {
  content: string;
  owner: LockOwner | undefined;
}

/** The lock file's content, or undefined when there is none. */
function readLock(file: string): FoundLock | undefined {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const content = fs.readFileSync(fd, 'utf8');
    return { content, owner: parseOwner(content) };
  } finally {
    fs.closeSync(fd);
  }
}

/** The owner a lock names, or undefined for an empty or damaged lock (which names no process). */
function parseOwner(content: string): LockOwner | undefined {
  try {
    const parsed = JSON.parse(content) as Partial<LockOwner> | null;
    if (typeof parsed?.pid !== 'number' || typeof parsed.hostname !== 'string' || typeof parsed.token !== 'string') return undefined;
    return { processStart: null, acquiredAt: 'an unknown time', ...parsed } as LockOwner;
  } catch {
    return undefined;
  }
}

/**
 * Moves the abandoned lock aside and deletes it, but only if what was moved
 * is still the lock judged abandoned (same content: every live lock holds a
 * token of its own); a lock another process created in between is put back.
 */
function reclaim(lockPath: string, abandonedContent: string): void {
  const aside = `${lockPath}.${randomUUID()}.stale`;
  try {
    fs.renameSync(lockPath, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  const moved = readLock(aside);
  if (moved !== undefined && moved.content !== abandonedContent) {
    try {
      fs.linkSync(aside, lockPath);
    } catch {
      // Someone else holds the lock now; the moved one is gone either way.
    }
  }
  fs.rmSync(aside, { force: true });
}

async function release(lockPath: string, token: string): Promise<void> {
  let found: FoundLock | undefined;
  try {
    found = readLock(lockPath);
  } catch {
    return; // Unreadable now: not provably ours, so it is left for the next opener to judge.
  }
  if (found?.owner?.token === token) fs.rmSync(lockPath, { force: true });
}

function isAlive(owner: LockOwner): boolean {
  if (owner.hostname !== os.hostname()) return true; // cannot check another host: assume it is live
  try {
    process.kill(owner.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
  }
  const start = processStartTime(owner.pid);
  return start === null || owner.processStart === null || start === owner.processStart;
}

/** Field 22 of /proc/<pid>/stat (start time in clock ticks since boot); null where /proc is absent. */
function processStartTime(pid: number): string | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may contain spaces; fields after it are space-separated.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19] ?? null;
  } catch {
    return null;
  }
}
