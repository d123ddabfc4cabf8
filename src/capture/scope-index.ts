import type { StatKey } from '../fs/stat-signature.js';
import type { Session } from '../session/session.js';
import type { PreviousWalk } from './walk-scope.js';

/** What the capture scope's last scan of a session found, kept in memory only (a resumed session scans afresh). */
export interface ScopeIndex {
  /**
   * Per file: its stat at the last scan, and whether its content was then
   * its latest backup. Only clean files are compared, and a clean file's
   * signature passed the racy rule: numbers are exact enough (see `isUnchangedSinceByKey`).
   */
  files: Map<string, { key: StatKey; clean: boolean }>;
  /** The walk's verdicts, reused while the ignore rules are the same. */
  walk: PreviousWalk;
}

// Capture's own memory of each open session: the session knows nothing of scans, and a closed one is let go.
const indexes = new WeakMap<Session, ScopeIndex>();

export function scopeIndexOf(session: Session): ScopeIndex | undefined {
  return indexes.get(session);
}

export function keepScopeIndex(session: Session, index: ScopeIndex): void {
  indexes.set(session, index);
}
