import { roughSquareRoot } from './rough-square-root.js';

/**
 * Where to cut a box of the edit search in two: a forward search from the
 * box's top-left corner and a backward one from its bottom-right corner
 * advance one edit per round until they meet on the middle of a shortest
 * edit script. On costly boxes the search is cut short (split-cut-offs.ts
 * picks the point then), which trades a minimal diff for bounded time.
 *
 * A point (x, y) has consumed x lines of `a` and y of `b`; its diagonal is
 * x - y. `forward[k]` holds the largest x the forward search reached on
 * diagonal k, `backward[k]` the smallest x the backward search reached.
 */

/** A box: lines [x0, x1) of `a` against [y0, y1) of `b`. */
export interface Box {
  x0: number;
  x1: number;
  y0: number;
  y1: number;
  /** No cut-off may shorten the search inside this box or the boxes cut from it. */
  exhaustive: boolean;
}

export interface SplitPoint {
  x: number;
  y: number;
  firstExhaustive: boolean;
  secondExhaustive: boolean;
}

/** The state of one box's search after a round, which the cut-offs read. */
export interface SearchRound {
  box: Box;
  round: number;
  forward: Int32Array;
  backward: Int32Array;
  /** Index of diagonal 0 in `forward` and `backward`. */
  offset: number;
  forwardLow: number;
  forwardHigh: number;
  backwardLow: number;
  backwardHigh: number;
  /** Some slide this round followed more than `longSlide` equal pairs. */
  sawLongSlide: boolean;
}

export type CutOff = (state: SearchRound) => SplitPoint | undefined;

/** A slide longer than this is a sign the search is on a good track. */
export const longSlide = 20;
const unreachedBackward = 0x3fffffff;

/** A split finder for boxes of `a` against `b`; its tables are reused by every box. */
export function splitFinder(a: Int32Array, b: Int32Array, cutOff: CutOff): (box: Box) => SplitPoint {
  const offset = b.length + 1;
  // Diagonals run from -|b| to |a|, plus one unreached neighbour on each side.
  const forward = new Int32Array(a.length + b.length + 3);
  const backward = new Int32Array(a.length + b.length + 3);
  return (box) => {
    const { x0, x1, y0, y1 } = box;
    const lowest = x0 - y1;
    const highest = x1 - y0;
    const forwardStart = x0 - y0;
    const backwardStart = x1 - y1;
    const meetInForward = ((forwardStart - backwardStart) & 1) !== 0;
    const state: SearchRound = { box, round: 0, forward, backward, offset, forwardLow: forwardStart, forwardHigh: forwardStart, backwardLow: backwardStart, backwardHigh: backwardStart, sawLongSlide: false };
    forward[offset + forwardStart] = x0;
    backward[offset + backwardStart] = x1;
    for (;;) {
      state.round += 1;
      state.sawLongSlide = false;
      // The range of diagonals widens while it can and narrows at an edge it has hit; its parity flips each round.
      if (state.forwardLow > lowest) forward[offset + --state.forwardLow - 1] = -1;
      else state.forwardLow += 1;
      if (state.forwardHigh < highest) forward[offset + ++state.forwardHigh + 1] = -1;
      else state.forwardHigh -= 1;
      for (let k = state.forwardHigh; k >= state.forwardLow; k -= 2) {
        let x = Math.max(forward[offset + k - 1]! + 1, forward[offset + k + 1]!);
        let y = x - k;
        const start = x;
        while (x < x1 && y < y1 && a[x] === b[y]) {
          x += 1;
          y += 1;
        }
        if (x - start > longSlide) state.sawLongSlide = true;
        forward[offset + k] = x;
        if (meetInForward && k >= state.backwardLow && k <= state.backwardHigh && backward[offset + k]! <= x) {
          return { x, y, firstExhaustive: true, secondExhaustive: true };
        }
      }

      if (state.backwardLow > lowest) backward[offset + --state.backwardLow - 1] = unreachedBackward;
      else state.backwardLow += 1;
      if (state.backwardHigh < highest) backward[offset + ++state.backwardHigh + 1] = unreachedBackward;
      else state.backwardHigh -= 1;
      for (let k = state.backwardHigh; k >= state.backwardLow; k -= 2) {
        let x = Math.min(backward[offset + k - 1]!, backward[offset + k + 1]! - 1);
        let y = x - k;
        const start = x;
        while (x > x0 && y > y0 && a[x - 1] === b[y - 1]) {
          x -= 1;
          y -= 1;
        }
        if (start - x > longSlide) state.sawLongSlide = true;
        backward[offset + k] = x;
        if (!meetInForward && k >= state.forwardLow && k <= state.forwardHigh && x <= forward[offset + k]!) {
          return { x, y, firstExhaustive: true, secondExhaustive: true };
        }
      }

      if (!box.exhaustive) {
        const cut = cutOff(state);
        if (cut) return cut;
      }
    }
  };
}

/** The round from which a box's search gives up: at least 256, more for very long inputs. */
export function costLimitFor(keptLineTotal: number): number {
  return Math.max(256, roughSquareRoot(keptLineTotal + 3));
}
