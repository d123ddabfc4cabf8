import type { RewindFilesResult } from '../rewind/result.js';
import type { SkippedPath } from '../rewind/safety.js';
import type { TranscriptMessage } from './transcript.js';

/** What `rewind()` acts on: the files, the conversation, or both. */
export type RewindScope = 'files' | 'conversation' | 'both';

/**
 * `ready`: a dry run found the rewind possible. `success`: done in full.
 * `partial`: done, but some files were left alone (see `failures`).
 * `rejected`: nothing was changed (see `error`).
 */
export type RewindStatus = 'ready' | 'success' | 'partial' | 'rejected';

export interface RewindOptions {
  /** @default 'both' */
  scope?: RewindScope;
  /** Report without changing files or the conversation. @default false */
  dryRun?: boolean;
  /** Leave files changed by someone other than the tracked tools alone. @default false */
  skipConflicts?: boolean;
}

export interface ConversationRewind {
  /** The new end of the active branch: the parent of the rewound user message (`null` at the start). */
  leafUuid: string | null;
  /** The messages to show now, root first. */
  messages: TranscriptMessage[];
  /** The user message rewound to; harnesses often put its text back in the input box. */
  rewoundMessage: TranscriptMessage;
}

export interface RewindResult {
  status: RewindStatus;
  scope: RewindScope;
  dryRun: boolean;
  /** Why nothing changed (`rejected`); safe to show to an end user. */
  error?: string;
  errorCode?: string;
  /** The file part (scopes `files` and `both`). */
  files?: RewindFilesResult;
  /** The conversation part (scopes `conversation` and `both`). */
  conversation?: ConversationRewind;
  /** Files that could not be restored, with reasons (`partial`). */
  failures?: SkippedPath[];
}
