import type { LineStats } from '../text/line-stats.js';

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
