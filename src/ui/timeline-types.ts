/**
 * The JSON the timeline server answers, as the page reads it. Types only:
 * the page's bundle imports nothing from the library's code.
 */
import type { BranchSummary } from '../conversation/conversation.js';
import type { FileChangeDiff, FileDiff, FileSkipDiff } from '../diff/diff-files.js';
import type { SessionSummary } from '../session/list-sessions.js';

export interface SessionsResponse {
  cwd: string;
  sessions: SessionSummary[];
}

/** One row of a session's timeline: a checkpoint, with its user message when the harness recorded one. */
export interface TimelineCheckpoint {
  id: string;
  createdAt: string;
  /** `message`: a user message's checkpoint. `pre-rewind`: the undo point taken just before a rewind wrote. */
  reason: 'message' | 'pre-rewind';
  prompt?: string;
  /** Tracked files whose state the checkpoint holds. */
  fileCount: number;
  /** Files the turn that began here touched, when the harness recorded the message. */
  touched?: string[];
  /** False for a message on a branch the conversation was rewound away from. */
  onActiveBranch: boolean;
}

/** A branch of the conversation: the user messages from its root to its leaf. */
export interface TimelineBranch extends BranchSummary {
  userMessages: Array<{ uuid: string; timestamp: string; text?: string }>;
}

export interface TimelineResponse {
  sessionId: string;
  cwd: string;
  /** Oldest first. */
  checkpoints: TimelineCheckpoint[];
  branches: TimelineBranch[];
}

/**
 * A file of a rewind preview: the diff without its patch (asked for one file at a time), and the ids of its
 * hunks in patch order (absent when the patch has no `@@` hunk), which a rewind of some hunks names.
 */
export type PreviewFile = (Omit<FileChangeDiff, 'patch' | 'hunks'> & { hunkIds?: string[] }) | FileSkipDiff;

export interface PreviewResponse {
  sessionId: string;
  checkpointId: string;
  cwd: string;
  /** What the checkpoint is, as the CLI names it. */
  kind: 'message' | 'undo point';
  prompt?: string;
  /** The checkpoint's user message is on the conversation's active branch: a rewind may take the conversation back too. */
  conversationRewindable: boolean;
  files: PreviewFile[];
  /** The counts the confirmation repeats. */
  counts: { files: number; insertions: number; deletions: number; conflicts: number; leftAlone: number };
  /**
   * A digest of the plan this preview shows. A rewind sends it back; when the files (or the conversation) changed
   * since, the plan differs and the rewind is refused with `PLAN_CHANGED`, changing nothing.
   */
  plan: string;
}

export interface DiffResponse {
  sessionId: string;
  checkpointId: string;
  cwd: string;
  path: string;
  /** Null when the file is the same now as at the checkpoint. */
  file: FileDiff | null;
}

/**
 * A dry run of a rewind of some files or hunks, or of a revert of one turn:
 * what it would change, in figures and as the CLI's dry run prints it.
 */
export interface PlanPreviewResponse {
  sessionId: string;
  checkpointId: string;
  cwd: string;
  kind: 'message' | 'undo point';
  files: PlanFile[];
  leftAlone: Array<{ path: string; reason: string; message: string }>;
  /** The counts the confirmation repeats; `conflicts` are files written although they conflict (a revert's markers or overwrite, a rewind's overwrite). */
  counts: PreviewResponse['counts'];
  /** Lines as `rewindable rewind --dry-run` (with `--path` or `--hunk`) or `rewindable revert --dry-run` prints them. */
  report: string[];
  /** A digest of this plan: the rewind or revert sends it back, as a whole rewind sends its preview's. */
  plan: string;
}

export interface PlanFile {
  path: string;
  action: string;
  insertions: number;
  deletions: number;
  binary: boolean;
  conflict: boolean;
  /** A revert's three-way merge of the file: `clean`, or `conflict` with the lines in the file now. */
  merge?: { status: 'clean' | 'conflict'; conflicts: Array<{ current: { start: number; count: number } }> };
}

/** What a rewind or an undo did, and the report the CLI prints for it. */
export interface RewindResponse {
  status: 'success' | 'partial';
  /** Lines as `rewindable rewind` prints them, without colours. */
  report: string[];
  /** Rewind to it to undo this rewind (absent when no file was written). */
  undoCheckpointId?: string;
  /** Where the conversation's active branch now ends, after a conversation rewind. */
  conversationLeaf?: string | null;
}

/** Every error answer: the library's code (or the server's own refusal) and a sentence for people. */
export interface ErrorResponse {
  error: { code: string; message: string; details?: unknown };
}
