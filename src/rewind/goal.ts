import type { ObservedPath } from '../fs/inspect-path.js';
import { sha256 } from '../hash.js';
import type { FileState, RegularFileState } from '../schemas.js';
import type { TrackedPath } from '../session/session-state.js';
import type { BlobRead } from '../store/session-log.js';
import type { SkippedPath } from './safety.js';

/**
 * What a rewind makes of a path. A full or selective rewind puts back the
 * checkpoint's state. A goal computes the state from the file now as well:
 * a revert or a merge keeps changes made since (undo-on-top.ts), a hunk
 * rewind applies some of the patch (chosen-hunks.ts). Its result is a state
 * like any other; the plan, its safety rules and the transaction stay the same.
 */
export interface Goal {
  /** Whether `resolve` needs the bytes of the file now (a regular file, found as `now`). */
  needsBytes(tracked: TrackedPath, now: FileState, checkpoint: FileState): boolean;
  /** The state to rewind the path to, given what it is now (with its bytes when `needsBytes` said so). */
  resolve(tracked: TrackedPath, now: ObservedPath, checkpoint: FileState): Promise<GoalOutcome>;
  /** Bytes of states that no backup holds (see `ComputedContents`). */
  readonly computed: ComputedContents;
  /** The merges behind the targets, by absolute path. */
  readonly merges: ReadonlyMap<string, FileMerge>;
}

export type GoalOutcome = { kind: 'target'; state: FileState } | { kind: 'left-alone'; skipped: SkippedPath };

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

/**
 * Contents a goal computed (a merge, some hunks), by hash. They are read
 * from here like backups from the store; a real run stores them before any
 * file is written, so that what the session records was written is stored.
 */
export class ComputedContents {
  private readonly byHash = new Map<string, Buffer>();

  add(bytes: Buffer, mode: number): RegularFileState {
    const state: RegularFileState = { kind: 'file', sha256: sha256(bytes), size: bytes.length, mode };
    this.byHash.set(state.sha256, bytes);
    return state;
  }

  has(hash: string): boolean {
    return this.byHash.has(hash);
  }

  get(hash: string): Buffer | undefined {
    return this.byHash.get(hash);
  }

  /** A reader that looks here first, then in the store. */
  readerOver(readBlob: (hash: string) => Promise<BlobRead>): (hash: string) => Promise<BlobRead> {
    return (hash) => {
      const bytes = this.byHash.get(hash);
      return bytes !== undefined ? Promise.resolve({ ok: true, bytes }) : readBlob(hash);
    };
  }
}
