/** What a rewind reports of a file it merged (see undo-on-top.ts). */

/** How a file's target was merged (`revertTurn`, `onConflict: 'merge' | 'markers'`). */
export interface FileMerge {
  /** `clean`: every change kept. `conflict`: the two sets of changes overlap in `conflicts`. */
  status: 'clean' | 'conflict';
  /** Overlapping regions, with their lines in the file now, in the base, and in the version being restored. */
  conflicts: MergeConflict[];
  /** Dry runs: the merged text, as it would be written (with conflict markers, when `onConflict` is `markers`). */
  preview?: string;
}

/** Lines `start` (1-based) to `start + count - 1`; `count` 0 is an empty range before line `start`. */
export interface LineRange {
  start: number;
  count: number;
}

export interface MergeConflict {
  /** In the file as it is now. */
  current: LineRange;
  /** In the base: the file after the turn (a revert), or as the tools last wrote it (a rewind). */
  base: LineRange;
  /** In the version the rewind restores: before the turn, or at the checkpoint. */
  restored: LineRange;
}
