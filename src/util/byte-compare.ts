/** How many leading bytes `a` and `b` share. Compares in blocks first: this runs on every delta. */
export function commonPrefixLength(a: Uint8Array, b: Uint8Array): number {
  const limit = Math.min(a.length, b.length);
  const block = 256;
  let index = 0;
  while (index + block <= limit && Buffer.compare(a.subarray(index, index + block), b.subarray(index, index + block)) === 0) {
    index += block;
  }
  while (index < limit && a[index] === b[index]) index += 1;
  return index;
}

/** How many trailing bytes `a` and `b` share, at most `limit`. */
export function commonSuffixLength(a: Uint8Array, b: Uint8Array, limit = Math.min(a.length, b.length)): number {
  const block = 256;
  let count = 0;
  while (
    count + block <= limit &&
    Buffer.compare(a.subarray(a.length - count - block, a.length - count), b.subarray(b.length - count - block, b.length - count)) === 0
  ) {
    count += block;
  }
  while (count < limit && a[a.length - 1 - count] === b[b.length - 1 - count]) count += 1;
  return count;
}
