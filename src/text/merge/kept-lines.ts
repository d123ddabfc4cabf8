import { roughSquareRoot } from './rough-square-root.js';

/**
 * Which lines of a diff's middle go to the edit search. A line absent from
 * the other file can never be matched, so it is changed without searching.
 * A line that is frequent in the other file (blank lines, lone braces) could
 * be matched in many places; amid lines that are changed anyway, matching it
 * would only scatter the diff, so such a line is changed too, unless enough
 * frequent lines surround it to make a matched stretch plausible.
 */

/** The widest a frequent line's neighbourhood is looked at, in each direction. */
const neighbourhood = 100;
/** No file's frequency threshold goes above this, however long the file. */
const highestFrequentLimit = 1024;

const normal = 0;
const unmatched = 1;
const frequent = 2;

/** The lines of [from, to) of `ids` that go to the search, by their line numbers. */
export function keptLines(ids: Int32Array, from: number, to: number, countsInOtherFile: Int32Array): Int32Array {
  const frequentLimit = Math.min(roughSquareRoot(ids.length), highestFrequentLimit);
  const kinds = new Uint8Array(to - from);
  for (let line = from; line < to; line += 1) {
    const count = countsInOtherFile[ids[line]!]!;
    kinds[line - from] = count === 0 ? unmatched : count >= frequentLimit ? frequent : normal;
  }
  const kept: number[] = [];
  for (let index = 0; index < kinds.length; index += 1) {
    const kind = kinds[index];
    if (kind === normal || (kind === frequent && !drownedInUnmatched(kinds, index))) kept.push(from + index);
  }
  return Int32Array.from(kept);
}

/**
 * A frequent line is dropped when unmatched lines outnumber frequent ones
 * (itself counted twice) by more than three to one in the stretch around it
 * that has no normal line, and there are unmatched lines on both sides.
 */
function drownedInUnmatched(kinds: Uint8Array, index: number): boolean {
  const above = countNeighbours(kinds, index, -1);
  if (above.unmatched === 0) return false;
  const below = countNeighbours(kinds, index, 1);
  if (below.unmatched === 0) return false;
  const unmatchedCount = above.unmatched + below.unmatched;
  const frequentCount = above.frequent + below.frequent + 2;
  return 3 * frequentCount < unmatchedCount;
}

/** Unmatched and frequent lines next to `index` going one way, up to the first normal line. */
function countNeighbours(kinds: Uint8Array, index: number, step: 1 | -1): { unmatched: number; frequent: number } {
  const counts = { unmatched: 0, frequent: 0 };
  for (let distance = 1; distance <= neighbourhood; distance += 1) {
    const kind = kinds[index + step * distance];
    if (kind === undefined || kind === normal) break;
    if (kind === unmatched) counts.unmatched += 1;
    else counts.frequent += 1;
  }
  return counts;
}
