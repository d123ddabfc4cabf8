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
