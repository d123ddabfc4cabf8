import { matchSequences } from './edit-search.js';
import { readHunks, type Hunk } from './hunks.js';
import { keptLines } from './kept-lines.js';
import { slideChanges } from './slide-changes.js';

/**
 * The line diff of base to one side, as git's default diff makes it: the
 * merge's verdict depends on exactly which lines each diff calls changed, so
 * every choice git makes among equally short diffs is made the same way.
 * Lines are given as ids (equal ids, equal lines) below `distinctLines`.
 */
export function diffLines(base: Int32Array, side: Int32Array, distinctLines: number): Hunk[] {
  const baseChanged = new Uint8Array(base.length);
  const sideChanged = new Uint8Array(side.length);
  // Lines both files share at the start and end are unchanged in every diff: no need to search them.
  const shorter = Math.min(base.length, side.length);
  let prefix = 0;
  while (prefix < shorter && base[prefix] === side[prefix]) prefix += 1;
  let suffix = 0;
  while (suffix < shorter - prefix && base[base.length - 1 - suffix] === side[side.length - 1 - suffix]) suffix += 1;
  const baseEnd = base.length - suffix;
  const sideEnd = side.length - suffix;

  if (prefix < baseEnd || prefix < sideEnd) {
    // Everything in the middle is changed unless the search matches it.
    baseChanged.fill(1, prefix, baseEnd);
    sideChanged.fill(1, prefix, sideEnd);
    const baseKept = keptLines(base, prefix, baseEnd, countLines(side, distinctLines));
    const sideKept = keptLines(side, prefix, sideEnd, countLines(base, distinctLines));
    const { matchedA, matchedB } = matchSequences(
      baseKept.map((line) => base[line]!),
      sideKept.map((line) => side[line]!),
    );
    matchedA.forEach((matched, index) => matched && (baseChanged[baseKept[index]!] = 0));
    matchedB.forEach((matched, index) => matched && (sideChanged[sideKept[index]!] = 0));
  }

  // The base's runs are placed first; the side's then line up with them.
  slideChanges(base, baseChanged, sideChanged);
  slideChanges(side, sideChanged, baseChanged);
  return readHunks(baseChanged, sideChanged);
}

/** How many times each line id occurs in a whole file. */
function countLines(ids: Int32Array, distinctLines: number): Int32Array {
  const counts = new Int32Array(distinctLines);
  for (const id of ids) counts[id] = counts[id]! + 1;
  return counts;
}
