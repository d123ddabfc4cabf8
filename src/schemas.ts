import { z } from 'zod';

/**
 * Records of the session log. Each is one JSON line, appended the moment the
 * event happens. Readers ignore record types they do not know, so newer
 * writers can add types without breaking older readers.
 */

const sha256 = z.string().regex(/^[0-9a-f]{64}$/, 'a lowercase hex SHA-256');
const isoTime = z.string().min(1);

/** Stat signature of a file as last observed; lets a checkpoint skip re-reading unchanged files. */
export const observationSchema = z.object({
  /** `dev:ino:size:mode:mtimeNs:ctimeNs` */
  sig: z.string(),
  /** Wall-clock time (ns since epoch) taken before the file was read. */
  atNs: z.string(),
});
export type Observation = z.infer<typeof observationSchema>;

export const fileTypeSchema = z.enum(['directory', 'fifo', 'socket', 'character-device', 'block-device', 'unknown']);
export type FileType = z.infer<typeof fileTypeSchema>;

/**
 * What a tracked path was at some moment. Only `file` and `absent` can be
 * restored; every other kind is a state a rewind never recreates: a link or
 * a special file would be written through, and an oversized file has no backup.
 */
export const fileStateSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('absent') }),
  z.object({
    kind: z.literal('file'),
    sha256,
    size: z.number().int().nonnegative(),
    /** Permission bits (`mode & 0o7777`). */
    mode: z.number().int().nonnegative(),
  }),
  z.object({ kind: z.literal('symlink') }),
  z.object({ kind: z.literal('not-regular'), fileType: fileTypeSchema }),
  /** A link appeared on the parent path after the path was first tracked. */
  z.object({ kind: z.literal('unsafe-parent') }),
  z.object({ kind: z.literal('too-large'), size: z.number().int().nonnegative() }),
]);
export type FileState = z.infer<typeof fileStateSchema>;
export type RegularFileState = Extract<FileState, { kind: 'file' }>;

/** A path as stored in the log: relative to the project root (POSIX separators) or absolute for extra roots. */
const storedPath = z.string().min(1);

export const sessionStartRecordSchema = z.object({
  type: z.literal('session-start'),
  formatVersion: z.literal(1),
  sessionId: z.string(),
  /** Real path of the project root; detects two projects whose encoded names collide. */
  cwd: z.string(),
  createdAt: isoTime,
  /** Set when the session was forked from another one. */
  forkedFrom: z.object({ sessionId: z.string(), messageId: z.string() }).optional(),
  /** The machine that started the session (absent in logs written before machines were recorded). */
  host: z.string().optional(),
});

/**
 * What a scan of the capture scope knew, for the next scan to tell a file
 * created since from one that was there but out of its sight (absent in logs
 * written before these fields: the next scan then assumes the rules changed).
 */
const scanKnowledge = {
  /** Identifies the scope's rules (options and `.gitignore` files) the scan applied. */
  scanRules: z.string().optional(),
  /** Files the scan found in scope but could not back up (over the size cap, unreadable). */
  scanLeftOut: z.array(storedPath).optional(),
};

export const checkpointRecordSchema = z.object({
  type: z.literal('checkpoint'),
  id: z.string(),
  createdAt: isoTime,
  /** `message`: a user message arrived. `pre-rewind`: automatic, taken so a rewind can be undone. */
  reason: z.enum(['message', 'pre-rewind']),
  /** True when the latest checkpoint was refreshed in place (`checkpoint(latestId)` again). */
  refresh: z.boolean().optional(),
  /** When the capture scope scan for this checkpoint started (ns since epoch); absent without a capture scope. */
  scanStartedAtNs: z.string().optional(),
  ...scanKnowledge,
  /** Tracked paths whose state changed since the previous checkpoint. */
  files: z.array(z.object({ path: storedPath, state: fileStateSchema, observed: observationSchema.optional() })),
});

export const trackRecordSchema = z.object({
  type: z.literal('track'),
  /** The checkpoint the first backup belongs to. */
  checkpointId: z.string(),
  path: storedPath,
  state: fileStateSchema,
  observed: observationSchema.optional(),
  /**
   * For a first backup "absent": how many of the path's nearest ancestor
   * directories did not exist either, so that the write creates them. A
   * rewind that deletes the file removes them again once empty (absent in
   * logs written before this was recorded: then none is removed).
   */
  missingParents: z.number().int().positive().optional(),
  at: isoTime,
});

/** What a tracked tool wrote, so later changes by anyone else can be told apart (conflicts). */
export const writeRecordSchema = z.object({
  type: z.literal('write'),
  path: storedPath,
  state: fileStateSchema,
  observed: observationSchema.optional(),
  tool: z.string().optional(),
  toolCallId: z.string().optional(),
  /** The bytes written were stored with the record: a merge can start from what the tools last wrote. */
  stored: z.literal(true).optional(),
  at: isoTime,
});

export const rewindActionSchema = z.enum(['restore', 'recreate', 'delete', 'chmod']);
export type RewindAction = z.infer<typeof rewindActionSchema>;

/** Written, durably, before a rewind touches any file. */
export const rewindBeginRecordSchema = z.object({
  type: z.literal('rewind-begin'),
  rewindId: z.string(),
  target: z.string(),
  undoCheckpointId: z.string(),
  at: isoTime,
  /** `to`: the state written, when no checkpoint holds it (a merge, chosen hunks); else the target checkpoint's. */
  plan: z.array(z.object({ path: storedPath, action: rewindActionSchema, to: fileStateSchema.optional() })),
});

export const rewindEndRecordSchema = z.object({
  type: z.literal('rewind-end'),
  rewindId: z.string(),
  /** `complete`: every planned change made. `rolled-back`: files put back as they were before the rewind. */
  status: z.enum(['complete', 'rolled-back']),
  at: isoTime,
  filesChanged: z.array(storedPath),
  insertions: z.number().int().nonnegative(),
  deletions: z.number().int().nonnegative(),
  skipped: z.array(z.object({ path: storedPath, reason: z.string() })),
  error: z.string().optional(),
});

/**
 * A message of the conversation, as the harness handed it over. `role` is the
 * message's own type (user, assistant, system, tool ...); `message` is the
 * harness's payload, any JSON. Messages link to their parent, so branches
 * and resumes rebuild exactly.
 */
export const messageRecordSchema = z.object({
  type: z.literal('message'),
  uuid: z.string(),
  parentUuid: z.string().nullable(),
  role: z.string().min(1),
  timestamp: isoTime,
  message: z.unknown(),
});

/** The active leaf of the conversation moved back to just before a user message; nothing is deleted. */
export const conversationRewindRecordSchema = z.object({
  type: z.literal('conversation-rewind'),
  /** The user message the conversation was rewound to (it and what followed are off the active branch). */
  messageUuid: z.string(),
  /** The new active leaf: that message's parent (`null`: the start of the conversation). */
  leafUuid: z.string().nullable(),
  at: isoTime,
});

/** The project directory moved; paths in the log are relative to it, so only the root changes. */
export const projectMovedRecordSchema = z.object({
  type: z.literal('project-moved'),
  from: z.string(),
  to: z.string(),
  at: isoTime,
  /** The machine that followed the move; from here on the session is its own. */
  host: z.string().optional(),
  /**
   * The session was another machine's: it was copied here, and the original
   * stays under `from` for that machine (a move deletes it).
   */
  copy: z.literal(true).optional(),
});

/**
 * First backups of many files found by one scan of the capture scope, in one
 * compact record (a first scan can find tens of thousands).
 */
export const scanBackupsRecordSchema = z.object({
  type: z.literal('scan-backups'),
  /** The checkpoint these first backups belong to. */
  checkpointId: z.string(),
  /** Taken before any of the files was read: the observation time of every signature below. */
  observedAtNs: z.string(),
  /** Backed up as they were: [path, sha256, size, mode, stat signature]. */
  files: z.array(z.tuple([storedPath, sha256, z.number().int().nonnegative(), z.number().int().nonnegative(), z.string()])),
  /** Created during the turn: first backup "absent" (a rewind to before removes them). */
  absent: z.array(storedPath),
  /** Links found in scope: recorded as links, never read through. */
  links: z.array(storedPath),
  at: isoTime,
});

/** What one captured command (a shell tool) created, modified and deleted in the capture scope. */
export const captureRecordSchema = z.object({
  type: z.literal('capture'),
  label: z.string().optional(),
  created: z.array(storedPath),
  modified: z.array(storedPath),
  deleted: z.array(storedPath),
  /** When the scan after the command started (ns since epoch). */
  scanStartedAtNs: z.string(),
  ...scanKnowledge,
  at: isoTime,
});

/**
 * Voids the record just before it. Written when a session is reopened and its
 * last record names a backup that did not survive a crash: that record was
 * never acknowledged, so no tool wrote after it.
 */
export const discardRecordSchema = z.object({
  type: z.literal('discard'),
  count: z.literal(1),
  reason: z.string(),
  at: isoTime,
});

export const logRecordSchema = z.discriminatedUnion('type', [
  sessionStartRecordSchema,
  checkpointRecordSchema,
  trackRecordSchema,
  writeRecordSchema,
  rewindBeginRecordSchema,
  rewindEndRecordSchema,
  discardRecordSchema,
  messageRecordSchema,
  conversationRewindRecordSchema,
  projectMovedRecordSchema,
  captureRecordSchema,
  scanBackupsRecordSchema,
]);

export type SessionStartRecord = z.infer<typeof sessionStartRecordSchema>;
export type CheckpointRecord = z.infer<typeof checkpointRecordSchema>;
export type TrackRecord = z.infer<typeof trackRecordSchema>;
export type WriteRecord = z.infer<typeof writeRecordSchema>;
export type RewindBeginRecord = z.infer<typeof rewindBeginRecordSchema>;
export type RewindEndRecord = z.infer<typeof rewindEndRecordSchema>;
export type DiscardRecord = z.infer<typeof discardRecordSchema>;
export type MessageRecord = z.infer<typeof messageRecordSchema>;
export type ConversationRewindRecord = z.infer<typeof conversationRewindRecordSchema>;
export type ProjectMovedRecord = z.infer<typeof projectMovedRecordSchema>;
export type CaptureRecord = z.infer<typeof captureRecordSchema>;
export type ScanBackupsRecord = z.infer<typeof scanBackupsRecordSchema>;
export type LogRecord = z.infer<typeof logRecordSchema>;

export const knownRecordTypes: ReadonlySet<string> = new Set(logRecordSchema.options.map((option) => option.shape.type.value));
