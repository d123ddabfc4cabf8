/**
 * Where a run of changed lines sits when equal lines let it move. Deleting
 * one "x" from "x x x" can be shown at any of the three; the merge must pick
 * the same one git picks, because two sides' changes conflict exactly when
 * their hunks touch. A run goes as far down as it can, merging with runs it
 * meets, unless on its way it lined up with a change in the other file: then
 * it stays at the lowest such place, so the two show as one hunk.
 */

/**
 * Moves the changed runs of one file of a diff (marks in `changed`, 1 =
 * changed) against the other file's marks, which are read but not moved.
 * The k-th run of either file, empty or not, lies in the gap after the k-th
 * unchanged line, so moving a run past an unchanged line moves its partner
 * to the neighbouring run of the other file.
 */
export function slideChanges(ids: Int32Array, changed: Uint8Array, partnerChanged: Uint8Array): void {
  let start = 0;
  let end = runEnd(changed, 0);
  let partnerStart = 0;
  let partnerEnd = runEnd(partnerChanged, 0);

  const slideUp = () => {
    changed[--start] = 1;
    changed[--end] = 0;
    start = runStart(changed, start);
    partnerEnd = partnerStart - 1;
    partnerStart = runStart(partnerChanged, partnerEnd);
  };
  const slideDown = () => {
    changed[start++] = 0;
    changed[end++] = 1;
    end = runEnd(changed, end);
    partnerStart = partnerEnd + 1;
    partnerEnd = runEnd(partnerChanged, partnerStart);
  };
  const canSlideUp = () => start > 0 && ids[start - 1] === ids[end - 1];
  const canSlideDown = () => end < ids.length && ids[start] === ids[end];

  for (;;) {
    if (end > start) {
      let size: number;
      let topEnd: number;
      let linesUp: boolean;
      // Sliding can swallow neighbouring runs; once a full sweep up and down swallows none, the range is known.
      do {
        size = end - start;
        while (canSlideUp()) slideUp();
        topEnd = end;
        linesUp = partnerEnd > partnerStart;
        while (canSlideDown()) {
          slideDown();
          if (partnerEnd > partnerStart) linesUp = true;
        }
      } while (end - start !== size);
      if (end !== topEnd && linesUp) {
        while (partnerEnd === partnerStart) slideUp();
      }
    }
    if (end >= ids.length) return;
    start = end + 1;
    end = runEnd(changed, start);
    partnerStart = partnerEnd + 1;
    partnerEnd = runEnd(partnerChanged, partnerStart);
  }
}

function runEnd(marks: Uint8Array, from: number): number {
  let end = from;
  while (marks[end] === 1) end += 1;
  return end;
}

function runStart(marks: Uint8Array, to: number): number {
  let start = to;
  while (start > 0 && marks[start - 1] === 1) start -= 1;
  return start;
}
