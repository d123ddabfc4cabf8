import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { RewindableError, RewindableErrorCode } from '../../errors.js';
import { createByLink } from './create-by-link.js';
import { HeldSessionLock } from './held-lock.js';
import { readLock, removeLockIfUnchanged, type FoundLock, type LockOwner } from './lock-file.js';
import { bootId, pidNamespace, processStartTime } from './lock-holder-identity.js';

/**
 * One writer per session: a lock file holding the owner's pid, host, PID
 * namespace, boot, process start time and lease. A lock of this host,
 * namespace and boot whose process is gone (or whose pid now belongs to a
 * different process) is reclaimed, and so is one that names no process at
 * all (empty, garbage or a lease out of range, left by a power cut, by damage
 * or by hand; or not a file at all): a lock is complete the moment it becomes
 * visible (see `tryCreate`), so an unreadable one is never a live writer's
 * lock being filled. The process of a lock from another host, namespace or
 * boot cannot be checked: that lock stands while its holder renews it, and is
 * reclaimed once its lease ran out (see `HeldSessionLock`).
 */

/**
 * Two minutes: a holder renews every 30 s, so it must stall through three
 * renewals (a long synchronous rewind, a disk that hangs) before its lock
 * looks abandoned, while a store whose other host is gone for good (a renamed
 * container, a copied store) is usable again a couple of minutes later
 * without anyone breaking the lock by hand. Hosts sharing a store must keep
 * their clocks well within this of each other.
 */
export const defaultLockLeaseMs = 2 * 60 * 1000;

/** A lock as `inspectSessionLock` and `breakSessionLock` report it. */
export interface SessionLockHolder {
  /** Null for a lock file that names no process (empty or damaged). */
  pid: number | null;
  hostname: string | null;
  acquiredAt: string | null;
  /** ISO time of the holder's last renewal. */
  renewedAt: string;
  /** ISO time after which a lock of another host is reclaimed unless renewed again. */
  leaseExpiresAt: string;
  /** Whether an opener here would take it for a live holder's lock. */
  live: boolean;
}

export async function acquireSessionLock(lockPath: string, sessionLabel: string, leaseMs: number): Promise<HeldSessionLock> {
  const owner: LockOwner = {
    pid: process.pid,
    hostname: os.hostname(),
    processStart: processStartTime(process.pid),
    pidNamespace: pidNamespace(),
    bootId: bootId(),
    token: randomUUID(),
    acquiredAt: new Date().toISOString(),
    leaseMs,
  };
  sweepLeftovers(lockPath);
  for (let attempt = 0; attempt < 20; attempt += 1) {
    if (await tryCreate(lockPath, owner)) return new HeldSessionLock(lockPath, owner.token, sessionLabel, leaseMs);
    const found = readLock(lockPath);
    if (found === undefined) continue; // removed while we looked: try again
    if (found.owner !== undefined && isLive(found.owner, found, leaseMs)) throw lockedError(sessionLabel, found.owner, found, leaseMs);
    removeLockIfUnchanged(lockPath, found, true);
  }
  throw new RewindableError(RewindableErrorCode.SESSION_LOCKED, `Session ${sessionLabel} is locked: the lock kept changing hands; try again.`);
}

function lockedError(sessionLabel: string, holder: LockOwner, found: FoundLock, leaseMs: number): RewindableError {
  const where = `process ${holder.pid} on ${holder.hostname} has it open (since ${holder.acquiredAt})`;
  if (isCheckableHere(holder)) {
    return new RewindableError(
      RewindableErrorCode.SESSION_LOCKED,
      `Session ${sessionLabel} is locked: ${where}. Close it there first; only one process may write to a session at a time.`,
      { details: { pid: holder.pid, hostname: holder.hostname } },
    );
  }
  const expiresAt = isoTime(found.renewedAtMs + (holder.leaseMs ?? leaseMs));
  const unchecked =
    holder.hostname === os.hostname()
      ? 'That process runs in another PID namespace (a container sharing this host name) or before a reboot, so it cannot be checked from here'
      : 'That host cannot be checked from here';
  return new RewindableError(
    RewindableErrorCode.SESSION_LOCKED,
    `Session ${sessionLabel} is locked: ${where}. ${unchecked}, so its lock holds while it is renewed: ` +
      `its lease expires at ${expiresAt}, and the lock is reclaimed then unless renewed. Close the session there first. ` +
      `If that host or process no longer exists, wait until then, or break the lock now with "rewindable unlock ${sessionLabel} --force" ` +
      '(only when nothing writes to the session: two writers on one session lose backups).',
    { details: { pid: holder.pid, hostname: holder.hostname, leaseExpiresAt: expiresAt } },
  );
}

/** What the lock file says, or undefined when the session is not locked. */
export function inspectSessionLock(lockPath: string, leaseMs: number): SessionLockHolder | undefined {
  const found = readLock(lockPath);
  return found === undefined ? undefined : describe(found, leaseMs);
}

/** Removes the lock whoever holds it, and returns what it said (see `FilesystemStorage.breakLock`). */
export function breakSessionLock(lockPath: string, leaseMs: number): SessionLockHolder | undefined {
  for (let attempt = 0; attempt < 20; attempt += 1) {
    const found = readLock(lockPath);
    if (found === undefined) return undefined;
    // The lock shown is the one removed: one created in between (a new holder) is put back and looked at again.
    if (removeLockIfUnchanged(lockPath, found, false)) return describe(found, leaseMs);
  }
  throw new RewindableError(RewindableErrorCode.SESSION_LOCKED, `The lock at ${lockPath} kept changing hands; try again.`);
}

function describe(found: FoundLock, leaseMs: number): SessionLockHolder {
  const owner = found.owner;
  const renewedAt = isoTime(found.renewedAtMs);
  const leaseExpiresAt = isoTime(found.renewedAtMs + (owner === undefined ? 0 : (owner.leaseMs ?? leaseMs)));
  if (owner === undefined) return { pid: null, hostname: null, acquiredAt: null, renewedAt, leaseExpiresAt, live: false };
  return { pid: owner.pid, hostname: owner.hostname, acquiredAt: owner.acquiredAt, renewedAt, leaseExpiresAt, live: isLive(owner, found, leaseMs) };
}

/** A lock's mtime is whatever was set on the file: one past the range of dates is shown as the nearest date there is. */
function isoTime(ms: number): string {
  return new Date(Math.max(-maximumDateMs, Math.min(ms, maximumDateMs))).toISOString();
}

const maximumDateMs = 8.64e15;

/** A lock is complete the moment it becomes visible, never empty: its holder's temporary file is flushed before it is linked. */
function tryCreate(lockPath: string, owner: LockOwner): Promise<boolean> {
  return createByLink(`${lockPath}.${owner.token}.tmp`, lockPath, Buffer.from(JSON.stringify(owner)), true);
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

/** A lock whose pid cannot be checked here lives by its lease: the holder's own when it states one (it renews by that), else ours. */
function isLive(owner: LockOwner, found: FoundLock, leaseMs: number): boolean {
  if (!isCheckableHere(owner)) return Date.now() - found.renewedAtMs <= (owner.leaseMs ?? leaseMs);
  try {
    process.kill(owner.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
  }
  const start = processStartTime(owner.pid);
  return start === null || owner.processStart === null || start === owner.processStart;
}

/**
 * Whether the lock's pid names a process here: same host, same PID namespace,
 * same boot. A lock of an older version records neither namespace nor boot;
 * its pid is taken as this namespace's, as that version did.
 */
function isCheckableHere(owner: LockOwner): boolean {
  if (owner.hostname !== os.hostname()) return false;
  return (owner.pidNamespace === undefined || owner.pidNamespace === pidNamespace()) && (owner.bootId === undefined || owner.bootId === bootId());
}
