/**
 * The part of a text that an edit changed, in whole lines: everything before
 * it and after it is common to both versions. Diffing only this region (plus
 * a few lines of context) keeps a one-line edit of a large file as cheap as
 * one of a small file.
 */
export interface ChangedRegion {
  /** Where the region starts in both texts (a line start). */
  start: number;
  /** Where it ends in `before` and in `after` (line starts, or the ends). */
  beforeEnd: number;
  afterEnd: number;
}

export function changedRegion(before: string, after: string): ChangedRegion {
  let first = 0;
  const shorter = Math.min(before.length, after.length);
  while (first < shorter && before.charCodeAt(first) === after.charCodeAt(first)) first += 1;
  const start = first === 0 ? 0 : before.lastIndexOf('\n', first - 1) + 1;
  let beforeEnd = before.length;
  let afterEnd = after.length;
  while (beforeEnd > start && afterEnd > start && before.charCodeAt(beforeEnd - 1) === after.charCodeAt(afterEnd - 1)) {
    beforeEnd -= 1;
    afterEnd -= 1;
  }
  // The common tail must start a line in both texts: move forward to the next line start of that (identical) tail.
  if (!(isLineStart(before, beforeEnd) && isLineStart(after, afterEnd))) {
    const newline = before.indexOf('\n', beforeEnd);
    const next = newline === -1 ? before.length : newline + 1;
    afterEnd += next - beforeEnd;
    beforeEnd = next;
  }
  return { start, beforeEnd, afterEnd };
}

/** Index after going back `count` lines from `index` (a line start), stopping at 0. */
export function linesBack(text: string, index: number, count: number): number {
  let position = index;
  for (let step = 0; step < count && position > 0; step += 1) position = position < 2 ? 0 : text.lastIndexOf('\n', position - 2) + 1;
  return position;
}

/** Index after going forward `count` lines from `index` (a line start), stopping at the end. */
export function linesForward(text: string, index: number, count: number): number {
  let position = index;
  for (let step = 0; step < count && position < text.length; step += 1) {
    const newline = text.indexOf('\n', position);
    position = newline === -1 ? text.length : newline + 1;
  }
  return position;
}

export function countNewlines(text: string, from = 0, to = text.length): number {
  let count = 0;
  for (let index = text.indexOf('\n', from); index !== -1 && index < to; index = text.indexOf('\n', index + 1)) count += 1;
  return count;
}

function isLineStart(text: string, index: number): boolean {
  return index === 0 || index === text.length || text.charCodeAt(index - 1) === 10;
}
