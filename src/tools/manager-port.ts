import { RewindableError, RewindableErrorCode } from '../errors.js';
import type { ObservedPath } from '../fs/inspect-path.js';
import type { RecordWriteOptions } from '../session/record-write.js';
import type { IntendedWrite } from '../session/track-edit.js';

/**
 * What the tools need of a manager. The tools are written against this port,
 * not against `CheckpointManager`, so that the manager can build them without
 * either module importing the other.
 */
export interface ToolManager {
  /** Real path of the project root. */
  readonly root: string;
  /** Largest file that is backed up; the tools never write a larger one. */
  readonly maxFileBytes: number;
  readonly durability: 'full' | 'none';
  /** The canonical absolute path tracked for `filePath` (throws the typed path errors). */
  resolvePath(filePath: string): string;
  trackEdit(filePath: string): Promise<void>;
  recordWrite(filePath: string, details?: RecordWriteOptions): Promise<void>;
}

/**
 * The part of the port only the built-in tools use, for paths they have
 * already resolved and read through a pinned directory. A manager keeps it
 * under `toolPort`, out of its public surface.
 */
export interface TrackedWritePort {
  /**
   * A first backup made from `reading` when the path is not tracked yet;
   * with `intended`, recorded together with the write it is taken for.
   * Resolves to true when the write was recorded with it.
   */
  trackRead(absolute: string, reading: ObservedPath, intended?: IntendedWrite): Promise<boolean>;
  /** Records what a tool just wrote to a canonical path. */
  recordResolvedWrite(absolute: string, details: RecordWriteOptions): Promise<void>;
  /** Whether reopening the session sweeps `directory` for temporary files of writes cut short. */
  sweepsOnReopen(directory: string): Promise<boolean>;
}

/** Where a manager keeps its `TrackedWritePort`. `Symbol.for`: a manager from another copy of the package still works. */
export const toolPort: unique symbol = Symbol.for('rewindable.tool-port') as never;

/** The manager's tracked-write port, or a typed error for an object that is not a manager of this package. */
export function trackedWritePortOf(manager: ToolManager): TrackedWritePort {
  const port = (manager as Partial<Record<typeof toolPort, TrackedWritePort>>)[toolPort];
  if (port === undefined) {
    throw new RewindableError(RewindableErrorCode.INVALID_OPTIONS, 'The built-in tools need a CheckpointManager: pass the manager itself, not another object with its methods.');
  }
  return port;
}
