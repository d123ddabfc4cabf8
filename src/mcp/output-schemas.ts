import { z } from 'zod';
import { rewindActionSchema } from '../schemas.js';

/**
 * The `structuredContent` of each tool, declared as its `outputSchema`: the
 * server checks what it sends against them, and so do clients.
 */

const isoTime = z.iso.datetime({ offset: true });
// A pattern, not startsWith(): zod writes that as a JSON Schema `format` that clients' validators do not know, and warn about.
const absolutePath = z.string().regex(/^\//);
const codeAndMessage = z.object({ code: z.string(), message: z.string() });

export const sessionsOutputSchema = z.object({
  cwd: absolutePath.describe('The project directory.'),
  store: absolutePath,
  sessions: z
    .array(
      z.object({
        sessionId: z.uuid(),
        createdAt: isoTime,
        lastActivity: isoTime,
        checkpoints: z.int().nonnegative().describe('Checkpoints taken for user messages.'),
        trackedFiles: z.int().nonnegative(),
        firstPrompt: z.string().optional().describe('The start of the first user message, when the harness recorded it.'),
        damaged: codeAndMessage.optional().describe('The log cannot be read: opening this session fails with this error.'),
        interruptedRewind: z
          .object({ rewindId: z.uuid(), target: z.uuid(), at: isoTime })
          .optional()
          .describe('A rewind a crash interrupted: the next writer of the project rolls it back.'),
      }),
    )
    .describe('Most recently active first, at most 50.'),
  sessionsLeftOut: z.int().nonnegative().describe('Older sessions not listed.'),
});

export const checkpointsOutputSchema = z.object({
  sessionId: z.uuid(),
  cwd: absolutePath,
  checkpoints: z
    .array(
      z.object({
        id: z.uuid(),
        createdAt: isoTime,
        kind: z.enum(['message', 'undo']).describe('`undo`: the undo point taken just before a rewind wrote; undo_rewind goes back to it.'),
        prompt: z.string().optional().describe('The user message the checkpoint was taken for, when the harness recorded it.'),
        promptTruncated: z.boolean().optional(),
        files: z.array(absolutePath).describe('Tracked files whose state the checkpoint holds (the first 100).'),
        filesLeftOut: z.int().nonnegative().describe('Files of the checkpoint not listed in `files`.'),
      }),
    )
    .describe('Oldest first.'),
});

const plannedFileSchema = z.object({
  path: absolutePath,
  action: rewindActionSchema,
  insertions: z.int().nonnegative().describe('Lines the rewind puts back.'),
  deletions: z.int().nonnegative().describe('Lines the rewind removes.'),
  binary: z.boolean(),
  conflict: z.boolean().describe('Changed by someone other than the agent since the agent last wrote it.'),
  merge: z.object({ status: z.enum(['clean', 'conflict']), conflicts: z.int().nonnegative() }).optional(),
  diff: z.string().optional().describe('Unified diff from the file now (a/) to what the rewind writes (b/), possibly cut short.'),
  diffTruncated: z.boolean().optional().describe('The diff was cut short, or left out: read the diff resource for all of it.'),
});

export const rewindOutputSchema = z.object({
  summary: z
    .string()
    .describe('What happened (or would happen) and what to do next, in words: Claude Code hands a model this JSON, not the text content.'),
  sessionId: z.uuid(),
  checkpointId: z.uuid(),
  cwd: absolutePath,
  dryRun: z.boolean(),
  rewound: z.boolean().describe('True when files were written: false for a dry run, and for a rewind that found nothing to change.'),
  files: z.array(plannedFileSchema).describe('The files that change (the first 200, by path); the totals count them all.'),
  filesLeftOut: z.int().nonnegative().describe('Files that change but are not listed in `files`: the diff resource names them all.'),
  insertions: z.int().nonnegative(),
  deletions: z.int().nonnegative(),
  conflicts: z.array(absolutePath),
  skipped: z.array(z.object({ path: absolutePath, reason: z.string(), message: z.string() })).describe('Tracked files left alone, with the reason (the first 200).'),
  skippedLeftOut: z.int().nonnegative().describe('Files left alone but not listed in `skipped`.'),
  skippedLinks: z.int().nonnegative().describe('Paths refused for safety (links, hard links, moved directories, unreadable backups).'),
  directoriesRemoved: z.array(absolutePath),
  undoCheckpointId: z.uuid().optional().describe('Real runs: pass it to undo_rewind to put the files back as they were just before.'),
});

export type SessionsOutput = z.infer<typeof sessionsOutputSchema>;
export type CheckpointsOutput = z.infer<typeof checkpointsOutputSchema>;
export type RewindOutput = z.infer<typeof rewindOutputSchema>;
