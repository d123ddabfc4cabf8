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
  /** Tracked paths `files` does not hold, kept up to date by each scan that updates `files`. */
  outside: TrackedOutside;
}

/**
 * Tracked paths outside the scan index: a tool's files outside the scope,
 * files deleted since. A scan that examines only what may have changed (a
 * journaled one, or a full one that vouched for the rest) observes these at
 * every checkpoint, as one going over every tracked path would. Paths the
 * session began to track are read from a live iterator of its paths, which
 * only grow: none is looked at twice, and the 500,000 of a large scope are
 * not gone over at every checkpoint.
 */
export class TrackedOutside {
  readonly paths = new Set<string>();
  private readonly tracked: Iterator<string>;
  private seen = 0;

  constructor(
    private readonly session: Session,
    private readonly files: ReadonlyMap<string, unknown>,
  ) {
    this.tracked = session.state.paths.keys();
    this.catchUp();
  }

  /** Takes in the paths tracked since the last look; those the index does not hold are outside. */
  catchUp(): void {
    // Never past the last path: an iterator that once answers `done` stays done, and later paths would be missed.
    for (const size = this.session.state.paths.size; this.seen < size; this.seen += 1) {
      const next = this.tracked.next();
      if (next.done === true) break;
      if (!this.files.has(next.value)) this.paths.add(next.value);
    }
  }

  /** `path` just left the index: observed from now on if it is tracked. */
  left(path: string): void {
    if (this.session.state.paths.has(path)) this.paths.add(path);
  }

  /** `path` just entered the index. */
  entered(path: string): void {
    this.paths.delete(path);
  }
}

// Capture's own memory of each open session: the session knows nothing of scans, and a closed one is let go.
const indexes = new WeakMap<Session, ScopeIndex>();

export function scopeIndexOf(session: Session): ScopeIndex | undefined {
  return indexes.get(session);
}

export function keepScopeIndex(session: Session, index: ScopeIndex): void {
  indexes.set(session, index);
}
