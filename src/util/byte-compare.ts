/**
 * The shared ends of two byte strings, found with the native memcmp of
 * `Buffer#compare` over offsets (no views made): blocks that double in size
 * while they match, then halves of the first block that does not. A file
 * changed in one line costs a dozen calls, not one per byte or per block.
 * Both run on every delta the pack stores and on every line count of a rewind.
 */

/** Below this many bytes the last stretch is compared byte by byte. */
const byteByByte = 32;
const firstBlock = 256;

/** How many leading bytes `a` and `b` share. */
export function commonPrefixLength(a: Uint8Array, b: Uint8Array): number {
  const x = asBuffer(a);
  const y = asBuffer(b);
  const limit = Math.min(x.length, y.length);
  for (let start = 0, size = firstBlock; start < limit; size *= 2) {
    const end = Math.min(start + size, limit);
    if (x.compare(y, start, end, start, end) !== 0) {
      // [0, low) is shared; the first difference is in [low, high).
      let low = start;
      let high = end;
      while (high - low > byteByByte) {
        const middle = (low + high) >>> 1;
        if (x.compare(y, low, middle, low, middle) === 0) low = middle;
        else high = middle;
      }
      while (x[low] === y[low]) low += 1;
      return low;
    }
    start = end;
  }
  return limit;
}

/** How many trailing bytes `a` and `b` share, at most `limit`. */
export function commonSuffixLength(a: Uint8Array, b: Uint8Array, limit = Math.min(a.length, b.length)): number {
  const x = asBuffer(a);
  const y = asBuffer(b);
  // Compares the `count` bytes that end `length` bytes before each end.
  const same = (skipped: number, count: number) => x.compare(y, y.length - skipped - count, y.length - skipped, x.length - skipped - count, x.length - skipped) === 0;
  for (let done = 0, size = firstBlock; done < limit; size *= 2) {
    const count = Math.min(size, limit - done);
    if (!same(done, count)) {
      // The last `low` bytes are shared; the first difference from the end is within the next `high - low`.
      let low = done;
      let high = done + count;
      while (high - low > byteByByte) {
        const middle = (low + high) >>> 1;
        if (same(low, middle - low)) low = middle;
        else high = middle;
      }
      while (x[x.length - 1 - low] === y[y.length - 1 - low]) low += 1;
      return low;
    }
    done += count;
  }
  return limit;
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
