import type { RewindConflictChoice } from '../rewind/rewind-choice.js';
import type { RewindableErrorCode, RewindableErrorDetailsOf } from '../errors.js';
import type { RewindFilesReady } from '../rewind/result.js';
import type { SkippedPath } from '../rewind/safety.js';
import type { TranscriptMessage } from './transcript.js';

/** What `rewind()` acts on: the files, the conversation, or both. */
export type RewindScope = 'files' | 'conversation' | 'both';

export interface RewindOptions {
  /** @default 'both' */
  scope?: RewindScope;
  /** Report without changing files or the conversation. @default false */
  dryRun?: boolean;
  /** Leave files changed by someone other than the tracked tools alone. @default false */
  skipConflicts?: boolean;
  /** Files changed by someone other than the tracked tools, as `rewindFiles(id, { onConflict })`. @default 'overwrite' */
  onConflict?: RewindConflictChoice;
  /** Rewind only these tracked files (paths, directories or globs), as `rewindFiles(id, { paths })`. @default every tracked file */
  paths?: readonly string[];
}

export interface ConversationRewind {
  /** The new end of the active branch: the parent of the rewound user message (`null` at the start). */
  leafUuid: string | null;
  /** The messages to show now, root first. */
  messages: TranscriptMessage[];
  /** The user message rewound to; harnesses often put its text back in the input box. */
  rewoundMessage: TranscriptMessage;
}

/**
 * What `rewind()` answers, discriminated on `status`. A real run that cannot
 * happen rejects with a `RewindableError`; only a dry run answers `rejected`.
 */
export type RewindResult = RewindReady | RewindSuccess | RewindPartial | RewindRejected;

/** `ready`: a dry run found the rewind possible. `success`: done in full. `partial`: done, some files left alone. `rejected`: a dry run found it impossible. */
export type RewindStatus = RewindResult['status'];

interface RewindParts {
  scope: RewindScope;
  /** The file part (scopes `files` and `both`). */
  files?: RewindFilesReady;
  /** The conversation part (scopes `conversation` and `both`). */
  conversation?: ConversationRewind;
  error?: undefined;
  errorCode?: undefined;
}

/** A dry run of a rewind that can happen. */
export interface RewindReady extends RewindParts {
  status: 'ready';
  dryRun: true;
  /** Files the rewind would leave alone, with reasons. */
  failures?: SkippedPath[];
}

/** A real rewind done in full. */
export interface RewindSuccess extends RewindParts {
  status: 'success';
  dryRun: false;
  failures?: undefined;
}

/** A real rewind done, but with some files left alone. */
export interface RewindPartial extends RewindParts {
  status: 'partial';
  dryRun: false;
  /** Files that could not be restored, with reasons. */
  failures: SkippedPath[];
}

/** A dry run of a rewind that cannot happen; nothing was changed. */
export interface RewindRejected {
  status: 'rejected';
  scope: RewindScope;
  dryRun: true;
  /** Why not; safe to show to an end user. */
  error: string;
  errorCode: RewindableErrorCode;
  /** That error's `details`, when it has any. */
  errorDetails?: RewindableErrorDetailsOf<RewindableErrorCode>;
  files?: undefined;
  conversation?: undefined;
  failures?: undefined;
}
