import type { ObservedPath } from '../fs/inspect-path.js';
import { sha256 } from '../hash.js';
import type { FileState, RegularFileState } from '../schemas.js';
import type { TrackedPath } from '../session/session-state.js';
import type { BlobRead } from '../store/session-log.js';
import type { FileMerge } from './file-merge.js';
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
  /** Throws, once the plan is made and before anything is written, when it found less than the goal asked for. */
  assertPlanned?(): void;
}

export type GoalOutcome = { kind: 'target'; state: FileState } | { kind: 'left-alone'; skipped: SkippedPath };

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
