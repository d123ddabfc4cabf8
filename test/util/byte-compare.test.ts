import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { commonPrefixLength, commonSuffixLength } from '../../src/util/byte-compare.js';

function naivePrefix(a: Uint8Array, b: Uint8Array): number {
  let index = 0;
  while (index < a.length && index < b.length && a[index] === b[index]) index += 1;
  return index;
}

function naiveSuffix(a: Uint8Array, b: Uint8Array, limit: number): number {
  let count = 0;
  while (count < limit && a[a.length - 1 - count] === b[b.length - 1 - count]) count += 1;
  return count;
}

/** Two byte strings that share a long start and end around a short differing middle, as one-line edits do. */
const edited = fc
  .tuple(
    fc.uint8Array({ maxLength: 5000 }),
    fc.uint8Array({ maxLength: 40 }),
    fc.uint8Array({ maxLength: 40 }),
    fc.uint8Array({ maxLength: 5000 }),
  )
  .map(([start, oldMiddle, newMiddle, end]) => [Buffer.concat([start, oldMiddle, end]), Buffer.concat([start, newMiddle, end])] as const);

describe('shared ends of byte strings', () => {
  it('finds the same common prefix and suffix as a byte-by-byte scan', () => {
    fc.assert(
      fc.property(edited, fc.nat(), ([a, b], cut) => {
        expect(commonPrefixLength(a, b)).toBe(naivePrefix(a, b));
        const prefix = commonPrefixLength(a, b);
        const limit = Math.min(a.length, b.length) - prefix;
        expect(commonSuffixLength(a, b, limit)).toBe(naiveSuffix(a, b, limit));
        const smaller = limit === 0 ? 0 : cut % (limit + 1);
        expect(commonSuffixLength(a, b, smaller)).toBe(naiveSuffix(a, b, smaller));
      }),
      { numRuns: 500 },
    );
  });

  it('handles equal, empty and one-sided inputs, and views into larger buffers', () => {
    const text = Buffer.from('x'.repeat(100_000));
    expect(commonPrefixLength(text, Buffer.from(text))).toBe(100_000);
    expect(commonSuffixLength(text, Buffer.from(text))).toBe(100_000);
    expect(commonPrefixLength(new Uint8Array(0), text)).toBe(0);
    expect(commonSuffixLength(text, new Uint8Array(0))).toBe(0);
    const backing = new Uint8Array([9, 1, 2, 3, 9]);
    const view = backing.subarray(1, 4);
    expect(commonPrefixLength(view, new Uint8Array([1, 2, 4]))).toBe(2);
    expect(commonSuffixLength(view, new Uint8Array([0, 2, 3]))).toBe(2);
    expect(commonSuffixLength(view, new Uint8Array([7, 1, 2, 3]))).toBe(3);
  });
});
