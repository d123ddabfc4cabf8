import type { CheckpointManager } from '../checkpoint-manager.js';

/** The built-in tools bound to one manager (filled in by the tools issue). */
export type ManagerTools = Record<string, never>;

export function createTools(_manager: CheckpointManager): ManagerTools {
  return {};
}
