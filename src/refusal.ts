/**
 * Why a rewind leaves a path alone: one vocabulary, from the check of an
 * entry on disk to the `skipped` list of a result. The first eight are the
 * safety refusals that `skippedLinks` counts (the name comes from the
 * Claude Agent SDK's result, which counts links it would not follow).
 */
export const refusals = [
  'outside-project',
  'invalid-path',
  'symlink',
  'hard-link',
  'not-regular',
  'parent-changed',
  'backup-unreadable',
  'target-not-restorable',
  'too-large',
  'conflict',
  'merge-conflict',
  'changed-during-rewind',
] as const;

export type Refusal = (typeof refusals)[number];

/** The refusals counted in `skippedLinks`: what is there may not be written through or over, or cannot be restored. */
export const safetyRefusals: ReadonlySet<Refusal> = new Set<Refusal>(refusals.slice(0, 8));
