import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { RewindableError, RewindableErrorCode } from '../../errors.js';
import type { StorageLock } from '../storage-adapter.js';

/**
 * One writer per session: a lock file holding the owner's pid, host and
 * process start time. A lock whose process is gone (or whose pid now belongs
 * to a different process) is reclaimed.
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
    if (tryCreate(lockPath, owner)) return { release: async () => release(lockPath, owner.token) };
    const holder = readOwner(lockPath);
    if (holder === undefined) continue; // removed or half-visible while we looked: try again
    if (isAlive(holder)) {
      throw new RewindableError(
        RewindableErrorCode.SESSION_LOCKED,
        `Session ${sessionLabel} is locked: process ${holder.pid} on ${holder.hostname} has it open (since ${holder.acquiredAt}). ` +
          'Close it there first; only one process may write to a session at a time.',
        { details: { pid: holder.pid, hostname: holder.hostname } },
      );
    }
    reclaim(lockPath, holder);
  }
  throw new RewindableError(RewindableErrorCode.SESSION_LOCKED, `Session ${sessionLabel} is locked: the lock kept changing hands; try again.`);
}

/** Creates the lock with its content in one step: a temp file linked into place (link fails if the name exists). */
function tryCreate(lockPath: string, owner: LockOwner): boolean {
  const temporary = `${lockPath}.${owner.token}.tmp`;
  fs.writeFileSync(temporary, JSON.stringify(owner), { mode: 0o600 });
  try {
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

function readOwner(file: string): LockOwner | undefined {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as LockOwner;
  } catch {
    return undefined;
  }
}

/**
 * Moves the dead owner's lock aside and deletes it, but only if what was moved
 * is still that owner's lock; a lock another process created in between is
 * put back.
 */
function reclaim(lockPath: string, dead: LockOwner): void {
  const aside = `${lockPath}.${randomUUID()}.stale`;
  try {
    fs.renameSync(lockPath, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  const moved = readOwner(aside);
  if (moved !== undefined && moved.token !== dead.token) {
    try {
      fs.linkSync(aside, lockPath);
    } catch {
      // Someone else holds the lock now; the moved one is gone either way.
    }
  }
  fs.rmSync(aside, { force: true });
}

async function release(lockPath: string, token: string): Promise<void> {
  if (readOwner(lockPath)?.token === token) fs.rmSync(lockPath, { force: true });
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
