import { isDeepStrictEqual } from 'node:util';
import { knownRecordTypes, logRecordSchema } from '../../schemas.js';
import { blobsNamedBy } from '../session-log.js';
import type { StoreEntry } from '../storage-adapter.js';

/**
 * How a session's remote copy relates to its local one. Both only ever grow
 * at the end, so one is normally a prefix of the other:
 *
 * - `same`: nothing to do;
 * - `remote-behind`: the remote lacks the local log's last entries (a push was
 *   interrupted) and gets them;
 * - `remote-ahead`: the session went on elsewhere; this machine's copy is
 *   older and is brought up to date before it is written to;
 * - `diverged`: both went on from entry `at` in different ways. Nothing can be
 *   merged safely.
 */
export type LogComparison =
  | { kind: 'same' }
  | { kind: 'remote-behind' }
  | { kind: 'remote-ahead' }
  | { kind: 'diverged'; at: number };

export function compareLogs(local: readonly StoreEntry[], remote: readonly StoreEntry[]): LogComparison {
  const common = Math.min(local.length, remote.length);
  for (let index = 0; index < common; index += 1) {
    // Deep equality, not text: a remote may reorder an entry's keys (jsonb does).
    if (!isDeepStrictEqual(local[index], remote[index])) return { kind: 'diverged', at: index };
  }
  if (local.length === remote.length) return { kind: 'same' };
  return local.length > remote.length ? { kind: 'remote-behind' } : { kind: 'remote-ahead' };
}

/** Hashes of the backups that log entries name (entries of unknown types name none we can tell). */
export function blobsNamedByEntries(entries: readonly StoreEntry[]): string[] {
  const hashes = new Set<string>();
  for (const entry of entries) {
    if (!knownRecordTypes.has(entry.type)) continue;
    const parsed = logRecordSchema.safeParse(entry);
    if (parsed.success) for (const hash of blobsNamedBy(parsed.data)) hashes.add(hash);
  }
  return [...hashes];
}
