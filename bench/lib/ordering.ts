import { seededRandom } from './source-text.js';

/** The list rotated by `by` places: each contender goes first in turn. */
export function rotate<T>(list: readonly T[], by: number): T[] {
  const shift = by % list.length;
  return [...list.slice(shift), ...list.slice(0, shift)];
}

/** The list shuffled, the same way for the same seed. */
export function shuffled<T>(list: readonly T[], seed: number): T[] {
  const random = seededRandom(seed);
  const copy = [...list];
  for (let index = copy.length - 1; index > 0; index--) {
    const other = Math.floor(random() * (index + 1));
    [copy[index], copy[other]] = [copy[other]!, copy[index]!];
  }
  return copy;
}
