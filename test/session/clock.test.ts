import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isoString, now } from '../../src/session/clock.js';

// Every record's timestamp: the formatting shortcut must give exactly what toISOString gives.
describe('log timestamps', () => {
  it('format any time exactly as toISOString does', () => {
    fc.assert(
      fc.property(fc.integer({ min: -62_198_755_200_000, max: 8_640_000_000_000_000 }), (ms) => {
        expect(isoString(ms)).toBe(new Date(ms).toISOString());
      }),
      { numRuns: 20_000 },
    );
  });

  it('format the edges of days, years and the four-digit range exactly as toISOString does', () => {
    const edges = [0, 1, 999, 1000, 59_999, 86_399_999, 86_400_000, 951_782_400_000, 1_709_164_799_999, 4_107_542_399_999, 253_402_300_799_999, 253_402_300_800_000, -1];
    // Alternating days exercises the cached date part changing back and forth.
    for (const ms of [...edges, ...edges.reverse()]) expect(isoString(ms)).toBe(new Date(ms).toISOString());
  });

  it('gives the current time', () => {
    const before = Date.now();
    const stamp = Date.parse(now());
    expect(stamp).toBeGreaterThanOrEqual(before);
    expect(stamp).toBeLessThanOrEqual(Date.now());
  });
});
