const marker = Symbol.for('rewindable.error');

/**
 * Stable machine-readable codes. A code never changes meaning once released;
 * match on `error.code`, show `error.message`.
 */
export const RewindableErrorCode = {
  /** An option passed to the manager is missing or malformed. */
  INVALID_OPTIONS: 'INVALID_OPTIONS',
  /** The project directory (`cwd`) does not exist or is not a directory. */
  CWD_NOT_FOUND: 'CWD_NOT_FOUND',
  /** Rewinding was switched off with `enabled: false`. */
  NOT_ENABLED: 'NOT_ENABLED',
  /** A message or checkpoint id is not a UUID. */
  INVALID_ID: 'INVALID_ID',
  /** No checkpoint of this session has that id. */
  CHECKPOINT_NOT_FOUND: 'CHECKPOINT_NOT_FOUND',
  /** The id is a checkpoint of another session of the same project. */
  CHECKPOINT_IN_OTHER_SESSION: 'CHECKPOINT_IN_OTHER_SESSION',
  /** `checkpoint(id)` was given the id of a checkpoint that is not the latest. */
  CHECKPOINT_ID_REUSED: 'CHECKPOINT_ID_REUSED',
  /** `trackEdit()` was called before the first `checkpoint()`. */
  NO_CHECKPOINT: 'NO_CHECKPOINT',
  /** No message of the session's transcript has that UUID. */
  MESSAGE_NOT_FOUND: 'MESSAGE_NOT_FOUND',
  /** A message was recorded again with the same UUID but different content or parent. */
  MESSAGE_CONFLICT: 'MESSAGE_CONFLICT',
  /** A message handed to the manager is malformed (not JSON, missing type ...). */
  INVALID_MESSAGE: 'INVALID_MESSAGE',
  /** A path is empty, not a string, or contains a NUL byte; or a `paths` entry leads outside the project. */
  INVALID_PATH: 'INVALID_PATH',
  /** A hunk id given to a rewind names no hunk of the rewind's patch as the files are now. */
  HUNK_NOT_FOUND: 'HUNK_NOT_FOUND',
  /** A path lies outside the project root and the extra roots. */
  PATH_OUTSIDE_PROJECT: 'PATH_OUTSIDE_PROJECT',
  /** A path lies inside the store directory. */
  PATH_IN_STORE: 'PATH_IN_STORE',
  /** A path is a symbolic link, or a link now lies on its parent path. */
  PATH_IS_LINK: 'PATH_IS_LINK',
  /** A path names a directory, FIFO, socket or device. */
  NOT_A_REGULAR_FILE: 'NOT_A_REGULAR_FILE',
  /** A file is larger than the configured backup size cap. */
  FILE_TOO_LARGE: 'FILE_TOO_LARGE',
  /** `session: { resume }` (or `'continue'`) named a session that does not exist. */
  SESSION_NOT_FOUND: 'SESSION_NOT_FOUND',
  /** `session: { id }` named a session that already exists. */
  SESSION_EXISTS: 'SESSION_EXISTS',
  /** Another live process holds the session. */
  SESSION_LOCKED: 'SESSION_LOCKED',
  /** The session log belongs to another project directory. */
  PROJECT_MISMATCH: 'PROJECT_MISMATCH',
  /** The session log is damaged before its last line. */
  LOG_CORRUPT: 'LOG_CORRUPT',
  /** A mirror's remote store did not catch up within flush()'s bound; everything is safe locally. */
  MIRROR_FLUSH_TIMEOUT: 'MIRROR_FLUSH_TIMEOUT',
  /** A session's local and remote copies differ (it was written in two places); the mirror stopped copying it. */
  SESSION_DIVERGED: 'SESSION_DIVERGED',
  /** Reading or writing a project file failed (an I/O error, permissions); nothing was recorded. */
  FILE_IO: 'FILE_IO',
  /** Reading or writing the store failed (disk full, permissions, I/O error). */
  STORE_IO: 'STORE_IO',
  /** Scanning the capture scope failed (an unreadable directory ...). */
  CAPTURE_FAILED: 'CAPTURE_FAILED',
  /** A real rewind could not be completed; files were rolled back. */
  REWIND_FAILED: 'REWIND_FAILED',
  /** A write was attempted through a manager opened with `session: { resume, readOnly: true }`. */
  READ_ONLY: 'READ_ONLY',
  /** The manager was used after `close()`. */
  CLOSED: 'CLOSED',
  /** A tool's input does not match its schema. */
  INVALID_TOOL_INPUT: 'INVALID_TOOL_INPUT',
  /** A tool could not do what it was asked (string not found, cell missing ...). */
  TOOL_FAILED: 'TOOL_FAILED',
} as const;

export type RewindableErrorCode = (typeof RewindableErrorCode)[keyof typeof RewindableErrorCode];

/** A code whose errors carry no `details`. */
type NoDetails = Record<string, never>;

/**
 * What `details` holds for each code: the values a program needs to act on
 * the failure without parsing the message. Fields marked optional are set
 * only where the failing call knows them.
 */
export type RewindableErrorDetails = {
  INVALID_OPTIONS: { option?: string };
  CWD_NOT_FOUND: { path?: string };
  NOT_ENABLED: NoDetails;
  // The value given, which need not be a string.
  INVALID_ID: { id: unknown };
  CHECKPOINT_NOT_FOUND: { id: string };
  CHECKPOINT_IN_OTHER_SESSION: { id: string; sessionId: string };
  CHECKPOINT_ID_REUSED: { id?: string };
  NO_CHECKPOINT: NoDetails;
  MESSAGE_NOT_FOUND: { uuid?: string; parentUuid?: string; messageUuid?: string };
  MESSAGE_CONFLICT: { uuid: string };
  INVALID_MESSAGE: NoDetails;
  // The `paths` entry refused, where one was.
  INVALID_PATH: { path?: string };
  HUNK_NOT_FOUND: { hunk: string };
  PATH_OUTSIDE_PROJECT: { path: string; resolved?: string };
  PATH_IN_STORE: { path: string };
  PATH_IS_LINK: { path: string; tool?: string };
  NOT_A_REGULAR_FILE: { path: string; tool?: string };
  FILE_TOO_LARGE: { path: string; tool?: string };
  SESSION_NOT_FOUND: { sessionId?: string; projectKey?: string };
  SESSION_EXISTS: { sessionId: string; projectKey: string; cwd?: string };
  SESSION_LOCKED: {
    sessionId?: string;
    projectKey?: string;
    pid?: number | null;
    hostname?: string | null;
    leaseExpiresAt?: string;
    lockPath?: string;
    reason?: 'lock-lost' | 'remote-held';
  };
  PROJECT_MISMATCH: { sessionId: string; cwd: string };
  LOG_CORRUPT: { entry?: number; line?: number; byteOffset?: number };
  MIRROR_FLUSH_TIMEOUT: { pendingEntries: number; pendingBlobs: number; sessions: string[]; reason: 'flush-timeout' };
  SESSION_DIVERGED: { sessionId: string; projectKey: string; divergedAt: number; reason: 'diverged' };
  FILE_IO: { path: string };
  STORE_IO: { path?: string; retryable?: boolean; missingPackage?: string };
  CAPTURE_FAILED: { path?: string };
  REWIND_FAILED: { undoCheckpointId?: string; path?: string };
  READ_ONLY: NoDetails;
  CLOSED: NoDetails;
  INVALID_TOOL_INPUT: { tool: string; field: string };
  TOOL_FAILED: { tool: string; [key: string]: unknown };
};

/**
 * The `details` of an error of `Code`: typed for one code; for the full union
 * any field reads as `unknown`, so code that does not narrow keeps compiling.
 */
export type RewindableErrorDetailsOf<Code extends RewindableErrorCode> = RewindableErrorDetails[Code] & { readonly [field: string]: unknown };

export interface RewindableErrorOptions<Code extends RewindableErrorCode = RewindableErrorCode> {
  cause?: unknown;
  /** Extra structured context (paths, ids) for logs and programs. */
  details?: RewindableErrorDetailsOf<Code>;
}

/**
 * The one error type rewindable throws. Every failure carries a stable `code`
 * and a message that says what went wrong and what to do about it; `details`
 * is typed by the code once it is known (`RewindableError.hasCode`).
 *
 * @example
 * try { await manager.rewindFiles(id); }
 * catch (error) {
 *   if (RewindableError.hasCode(error, 'CHECKPOINT_NOT_FOUND')) console.log(error.details?.id);
 * }
 */
export class RewindableError<Code extends RewindableErrorCode = RewindableErrorCode> extends Error {
  readonly [marker] = true;
  readonly code: Code;
  readonly details: RewindableErrorDetailsOf<Code> | undefined;

  constructor(code: Code, message: string, options: RewindableErrorOptions<Code> = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'RewindableError';
    this.code = code;
    this.details = options.details;
  }

  /** True for errors thrown by any copy of rewindable (works across bundles and realms). */
  static isInstance(error: unknown): error is RewindableError {
    return typeof error === 'object' && error !== null && marker in error;
  }

  /** True for a rewindable error with this code; narrows `details` to that code's shape. */
  static hasCode<Code extends RewindableErrorCode>(error: unknown, code: Code): error is RewindableError<Code> {
    return RewindableError.isInstance(error) && error.code === code;
  }
}

/** Wraps an unexpected failure reading or writing a project file in a typed error. */
export function fileIoError(action: string, filePath: string, cause: unknown): RewindableError {
  if (RewindableError.isInstance(cause)) return cause;
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new RewindableError(RewindableErrorCode.FILE_IO, `Could not ${action} ${filePath}: ${reason}. Nothing was recorded; fix the cause and retry.`, {
    cause,
    details: { path: filePath },
  });
}

/** Wraps an unexpected filesystem failure of the store in a typed error. */
export function storeIoError(action: string, cause: unknown): RewindableError {
  const reason = cause instanceof Error ? cause.message : String(cause);
  const code = (cause as NodeJS.ErrnoException | undefined)?.code;
  const remedy = (code !== undefined ? storeRemedies[code] : undefined) ?? 'check free space and permissions, then retry';
  return new RewindableError(RewindableErrorCode.STORE_IO, `Could not ${action}: ${reason}. Nothing was recorded; ${remedy}.`, { cause });
}

/** What to do about the usual reasons the store cannot be used, where the generic advice (free space, permissions) would mislead. */
const storeRemedies: Record<string, string> = {
  EROFS: 'the store is on a read-only filesystem: point the store (storeDir, --store or REWINDABLE_HOME) at a writable directory',
  ENOTDIR: 'part of the store path is a file, not a directory: point the store (storeDir, --store or REWINDABLE_HOME) at a directory',
  EACCES: 'this user may not use the store directory: fix its permissions or point the store elsewhere',
  EPERM: 'this user may not use the store directory: fix its permissions or point the store elsewhere',
  ENOSPC: 'the disk holding the store is full: free some space, then retry',
  EDQUOT: 'the disk quota for the store is used up: free some space, then retry',
};
