import { describe, expect, it } from 'vitest';
import { lineStats } from '../../src/text/line-stats.js';
import { LineStatsCache } from '../../src/rewind/measure.js';

describe('the statistics counted in a session', () => {
  it('gives back a count by the contents on both sides, and the same count reversed the other way', () => {
    const cache = new LineStatsCache();
    cache.set('a1', 'b2', { insertions: 3, deletions: 1, binary: false, skipped: false });
    cache.set('absent', 'c3', { insertions: 7, deletions: 0, binary: false, skipped: false });
    expect(cache.get('a1', 'b2')).toEqual({ insertions: 3, deletions: 1, binary: false, skipped: false });
    expect(cache.get('b2', 'a1')).toEqual({ insertions: 1, deletions: 3, binary: false, skipped: false });
    expect(cache.get('c3', 'absent')).toEqual({ insertions: 0, deletions: 7, binary: false, skipped: false });
    expect(cache.get('a1', 'c3')).toBeUndefined();
    // A reversed count is exact: git's numstat of the swapped files says the same.
    const current = Buffer.from('one\ntwo\nthree\n');
    const target = Buffer.from('one\n2\nthree\nfour\n');
    const forward = lineStats(current, target);
    cache.set('current', 'target', forward);
    expect(cache.get('target', 'current')).toEqual(lineStats(target, current));
  });

  it('keeps at most its limit of counts, dropping the oldest first', () => {
    const cache = new LineStatsCache(4);
    const stats = (insertions: number) => ({ insertions, deletions: 0, binary: false, skipped: false });
    cache.set('a', 'b', stats(1));
    cache.set('c', 'd', stats(2));
    cache.set('e', 'f', stats(3));
    expect(cache.get('a', 'b')).toBeUndefined();
    expect(cache.get('b', 'a')).toBeUndefined();
    expect(cache.get('c', 'd')?.insertions).toBe(2);
    expect(cache.get('f', 'e')?.deletions).toBe(3);
  });
});
