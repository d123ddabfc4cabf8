import fs from 'node:fs';
import type { Observation } from '../schemas.js';

/**
 * Change detection by stat signature, with git's "racy" rule. A file whose
 * signature still matches is unchanged, unless it was modified so close to
 * the moment it was read that a later write could share its timestamps:
 * those are read again. How close is the timestamp granularity:
 *
 * - On a local Linux filesystem that keeps sub-millisecond timestamps (ext4,
 *   XFS, btrfs, tmpfs and the like), a write is stamped with the kernel's
 *   clock as of its last tick, at most 10 ms behind: 50 ms covers that
 *   with room to spare. That the file's own timestamps have a sub-millisecond
 *   part proves the filesystem keeps them (an ext4 with small inodes keeps
 *   whole seconds, exFAT 10 ms steps).
 * - Anywhere else, 2 seconds: FAT's granularity, and room for the clock of a
 *   network filesystem's server to be a little off ours.
 */
const fineWindowNs = 50_000_000n;
const coarseWindowNs = 2_000_000_000n;

/** Devices (as their signatures spell them) of local filesystems whose timestamps can be fine. */
const fineDevices = new Set<string>();

/** `statfs` types of Linux filesystems kept on local storage whose timestamps have nanosecond fields. */
const localFilesystemTypes: ReadonlySet<number> = new Set([
  0xef53, // ext2, ext3, ext4
  0x58465342, // XFS
  0x9123683e, // btrfs
  0x01021994, // tmpfs
  0xf2f52010, // F2FS
  0x2fc12fc1, // ZFS
  0xca451a4e, // bcachefs
  0x794c7630, // overlayfs (a container's root; its timestamps are its upper layer's)
]);

/**
 * Notes the filesystem `directory` is on (a project root), so that files on
 * it may use the fine racy window. Files on any filesystem not noted (another
 * mount inside the project, say) keep the coarse one.
 */
export function noteFilesystemOf(directory: string): void {
  if (process.platform !== 'linux') return;
  try {
    if (localFilesystemTypes.has(fs.statfsSync(directory).type)) fineDevices.add(String(fs.statSync(directory, { bigint: true }).dev));
  } catch {
    // Unknown: its files keep the coarse window.
  }
}

/** True when the entry was modified (content or metadata) too close to `atNs` for its signature then to prove anything. */
export function modifiedNear({ dev, mtimeNs, ctimeNs }: Pick<fs.BigIntStats, 'dev' | 'mtimeNs' | 'ctimeNs'>, atNs: bigint): boolean {
  const subMillisecond = mtimeNs % 1_000_000n !== 0n || ctimeNs % 1_000_000n !== 0n;
  const windowNs = subMillisecond && fineDevices.has(String(dev)) ? fineWindowNs : coarseWindowNs;
  const modifiedAt = mtimeNs > ctimeNs ? mtimeNs : ctimeNs;
  return modifiedAt >= atNs - windowNs;
}

export function statSignature(stat: fs.BigIntStats): string {
  return `${stat.dev}:${stat.ino}:${stat.size}:${stat.mode}:${stat.mtimeNs}:${stat.ctimeNs}`;
}

export function wallClockNs(): bigint {
  return BigInt(Date.now()) * 1_000_000n;
}

export function observe(stat: fs.BigIntStats, atNs: bigint): Observation {
  return { sig: statSignature(stat), atNs: atNs.toString() };
}

/** True when `stat` proves the file is byte-for-byte what it was when `observation` was taken. */
export function isUnchangedSince(observation: Observation | undefined, stat: fs.BigIntStats): boolean {
  if (observation === undefined || observation.sig !== statSignature(stat)) return false;
  return !modifiedNear(stat, BigInt(observation.atNs));
}

/**
 * The fields of a signature as a plain (number) lstat gives them. Checking
 * thousands of files, a plain lstat costs less than a bigint one, and
 * comparing numbers less than building a signature string per file.
 */
export type StatKey = Pick<fs.Stats, 'dev' | 'ino' | 'size' | 'mode' | 'mtimeMs' | 'ctimeMs'>;

/**
 * Milliseconds as Node computes them for a plain `fs.Stats` (seconds and
 * nanoseconds, each a double): equal inputs give the very same double.
 */
export function msFromNs(ns: bigint): number {
  return Number(ns / 1_000_000_000n) * 1e3 + Number(ns % 1_000_000_000n) / 1e6;
}

export function statKeyOf(stat: Pick<fs.BigIntStats, 'dev' | 'ino' | 'size' | 'mode' | 'mtimeNs' | 'ctimeNs'>): StatKey {
  return { dev: Number(stat.dev), ino: Number(stat.ino), size: Number(stat.size), mode: Number(stat.mode), mtimeMs: msFromNs(stat.mtimeNs), ctimeMs: msFromNs(stat.ctimeNs) };
}

export function sameStatKey(key: StatKey, stat: StatKey): boolean {
  return key.ino === stat.ino && key.size === stat.size && key.mtimeMs === stat.mtimeMs && key.ctimeMs === stat.ctimeMs && key.dev === stat.dev && key.mode === stat.mode;
}

/** Each observation's signature as a key, parsed once; undefined when the racy rule says not to trust it at all. */
const trustedKeys = new WeakMap<Observation, StatKey | undefined>();

/**
 * `isUnchangedSince` for a plain lstat. Millisecond doubles are a fraction
 * of a microsecond apart at today's dates, so on their own they could miss a
 * change; with the racy rule they cannot: a signature is trusted only when
 * the file had not changed for the racy window (50 ms at least) before it was
 * taken, and any later change moves its ctime past that moment. A false answer only means "look
 * closer" (read it, or lstat it with nanoseconds).
 */
export function isUnchangedSinceByKey(observation: Observation | undefined, stat: StatKey): boolean {
  const key = trustedKeyOf(observation);
  return key !== undefined && sameStatKey(key, stat);
}

/** The observation's signature when the racy rule lets a matching lstat prove the file unchanged; otherwise undefined. */
export function trustedSignature(observation: Observation | undefined): string | undefined {
  return trustedKeyOf(observation) === undefined ? undefined : observation!.sig;
}

function trustedKeyOf(observation: Observation | undefined): StatKey | undefined {
  if (observation === undefined) return undefined;
  let key = trustedKeys.get(observation);
  if (key === undefined && !trustedKeys.has(observation)) {
    key = parseTrustedKey(observation);
    trustedKeys.set(observation, key);
  }
  return key;
}

/**
 * The whole "still what was seen" rule for a plain lstat: a regular file
 * with one link (a second link is refused by rewinds, so it is looked at
 * closely) whose key matches a trusted signature.
 */
export function stillAsSeen(observation: Observation, isFile: boolean, nlink: number, key: StatKey): boolean {
  return isFile && nlink === 1 && isUnchangedSinceByKey(observation, key);
}

function parseTrustedKey(observation: Observation): StatKey | undefined {
  const fields = observation.sig.split(':');
  if (fields.length !== 6) return undefined;
  try {
    const [dev, ino, size, mode, mtimeNs, ctimeNs] = fields.map((field) => BigInt(field)) as [bigint, bigint, bigint, bigint, bigint, bigint];
    const stat = { dev, ino, size, mode, mtimeNs, ctimeNs };
    return modifiedNear(stat, BigInt(observation.atNs)) ? undefined : statKeyOf(stat);
  } catch {
    return undefined; // not a signature this version wrote: never trusted
  }
}
