import type { CheckpointInfo } from '../session/session-state.js';
import type { Session } from '../session/session.js';

/** Options of `manager.diffFiles()` (filled in by the diff/CLI issue). */
export interface DiffOptions {
  /** Only these files (paths as given to trackEdit, or absolute). */
  paths?: string[];
}

/** One file's difference between now and a checkpoint (filled in by the diff/CLI issue). */
export type FileDiff = Record<string, never>;

export async function diffAgainstCheckpoint(_session: Session, _target: CheckpointInfo, _options: DiffOptions): Promise<FileDiff[]> {
  return [];
}
