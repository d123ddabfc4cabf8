export { CheckpointManager } from './checkpoint-manager.js';
export type { BranchSummary, CheckpointSummary, ForkOptions, RecordWriteOptions, RevertTurnOptions, RewindFilesOptions, TranscriptEntry } from './checkpoint-manager.js';
export type { RecordMessageInput } from './conversation/record-message.js';
export type {
  ConversationRewind,
  RewindOptions,
  RewindPartial,
  RewindReady,
  RewindRejected,
  RewindResult,
  RewindScope,
  RewindStatus,
  RewindSuccess,
} from './conversation/rewind-result.js';
export type { TranscriptMessage } from './conversation/transcript.js';
export type { ToolCallWrites } from './session/session-state.js';
export type { CheckpointManagerOptions } from './options.js';
export type { SessionOption } from './session-option.js';
export { RewindableError, RewindableErrorCode } from './errors.js';
export type { RewindableErrorDetails, RewindableErrorDetailsOf, RewindableErrorOptions } from './errors.js';
export type { RewindFileChange, RewindFilesReady, RewindFilesRefused, RewindFilesResult } from './rewind/result.js';
export type { SkippedPath, SkipReason } from './rewind/safety.js';
export type { FileMerge, LineRange, MergeConflict } from './rewind/file-merge.js';
export type { RewindConflictChoice } from './rewind/rewind-choice.js';
export type { RevertConflictChoice } from './rewind/undo-on-top.js';
export type { InterruptedRewind } from './rewind/recover-rewinds.js';
export { filesystemStorage } from './store/filesystem/filesystem-storage.js';
export { defaultStoreDirectory } from './store/default-store-directory.js';
export type { Durability, FilesystemStorage, FilesystemStorageOptions } from './store/filesystem/filesystem-storage.js';
export type {
  AppendOptions,
  BlobWrite,
  SessionKey,
  StorageAdapter,
  StorageLock,
  StoreEntry,
  StoredSessionInfo,
} from './store/storage-adapter.js';
export type { StorageAdapterV1 } from './store/storage-adapter-v1.js';
export { encodeProjectKey } from './paths.js';
export { listSessions } from './session/list-sessions.js';
export type { ListSessionsOptions, SessionSummary, StoreLocation } from './session/list-sessions.js';
export { cleanup } from './store/cleanup.js';
export type { CleanupOptions, CleanupResult } from './store/cleanup.js';
export type { DiffOptions, FileChangeDiff, FileDiff, FileSide, FileSkipDiff, PatchHunk } from './diff/diff-files.js';
export {
  createTools,
  defaultMaxContentBytes,
  editFile,
  editInputSchema,
  editNotebook,
  notebookEditInputSchema,
  trackTool,
  writeFile,
  writeInputSchema,
} from './tools/index.js';
export type {
  ChangeSummary,
  EditInput,
  EditResult,
  ManagerTools,
  NotebookEditInput,
  NotebookEditResult,
  PathField,
  PathSelector,
  ToolCallContext,
  ToolExecutor,
  ToolManager,
  ToolOptions,
  TrackToolOptions,
  WriteInput,
  WriteNotRecordedWarning,
  WriteResult,
  WriteWarningHandler,
} from './tools/index.js';
export type { CaptureOptions } from './capture/capture-options.js';
export type { CommandChanges, ScanReport } from './capture/capture-scan.js';
export type { FullScanReason } from './capture/journal/scope-journal.js';
export { startTimelineServer } from './ui/timeline-server.js';
export type { TimelineServer, TimelineServerOptions } from './ui/timeline-server.js';
