import type { RegularFileState } from '../schemas.js';
import type { Session } from '../session/session.js';
import type { BlobRead } from '../store/session-log.js';
import type { PlannedChange } from './change.js';
import type { Goal } from './goal.js';
import { lineStats, type LineStats } from '../text/line-stats.js';
import { unreadableBackup, type SkippedPath } from './safety.js';

/**
 * A rewind's line statistics, by change, apart from the plan. Measuring a
 * change reads its target's backup (a missing or damaged one leaves the path
 * alone) and counts it against the current bytes, which come from:
 * - a dry run: the plan, which read them;
 * - a real run: the plan too, kept up to a budget (past it, counted as
 *   planned), but counted as the change is applied, so that the plan is
 *   logged and the first writes start sooner while later changes are
 *   measured; a file whose content the store already holds (the undo point
 *   needs no copy) is not read by the plan at all, but just before its write,
 *   or by the `ReplaceMany` job that replaces it, which counts it there;
 *   counts a dry run kept (`LineStatsCache`) spare all of that.
 */

export interface MeasureOptions {
  readBlob(hash: string): Promise<BlobRead>;
  /** Dry runs: where the counts made here are kept for the rewind that may follow. */
  keepCountsIn?: LineStatsCache;
  /** Real runs: counts a dry run kept, taken instead of reading the current bytes. */
  recallCountsFrom?: LineStatsCache;
  /** Real runs: count changes as they are applied, holding `keepBytes` of current bytes at most. */
  whenApplied?: { keepBytes: number; stored(sha256: string): boolean };
}

/** Counts the dry runs of each open session made. Real rewinds add none: one repeated back and forth counts each time, as the first does. */
const keptCounts = new WeakMap<Session, LineStatsCache>();

/** The measurements of a dry run, of a real rewind, or of anything else (a diff, a rollback), which counts as it plans. */
export function measurementsFor(session: Session, run: 'dry-run' | 'rewind' | 'other', goal?: Goal): Measurements {
  let counts = keptCounts.get(session);
  if (counts === undefined) keptCounts.set(session, (counts = new LineStatsCache()));
  const readBlob = readerOf(session, goal);
  if (run === 'dry-run') return new Measurements({ readBlob, keepCountsIn: counts });
  if (run === 'other') return new Measurements({ readBlob });
  return new Measurements({ readBlob, recallCountsFrom: counts, whenApplied: { keepBytes: 16 * 1024 * 1024, stored: (sha256) => session.isStored(sha256) } });
}

/** The store's backups, and the contents a goal computed. */
export function readerOf(session: Session, goal: Goal | undefined): (hash: string) => Promise<BlobRead> {
  const fromStore = (hash: string) => session.readBlob(hash);
  return goal === undefined ? fromStore : goal.computed.readerOver(fromStore);
}

/** Where the statistics of a change stand when it is about to be applied. */
export type Pending = { kind: 'counted' } | { kind: 'kept'; current: Buffer | undefined } | { kind: 'on-disk' };

/** Measured: with the target's bytes (hash-checked) for the write that follows; none for a deletion or a mode change. */
export type Measured = { kind: 'counted'; target: Buffer | undefined } | { kind: 'refused'; skipped: SkippedPath };

const noLines: LineStats = { insertions: 0, deletions: 0, binary: false, skipped: false };

export class Measurements {
  private readonly counts = new Map<PlannedChange, LineStats>();
  private readonly waiting = new Map<PlannedChange, Buffer | undefined | 'on-disk'>();
  private budget: number;

  constructor(private readonly options: MeasureOptions) {
    this.budget = options.whenApplied?.keepBytes ?? 0;
  }

  /** Whether the plan may leave a file unread that it needs only for the statistics and the undo point. */
  readsLater(state: RegularFileState): boolean {
    return this.options.whenApplied?.stored(state.sha256) === true;
  }

  /** Keeps the bytes the plan read (if any) to count `change` when it is applied; false when it must be measured now. */
  keep(change: PlannedChange, current: Buffer | undefined): boolean {
    const size = current?.length ?? 0;
    if (this.options.whenApplied === undefined || size > this.budget) return false;
    this.budget -= size;
    this.waiting.set(change, change.from.kind === 'file' && current === undefined && change.action !== 'chmod' ? 'on-disk' : current);
    return true;
  }

  pending(change: PlannedChange): Pending {
    if (this.counts.has(change)) return { kind: 'counted' };
    const waiting = this.waiting.get(change);
    this.waiting.delete(change);
    const sides = change.action === 'chmod' ? undefined : sidesOf(change);
    const recalled = sides === undefined ? undefined : this.options.recallCountsFrom?.get(sides.from, sides.to);
    if (recalled !== undefined) {
      this.counts.set(change, recalled);
      return { kind: 'counted' };
    }
    return waiting === 'on-disk' ? { kind: 'on-disk' } : { kind: 'kept', current: waiting };
  }

  /** Measures `change` against `current` (none: no file there). */
  async measure(change: PlannedChange, current: Buffer | undefined): Promise<Measured> {
    let target: Buffer | undefined;
    if (change.to.kind === 'file') {
      const read = await this.options.readBlob(change.to.sha256);
      if (!read.ok) return { kind: 'refused', skipped: unreadableBackup(change.path, read.reason) };
      target = read.bytes;
    }
    if (change.action === 'chmod') {
      this.counts.set(change, noLines);
      return { kind: 'counted', target: undefined };
    }
    const stats = this.count(change, current, target);
    const sides = sidesOf(change);
    if (sides !== undefined) this.options.keepCountsIn?.set(sides.from, sides.to, stats);
    return { kind: 'counted', target };
  }

  /** Counts `change` from the bytes on both sides (`undefined`: no file there). */
  count(change: PlannedChange, current: Uint8Array | undefined, target: Uint8Array | undefined): LineStats {
    const stats = lineStats(current, target);
    this.counts.set(change, stats);
    return stats;
  }

  /** Takes the statistics of `change` as counted elsewhere, from the same bytes (a `ReplaceMany` job, replace-one.ts). */
  counted(change: PlannedChange, stats: LineStats): void {
    this.counts.set(change, stats);
  }

  /** `inverse` undoes `change`: its statistics are those of `change`, reversed. */
  countAsUndoing(inverse: PlannedChange, change: PlannedChange): void {
    const stats = this.of(change);
    this.counts.set(inverse, { ...stats, insertions: stats.deletions, deletions: stats.insertions });
  }

  of(change: PlannedChange): LineStats {
    return this.counts.get(change) ?? noLines;
  }
}

/** The contents on both sides of a change as the statistics cache names them; none when the current entry is a link. */
function sidesOf(change: PlannedChange): { from: string; to: string } | undefined {
  if (change.from.kind === 'symlink') return undefined;
  return { from: change.from.kind === 'file' ? change.from.sha256 : 'absent', to: change.to.kind === 'file' ? change.to.sha256 : 'absent' };
}

/**
 * Line statistics counted in a session, by the contents on both sides
 * (their SHA-256, or `absent`). A count depends on nothing else, so it stays
 * exact for as long as it is kept: the rewind that follows a dry run, and
 * the rewind back after it, neither read the current files for their
 * statistics nor diff them again.
 */
export class LineStatsCache {
  private readonly counts = new Map<string, LineStats>();

  /** `limit` counts at most (about 330 bytes each, keys included; each count is kept both ways), the oldest dropped first. */
  constructor(private readonly limit = 10_000) {}

  get(from: string, to: string): LineStats | undefined {
    return this.counts.get(`${from}>${to}`);
  }

  /** Keeps the count of `from` → `to`, and the same count reversed for `to` → `from`. */
  set(from: string, to: string, stats: LineStats): void {
    this.keep(`${from}>${to}`, stats);
    this.keep(`${to}>${from}`, { ...stats, insertions: stats.deletions, deletions: stats.insertions });
  }

  private keep(key: string, stats: LineStats): void {
    this.counts.delete(key);
    this.counts.set(key, stats);
    if (this.counts.size > this.limit) this.counts.delete(this.counts.keys().next().value!);
  }
}
