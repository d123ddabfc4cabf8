import type fs from 'node:fs';
import type { Observation } from '../schemas.js';

/**
 * Change detection by stat signature, with git's "racy" rule. A file whose
 * signature still matches is unchanged, unless it was modified so close to
 * the moment it was read that a later write could share its timestamp: those
 * are read again. The window is wide enough for the coarsest local
 * filesystem clock (FAT's 2 seconds).
 */
export const racyWindowNs = 2_000_000_000n;

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
  const modifiedAt = stat.mtimeNs > stat.ctimeNs ? stat.mtimeNs : stat.ctimeNs;
  return modifiedAt < BigInt(observation.atNs) - racyWindowNs;
}

/**
 * The fields of a signature as a plain (number) lstat gives them. Checking
 * thousands of files, a plain lstat costs less than a bigint one, and
 * comparing numbers less than building a signature string per file.
 */
export interface StatKey {
  dev: number;
  ino: number;
  size: number;
  mode: number;
  mtimeMs: number;
  ctimeMs: number;
}

/**
 * Milliseconds as Node computes them for a plain `fs.Stats` (seconds and
 * nanoseconds, each a double): equal inputs give the very same double.
 */
export function msFromNs(ns: bigint): number {
  return Number(ns / 1_000_000_000n) * 1e3 + Number(ns % 1_000_000_000n) / 1e6;
}

export function statKeyOf(stat: fs.BigIntStats): StatKey {
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
 * the file had not changed for two seconds before it was taken, and any later
 * change moves its ctime past that moment. A false answer only means "look
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
    const modifiedAt = mtimeNs > ctimeNs ? mtimeNs : ctimeNs;
    if (modifiedAt >= BigInt(observation.atNs) - racyWindowNs) return undefined;
    return { dev: Number(dev), ino: Number(ino), size: Number(size), mode: Number(mode), mtimeMs: msFromNs(mtimeNs), ctimeMs: msFromNs(ctimeNs) };
  } catch {
    return undefined; // not a signature this version wrote: never trusted
  }
}
