import { searchCutOffs } from './split-cut-offs.js';
import { costLimitFor, splitFinder, type Box } from './split-point.js';

/**
 * Which elements of `a` and `b` a shortest edit script (or, on costly
 * inputs, a nearly shortest one) keeps. Divide and conquer: strip the
 * equal pairs at both ends of a box, then cut it where the two-way search
 * meets and treat both halves the same way, until every box is empty on
 * one side. A work list instead of recursion: deep boxes cannot overflow
 * the stack.
 */
export function matchSequences(a: Int32Array, b: Int32Array): { matchedA: Uint8Array; matchedB: Uint8Array } {
  const matchedA = new Uint8Array(a.length);
  const matchedB = new Uint8Array(b.length);
  const findSplit = splitFinder(a, b, searchCutOffs(a, b, costLimitFor(a.length + b.length)));
  const boxes: Box[] = [{ x0: 0, x1: a.length, y0: 0, y1: b.length, exhaustive: false }];
  for (let box = boxes.pop(); box; box = boxes.pop()) {
    let { x0, x1, y0, y1 } = box;
    while (x0 < x1 && y0 < y1 && a[x0] === b[y0]) {
      matchedA[x0++] = 1;
      matchedB[y0++] = 1;
    }
    while (x0 < x1 && y0 < y1 && a[x1 - 1] === b[y1 - 1]) {
      matchedA[--x1] = 1;
      matchedB[--y1] = 1;
    }
    // What is left of a box empty on one side is all insertions or all deletions: unmatched.
    if (x0 === x1 || y0 === y1) continue;
    const split = findSplit({ x0, x1, y0, y1, exhaustive: box.exhaustive });
    boxes.push({ x0, x1: split.x, y0, y1: split.y, exhaustive: split.firstExhaustive });
    boxes.push({ x0: split.x, x1, y0: split.y, y1, exhaustive: split.secondExhaustive });
  }
  return { matchedA, matchedB };
}
