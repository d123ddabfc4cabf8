import { z } from 'zod';
import { rewindActionSchema } from '../schemas.js';

/**
 * The shapes `--json` prints, one per command. They are the CLI's contract
 * with scripts: the CLI checks its own output against them before printing,
 * and the tests parse what the built binary prints with them.
 */

const isoTime = z.iso.datetime({ offset: true });
const uuid = z.uuid();
const absolutePath = z.string().startsWith('/');

export const errorOutputSchema = z.strictObject({
  error: z.strictObject({ code: z.string().min(1), message: z.string().min(1) }),
});

export const sessionsOutputSchema = z.strictObject({
  store: absolutePath,
  cwd: absolutePath,
  sessions: z.array(
    z.strictObject({
      sessionId: uuid,
      createdAt: isoTime,
      lastActivity: isoTime,
      /** Checkpoints taken for user messages. */
      checkpoints: z.int().nonnegative(),
      trackedFiles: z.int().nonnegative(),
      bytes: z.int().nonnegative().optional(),
      /** The log cannot be read (LOG_CORRUPT, STORE_IO): the counts are 0 and createdAt is lastActivity. */
      damaged: z.strictObject({ code: z.string().min(1), message: z.string().min(1) }).optional(),
      /** A rewind a crash interrupted: opening this session, or any other of the project, for writing rolls it back. */
      interruptedRewind: z.strictObject({ rewindId: uuid, target: uuid, at: isoTime }).optional(),
    }),
  ),
});

export const checkpointsOutputSchema = z.strictObject({
  sessionId: uuid,
  cwd: absolutePath,
  checkpoints: z.array(
    z.strictObject({
      id: uuid,
      createdAt: isoTime,
      reason: z.enum(['message', 'pre-rewind']),
      /** `undo`: an undo point, taken before a rewind wrote anything; rewinding to it undoes that rewind. */
      kind: z.enum(['message', 'undo']),
      /** The first line of the user message, trimmed, when the harness recorded it. */
      prompt: z.string().min(1).optional(),
      /** Tracked files whose state the checkpoint holds (absolute paths). */
      files: z.array(absolutePath),
    }),
  ),
});

/** One `@@` hunk of `patch`, in its order; `id` is what `rewind --hunk` takes. */
const patchHunkSchema = z.strictObject({
  id: z.string().regex(/^[0-9a-f]{12}-\d+(-\d+)?$/),
  oldStart: z.int().nonnegative(),
  oldLines: z.int().nonnegative(),
  newStart: z.int().nonnegative(),
  newLines: z.int().nonnegative(),
});

const fileSideSchema = z.strictObject({ size: z.int().nonnegative(), mode: z.int().nonnegative() }).nullable();

export const fileDiffSchema = z.discriminatedUnion('action', [
  z.strictObject({
    path: absolutePath,
    action: rewindActionSchema,
    patch: z.string().optional(),
    hunks: z.array(patchHunkSchema).min(1).optional(),
    insertions: z.int().nonnegative(),
    deletions: z.int().nonnegative(),
    binary: z.boolean(),
    tooLarge: z.boolean(),
    tooComplex: z.boolean(),
    statsSkipped: z.boolean(),
    conflict: z.boolean(),
    current: fileSideSchema,
    target: fileSideSchema,
  }),
  z.strictObject({ path: absolutePath, action: z.literal('skip'), reason: z.string().min(1), message: z.string().min(1) }),
]);

export const diffOutputSchema = z.strictObject({
  sessionId: uuid,
  checkpointId: uuid,
  cwd: absolutePath,
  /** Totals over the files a rewind would change. */
  insertions: z.int().nonnegative(),
  deletions: z.int().nonnegative(),
  files: z.array(fileDiffSchema),
});

const lineRangeSchema = z.strictObject({ start: z.int().positive(), count: z.int().nonnegative() });

/** How a file was merged (`revert`, `rewind --on-conflict merge|markers`): lines as in the file before the rewind. */
const fileMergeSchema = z.strictObject({
  status: z.enum(['clean', 'conflict']),
  conflicts: z.array(z.strictObject({ current: lineRangeSchema, base: lineRangeSchema, restored: lineRangeSchema })),
  /** When nothing was written: the merged text as it would be written (absent for text that is not UTF-8). */
  preview: z.string().optional(),
});

const plannedFileSchema = z.strictObject({
  path: absolutePath,
  action: rewindActionSchema,
  insertions: z.int().nonnegative(),
  deletions: z.int().nonnegative(),
  binary: z.boolean(),
  statsSkipped: z.boolean(),
  conflict: z.boolean(),
  merge: fileMergeSchema.optional(),
});

/** `rewind` and `revert`: a revert is a rewind of the files one turn changed, and reports as one. */
export const rewindOutputSchema = z.strictObject({
  sessionId: uuid,
  checkpointId: uuid,
  cwd: absolutePath,
  /** True when files were written. */
  rewound: z.boolean(),
  /**
   * Why nothing was written: a dry run, nothing differs, every path that may differ is left alone (see
   * `skipped`; exit 1), or no --yes (JSON output never prompts).
   */
  notRewoundBecause: z.enum(['dry-run', 'nothing-to-change', 'all-left-alone', 'confirmation-required']).optional(),
  files: z.array(plannedFileSchema),
  insertions: z.int().nonnegative(),
  deletions: z.int().nonnegative(),
  /** `reason` `merge-conflict`: the merge that conflicted, in `merge`. */
  skipped: z.array(z.strictObject({ path: absolutePath, reason: z.string().min(1), message: z.string().min(1), merge: fileMergeSchema.optional() })),
  skippedLinks: z.int().nonnegative(),
  conflicts: z.array(absolutePath),
  /** Real rewinds: rewind to this checkpoint to undo. */
  undoCheckpointId: uuid.optional(),
});

export const gcOutputSchema = z.strictObject({
  store: absolutePath,
  olderThanDays: z.number().nonnegative(),
  /** False for a dry run or an unconfirmed gc: `sessionsRemoved` are then the sessions a real run would remove. */
  removed: z.boolean(),
  notRemovedBecause: z.enum(['dry-run', 'confirmation-required']).optional(),
  sessionsRemoved: z.array(z.strictObject({ projectKey: z.string().min(1), sessionId: z.string().min(1) })),
  sessionsKept: z.int().nonnegative(),
  sessionsLocked: z.int().nonnegative(),
  /** Idle files named like sessions that are not rewindable session logs: never removed. */
  leftAlone: z.array(z.strictObject({ projectKey: z.string().min(1), sessionId: z.string().min(1), reason: z.string().min(1) })),
  blobsRemoved: z.int().nonnegative(),
  bytesFreed: z.int().nonnegative(),
  blobsKeptBecause: z.string().optional(),
});

export const unlockOutputSchema = z.strictObject({
  store: absolutePath,
  sessionId: z.string().min(1),
  projectKey: z.string().min(1),
  /** The lock as found (or as removed); null when the session was not locked. */
  lock: z
    .strictObject({
      pid: z.int().positive().nullable(),
      hostname: z.string().nullable(),
      acquiredAt: z.string().nullable(),
      renewedAt: z.string(),
      leaseExpiresAt: z.string(),
      live: z.boolean(),
    })
    .nullable(),
  removed: z.boolean(),
});

export type SessionsOutput = z.infer<typeof sessionsOutputSchema>;
export type CheckpointsOutput = z.infer<typeof checkpointsOutputSchema>;
export type DiffOutput = z.infer<typeof diffOutputSchema>;
export type RewindOutput = z.infer<typeof rewindOutputSchema>;
export type GcOutput = z.infer<typeof gcOutputSchema>;
export type UnlockOutput = z.infer<typeof unlockOutputSchema>;
export type ErrorOutput = z.infer<typeof errorOutputSchema>;
