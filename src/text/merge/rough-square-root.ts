/**
 * The diff's limits grow with the square root of a size, rounded to a power
 * of two so that they change in steps, not with every line: the smallest 2^k
 * with 4^k > size. 0 gives 1, 1 to 3 give 2, 4 to 15 give 4, and so on.
 */
export function roughSquareRoot(size: number): number {
  let root = 1;
  // root * root is 4^k: doubling the root multiplies it by 4.
  while (root * root <= size) root *= 2;
  return root;
}
