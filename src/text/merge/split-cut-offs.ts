import { longSlide, type CutOff, type SearchRound, type SplitPoint } from './split-point.js';

/**
 * Two ways to stop a costly search before the forward and backward searches
 * meet. Both keep the diff's time near-linear on large, heavily edited
 * files, at the price of a diff that may not be the shortest. The side of
 * the split the search has not settled keeps its right to be cut short; the
 * settled side must be searched in full.
 */

/** A good slide is only trusted after this many rounds. */
const goodSlideRound = 256;

export function searchCutOffs(a: Int32Array, b: Int32Array, costLimit: number): CutOff {
  return (state) => {
    if (state.round > goodSlideRound && state.sawLongSlide) {
      const cut = forwardGoodSlide(a, b, state) ?? backwardGoodSlide(a, b, state);
      if (cut) return cut;
    }
    return state.round >= costLimit ? furthestReach(state) : undefined;
  };
}

/**
 * A forward point far along (edits weighed against progress) that ends a run
 * of `longSlide` equal pairs is likely on the right path: split there.
 * Among equal scores the highest diagonal wins.
 */
function forwardGoodSlide(a: Int32Array, b: Int32Array, state: SearchRound): SplitPoint | undefined {
  const { x0, x1, y0, y1 } = state.box;
  let best = 0;
  let found: SplitPoint | undefined;
  for (let k = state.forwardHigh; k >= state.forwardLow; k -= 2) {
    const x = state.forward[state.offset + k]!;
    const y = x - k;
    const score = x - x0 + (y - y0) - Math.abs(k - (x0 - y0));
    if (score <= 4 * state.round || score <= best) continue;
    if (x < x0 + longSlide || x >= x1 || y < y0 + longSlide || y >= y1) continue;
    if (!runEqual(a, b, x - longSlide, y - longSlide)) continue;
    best = score;
    found = { x, y, firstExhaustive: true, secondExhaustive: false };
  }
  return found;
}

/** The mirror image: a backward point that starts a run of `longSlide` equal pairs. */
function backwardGoodSlide(a: Int32Array, b: Int32Array, state: SearchRound): SplitPoint | undefined {
  const { x0, x1, y0, y1 } = state.box;
  let best = 0;
  let found: SplitPoint | undefined;
  for (let k = state.backwardHigh; k >= state.backwardLow; k -= 2) {
    const x = state.backward[state.offset + k]!;
    const y = x - k;
    const score = x1 - x + (y1 - y) - Math.abs(k - (x1 - y1));
    if (score <= 4 * state.round || score <= best) continue;
    if (x <= x0 || x > x1 - longSlide || y <= y0 || y > y1 - longSlide) continue;
    if (!runEqual(a, b, x, y)) continue;
    best = score;
    found = { x, y, firstExhaustive: false, secondExhaustive: true };
  }
  return found;
}

function runEqual(a: Int32Array, b: Int32Array, x: number, y: number): boolean {
  for (let step = 0; step < longSlide; step += 1) if (a[x + step] !== b[y + step]) return false;
  return true;
}

/**
 * Out of budget: split at whichever search got further from its corner,
 * counting both coordinates and clipping reaches to the box. A tie goes to
 * the backward search.
 */
function furthestReach(state: SearchRound): SplitPoint {
  const { x0, x1, y0, y1 } = state.box;
  let forwardX = 0;
  let forwardY = 0;
  let forwardSum = -1;
  for (let k = state.forwardHigh; k >= state.forwardLow; k -= 2) {
    let x = Math.min(state.forward[state.offset + k]!, x1);
    let y = x - k;
    if (y > y1) [x, y] = [y1 + k, y1];
    if (x + y > forwardSum) [forwardX, forwardY, forwardSum] = [x, y, x + y];
  }
  let backwardX = 0;
  let backwardY = 0;
  let backwardSum = Number.POSITIVE_INFINITY;
  for (let k = state.backwardHigh; k >= state.backwardLow; k -= 2) {
    let x = Math.max(state.backward[state.offset + k]!, x0);
    let y = x - k;
    if (y < y0) [x, y] = [y0 + k, y0];
    if (x + y < backwardSum) [backwardX, backwardY, backwardSum] = [x, y, x + y];
  }
  if (x1 + y1 - backwardSum < forwardSum - (x0 + y0)) return { x: forwardX, y: forwardY, firstExhaustive: true, secondExhaustive: false };
  return { x: backwardX, y: backwardY, firstExhaustive: false, secondExhaustive: true };
}
