/**
 * A diff's result read as hunks. Both files' unchanged lines pair up in
 * order, so the k-th run of changed lines in one file and the k-th in the
 * other (either may be empty) are the two sides of one hunk.
 */

/** Lines [oldStart, oldStart + oldCount) of the old file became [newStart, newStart + newCount) of the new one. */
export interface Hunk {
  oldStart: number;
  oldCount: number;
  newStart: number;
  newCount: number;
}

/** The hunks, top to bottom, from each file's changed-line marks (1 = changed). */
export function readHunks(oldChanged: Uint8Array, newChanged: Uint8Array): Hunk[] {
  const hunks: Hunk[] = [];
  let oldLine = 0;
  let newLine = 0;
  for (;;) {
    const oldStart = oldLine;
    const newStart = newLine;
    while (oldChanged[oldLine] === 1) oldLine += 1;
    while (newChanged[newLine] === 1) newLine += 1;
    if (oldLine > oldStart || newLine > newStart) hunks.push({ oldStart, oldCount: oldLine - oldStart, newStart, newCount: newLine - newStart });
    // Both files reach their ends together: they have as many unchanged lines.
    if (oldLine >= oldChanged.length || newLine >= newChanged.length) return hunks;
    oldLine += 1;
    newLine += 1;
  }
}
