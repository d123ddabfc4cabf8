import { v4 as uuidv4 } from 'uuid';
import { resolveCapture, type ResolvedCapture } from './capture/capture-options.js';
import { checkpointWithScan, type CommandChanges, type ScanReport } from './capture/capture-scan.js';
import { checkpointWithJournal, recordCommandChangesWithJournal, scanBeforeCommand } from './capture/journal/journal-scan.js';
import { ScopeJournal } from './capture/journal/scope-journal.js';
import {
  branchSummaries,
  recordMessage,
  recordUserMessage,
  rewindConversation,
  transcriptEntries,
  unstoredMessage,
  userMessageOf,
  type BranchSummary,
  type TranscriptEntry,
} from './conversation/conversation.js';
import { writeFork, type ForkOptions } from './conversation/fork-session.js';
import type { RecordMessageInput } from './conversation/record-message.js';
import type { RewindOptions, RewindPartial, RewindResult, RewindScope, RewindSuccess } from './conversation/rewind-result.js';
import { messageText, type TranscriptMessage } from './conversation/transcript.js';
import { RewindableError, RewindableErrorCode, type RewindableErrorDetailsOf } from './errors.js';
import { noteFilesystemOf } from './fs/stat-signature.js';
import { resolveOptions, type CheckpointManagerOptions, type ResolvedOptions } from './options.js';
import { assertUuid, canonicalLocation, canonicalUuid, canonicalPath, isInside, type PathScope } from './paths.js';
import { diffAgainstCheckpoint, type DiffOptions, type FileDiff } from './diff/diff-files.js';
import { withToolCallIds, type RewindFilesReady, type RewindFilesResult } from './rewind/result.js';
import { recoverOtherSessions, recoverSession, type InterruptedRewind } from './rewind/recover-rewinds.js';
import { revertChoice, rewindChoice, type RewindConflictChoice } from './rewind/rewind-choice.js';
import type { RevertConflictChoice } from './rewind/undo-on-top.js';
import { dryRunRewind, runRewind } from './rewind/transaction.js';
import { findCheckpoint } from './session/find-checkpoint.js';
import { listSessions } from './session/list-sessions.js';
import { recordToolWrite, type RecordWriteOptions } from './session/record-write.js';
import { Session, type SessionOpenOptions } from './session/session.js';
import { sessionChoice } from './session-option.js';
import { trackFirstBackup } from './session/track-edit.js';
import { filesystemStorage } from './store/filesystem/filesystem-storage.js';
import type { StorageAdapter } from './store/storage-adapter.js';
import { createTools, type ManagerTools } from './tools/index.js';
import { toolPort, type TrackedWritePort } from './tools/manager-port.js';
import { SerialQueue } from './util/serial-queue.js';

export type { BranchSummary, ForkOptions, RecordWriteOptions, TranscriptEntry };

export interface RewindFilesOptions {
  /** Report what the rewind would do without writing anything. @default false */
  dryRun?: boolean;
  /** Leave files changed by someone other than the tracked tools alone instead of overwriting them; the same as `onConflict: 'skip'`. @default false */
  skipConflicts?: boolean;
  /**
   * Files changed by someone other than the tracked tools since they last
   * wrote them: `overwrite` them with the checkpoint's version, `skip` them,
   * `merge` (undo only the tools' changes since the checkpoint, keeping the
   * other edit, by a three-way merge; a file whose merge conflicts is left
   * alone and reported as `merge-conflict`), or `markers` (the same, but a
   * conflicting merge is written with conflict markers).
   * @default 'overwrite'
   * @example
   * const preview = await manager.rewindFiles(userMessageId, { dryRun: true, onConflict: 'merge' });
   */
  onConflict?: RewindConflictChoice;
  /**
   * Rewind only these tracked files: paths (relative to the project root, or
   * absolute), directories (every tracked file under them) or globs such as
   * `src/**\/*.ts`. Every other file is left as it is and not counted; the
   * undo point still records every tracked file as it was. An entry that
   * names no tracked file is an `INVALID_PATH` error.
   * @default every tracked file
   * @example
   * await manager.rewindFiles(userMessageId, { paths: ['src/parser.ts', 'test/**'] });
   */
  paths?: readonly string[];
  /**
   * Rewind only these hunks, by the ids `diffFiles` gives them
   * (`hunks[].id`): each is applied to its file as it is now, and the rest of
   * the file stays. An id names the diff it came from, so once its file (or
   * its version at the checkpoint) changes, it matches nothing and the
   * rewind fails with `HUNK_NOT_FOUND` before writing anything.
   * @default every change
   * @example
   * const [file] = await manager.diffFiles(userMessageId, { paths: ['src/app.ts'] });
   * if (file?.action !== 'skip' && file?.hunks) await manager.rewindFiles(userMessageId, { hunks: [file.hunks[0]!.id] });
   */
  hunks?: readonly string[];
}

/** Options of `revertTurn()`. */
export interface RevertTurnOptions {
  /** Report what the revert would do without writing anything. @default false */
  dryRun?: boolean;
  /**
   * A file whose merge conflicts (changed since in the same lines, deleted
   * since, created by the turn and edited since, binary): `skip` leaves it
   * as it is, `markers` writes the merge with conflict markers (a conflict
   * without lines is still left alone), `overwrite` puts back its version
   * from before the turn.
   * @default 'skip'
   */
  onConflict?: RevertConflictChoice;
  /** Revert only these tracked files (paths, directories or globs), as `rewindFiles(id, { paths })`. @default every file the turn changed */
  paths?: readonly string[];
}

export interface CheckpointSummary {
  /** The user message's UUID. */
  id: string;
  createdAt: string;
  /** `message`: taken when a user message arrived. `pre-rewind`: taken automatically so a rewind can be undone. */
  reason: 'message' | 'pre-rewind';
  /** Tracked paths whose state this checkpoint holds. */
  files: string[];
  /** The text of the user message the checkpoint was taken for, when the harness recorded it (`recordUserMessage`). */
  prompt?: string;
}

/**
 * File checkpoints for one agent session in one project.
 *
 * Call `checkpoint(userMessageId)` when a user message arrives, `trackEdit(path)`
 * before a tool changes a file, and `rewindFiles(userMessageId)` to put every
 * tracked file back as it was before that message.
 *
 * @example
 * const manager = new CheckpointManager({ cwd: '/abs/project' });
 * await manager.checkpoint(userMessage.uuid);
 * await manager.trackEdit('src/app.ts');
 * await fs.writeFile('/abs/project/src/app.ts', code);
 * const preview = await manager.rewindFiles(userMessage.uuid, { dryRun: true });
 * await manager.rewindFiles(userMessage.uuid);
 * await manager.close();
 */
export class CheckpointManager {
  /** The session's UUID. */
  readonly sessionId: string;
  private readonly options: ResolvedOptions;
  private readonly scope: PathScope;
  private readonly storage: StorageAdapter | undefined;
  private readonly queue = new SerialQueue();
  private readonly opening: Promise<Session | undefined>;
  private closed = false;
  private boundTools: ManagerTools | undefined;
  private readonly captureScope: ResolvedCapture | undefined;
  private lastScanReport: ScanReport | undefined;
  /** The capture scope's file-watcher journal (`capture.journal`), while the manager is open. */
  private readonly journal: ScopeJournal | undefined;
  private interrupted: InterruptedRewind[] = [];

  /**
   * Validates the options at once (a missing `cwd` or a malformed id throws
   * here) and opens the session in the background; the first call waits for
   * it, and `CheckpointManager.open()` waits at once.
   */
  constructor(options: CheckpointManagerOptions) {
    this.options = resolveOptions(options);
    for (const root of [this.options.root, ...this.options.extraRoots]) noteFilesystemOf(root);
    this.sessionId = this.options.session.id ?? uuidv4();
    this.storage = this.options.enabled
      ? (this.options.storage ?? filesystemStorage({ directory: this.options.storeDir, durability: this.options.durability }))
      : undefined;
    this.scope = {
      root: this.options.root,
      givenRoot: this.options.givenRoot,
      extraRoots: this.options.extraRoots,
      storeDirectory: storeDirectoryOf(this.storage),
    };
    const store = this.scope.storeDirectory;
    if (store !== undefined && (store === this.scope.root || isInside(this.scope.root, store))) {
      // Nothing inside the store is ever tracked: every tool call would fail and every scan would see the session's own files.
      throw new RewindableError(
        RewindableErrorCode.INVALID_OPTIONS,
        `The store directory ${store} holds the project ${this.scope.root}, and nothing inside the store is ever tracked. Keep the store outside the project, or in a folder of its own inside it.`,
        { details: { option: 'storeDir' } },
      );
    }
    this.captureScope = resolveCapture(this.options.capture, this.options.root, this.scope.storeDirectory);
    if (this.captureScope?.journal === true && this.storage !== undefined && this.options.session.mode !== 'read') {
      this.journal = new ScopeJournal(this.options.root, this.captureScope.include);
    }
    this.opening = this.openSession();
    this.opening.catch(() => {}); // surfaced by the first call, never as an unhandled rejection
    // Non-enumerable and not declared: the built-in tools' way in, not part of the manager's public surface.
    Object.defineProperty(this, toolPort, { value: this.trackedWritePort() });
  }

  /** Creates a manager and waits until its session is open (errors surface here). */
  static async open(options: CheckpointManagerOptions): Promise<CheckpointManager> {
    if (sessionChoice(options ?? {}) === 'continue') {
      const { session: _session, continue: _continue, ...rest } = options;
      const [latest] = await listSessions({ cwd: options.cwd, storeDir: options.storeDir, storage: options.storage });
      if (latest === undefined) {
        throw new RewindableError(RewindableErrorCode.SESSION_NOT_FOUND, `There is no session to continue for the project ${options.cwd}. Start one without continue.`);
      }
      return CheckpointManager.open({ ...rest, session: { resume: latest.sessionId } });
    }
    const manager = new CheckpointManager(options);
    await manager.opening;
    return manager;
  }

  /**
   * Starts a new session from a message of an existing one: its transcript up
   * to that message, and every file checkpoint up to it, so the fork can
   * rewind too. The source session is only read.
   *
   * @example
   * const fork = await CheckpointManager.fork({ cwd, fromSession: manager.sessionId, atMessage: userMessageId });
   */
  static async fork(options: ForkOptions): Promise<CheckpointManager> {
    const { fromSession: givenSource, atMessage: givenMessage, sessionId: givenId, ...rest } = options;
    const fromSession = canonicalUuid(givenSource, 'session id to fork');
    const atMessage = canonicalUuid(givenMessage, 'message id to fork at');
    const source = await CheckpointManager.open({ ...rest, session: { resume: fromSession, readOnly: true } });
    const newSessionId = givenId === undefined ? uuidv4() : canonicalUuid(givenId, 'session id of the fork');
    try {
      await writeFork((await source.session())!, newSessionId, atMessage);
    } finally {
      await source.close();
    }
    return CheckpointManager.open({ ...rest, session: { resume: newSessionId } });
  }

  /** Real path of the project root; tracked paths are reported under it. */
  get root(): string {
    return this.options.root;
  }

  /** How durably backups and rewound files are written (see the `durability` option). */
  get durability(): 'full' | 'none' {
    return this.options.durability;
  }

  /** Largest file that is backed up (the `maxFileBytes` option); the built-in tools never write a larger one. */
  get maxFileBytes(): number {
    return this.options.maxFileBytes;
  }

  /**
   * The canonical absolute path rewindable tracks for `filePath` (relative
   * paths resolve against `cwd`; existing directories are replaced by their
   * real paths). Throws the same typed errors as `trackEdit` for paths outside
   * the project or inside the store.
   */
  resolvePath(filePath: string): string {
    return canonicalPath(filePath, this.scope);
  }

  /** The built-in tools (Write, Edit, NotebookEdit) and the wrapper for custom executors, bound to this manager. */
  get tools(): ManagerTools {
    return (this.boundTools ??= createTools(this));
  }

  /**
   * Records the state of every tracked file: call it when a user message
   * arrives, before any tool runs for it. Returns the checkpoint's id (the
   * message's UUID, or a new one when omitted). Calling it again with the
   * latest checkpoint's id refreshes that checkpoint.
   */
  async checkpoint(userMessageId?: string): Promise<string> {
    const id = canonicalUuid(userMessageId ?? uuidv4(), 'user message id');
    const session = await this.writableSession('checkpoint()');
    if (session === undefined) return id;
    return this.queue.run(async () => {
      if (this.captureScope !== undefined) {
        this.lastScanReport =
          this.journal === undefined ? await checkpointWithScan(session, id, this.captureScope) : await checkpointWithJournal(session, id, this.captureScope, this.journal);
        return id;
      }
      const checkpoint = await session.prepareCheckpoint(id);
      if (checkpoint.records.length > 0) await session.append(checkpoint.records, checkpoint.blobs);
      return id;
    });
  }

  /**
   * What the capture scope's scan at the latest `checkpoint()` found: files
   * created, modified and deleted since the previous one, and the files it
   * left out (ignored, over the size cap). Undefined without a capture scope.
   */
  get lastScan(): ScanReport | undefined {
    return this.lastScanReport;
  }

  /**
   * Runs one command (a shell tool) and reports what it changed in the
   * capture scope (the default scope when none is configured). Files it
   * creates are backed up as "absent" in the current checkpoint, so rewinding
   * to it deletes them; files it modifies or deletes are restored from the
   * checkpoint's backups. The command's own result (or error) is passed
   * through; the changes are recorded in the session log either way.
   *
   * @example
   * const { result, changes } = await manager.captureChanges(() => exec('npm run format'), { label: 'npm run format' });
   */
  async captureChanges<T>(command: () => T | Promise<T>, options: { label?: string } = {}): Promise<{ result: T; changes: CommandChanges }> {
    const session = await this.writableSession('captureChanges()');
    if (session === undefined) return { result: await command(), changes: { created: [], modified: [], deleted: [], overCap: [], unreadable: [] } };
    const capture = this.captureScope ?? resolveCapture(true, this.options.root, this.scope.storeDirectory)!;
    const before = await this.queue.run(async () => {
      if (session.state.latestCheckpoint === undefined) {
        throw new RewindableError(RewindableErrorCode.NO_CHECKPOINT, 'captureChanges() was called before any checkpoint. Call checkpoint(userMessageId) when the user message arrives, before tools run.');
      }
      return scanBeforeCommand(session, capture, this.journal);
    });
    let outcome: { ok: true; result: T } | { ok: false; error: unknown };
    try {
      outcome = { ok: true, result: await command() };
    } catch (error) {
      outcome = { ok: false, error };
    }
    const changes = await this.queue.run(() => recordCommandChangesWithJournal(session, capture, this.journal, before, options.label));
    if (!outcome.ok) throw outcome.error;
    return { result: outcome.result, changes };
  }

  /**
   * Backs up a file before a tool changes it: its exact bytes and mode, or the
   * fact that it does not exist. The first call for a path in the session
   * attaches the backup to the current checkpoint; later calls do nothing.
   * Resolves once the backup is durable.
   */
  async trackEdit(filePath: string): Promise<void> {
    const session = await this.writableSession('trackEdit()');
    if (session === undefined) return;
    const absolute = canonicalPath(filePath, this.scope);
    await this.queue.run(() => trackFirstBackup(session, absolute, filePath));
  }

  /**
   * Records what a tool just wrote to a tracked file (its hash, not its
   * bytes), so a later rewind can tell the agent's writes from anyone else's
   * and report conflicts. The built-in tools and adapters call it for you.
   */
  async recordWrite(filePath: string, details: RecordWriteOptions = {}): Promise<void> {
    const session = await this.writableSession('recordWrite()');
    if (session === undefined) return;
    const absolute = canonicalPath(filePath, this.scope);
    await this.queue.run(() => recordToolWrite(session, absolute, details));
  }

  /**
   * Puts every tracked file back as it was when the checkpoint of
   * `userMessageId` was taken: created files deleted, modified files restored,
   * links and moved directories left alone. With `dryRun`, reports the same
   * thing without writing anything.
   *
   * A dry run never throws for a rewind that cannot happen; it returns
   * `{ canRewind: false, error, errorCode }`. A real rewind that cannot happen
   * rejects with a `RewindableError`, so it only ever resolves `canRewind: true`.
   */
  rewindFiles(userMessageId: string, options?: RewindFilesOptions & { dryRun?: false }): Promise<RewindFilesReady>;
  rewindFiles(userMessageId: string, options: RewindFilesOptions): Promise<RewindFilesResult>;
  async rewindFiles(userMessageId: string, options: RewindFilesOptions = {}): Promise<RewindFilesResult> {
    const dryRun = options.dryRun ?? false;
    try {
      const session = await this.sessionToRewind(userMessageId, dryRun);
      return await this.queue.run(() => this.rewindFilesNow(session, userMessageId, dryRun, options));
    } catch (error) {
      if (!dryRun) throw error;
      return { canRewind: false, dryRun, ...refusalOf(error) };
    }
  }

  /**
   * Undoes the file changes of one turn, the one that began with
   * `userMessageId`, and keeps every change made after it: each file the
   * turn changed is merged (base: after the turn; ours: now; theirs: before
   * the turn), as `git revert` does. A file no later change touched simply
   * goes back. The turn ends at the next checkpoint; for the latest turn,
   * what the tools last wrote stands for its end. The result has the shape
   * of `rewindFiles`, with `merge` on each merged file, `merge-conflict` for
   * files left alone, and an `undoCheckpointId` to undo the revert.
   * @example
   * const preview = await manager.revertTurn(userMessageId, { dryRun: true });
   * if (preview.canRewind && preview.conflicts.length === 0) await manager.revertTurn(userMessageId);
   */
  revertTurn(userMessageId: string, options?: RevertTurnOptions & { dryRun?: false }): Promise<RewindFilesReady>;
  revertTurn(userMessageId: string, options: RevertTurnOptions): Promise<RewindFilesResult>;
  async revertTurn(userMessageId: string, options: RevertTurnOptions = {}): Promise<RewindFilesResult> {
    const dryRun = options.dryRun ?? false;
    try {
      const session = await this.sessionToRewind(userMessageId, dryRun);
      return await this.queue.run(async () => {
        const turn = await findCheckpoint(session, userMessageId);
        const choice = revertChoice(session, turn, options, dryRun, `revertTurn(${JSON.stringify(userMessageId)})`);
        const result = await (dryRun ? dryRunRewind(session, turn, choice) : runRewind(session, turn, choice));
        return withToolCallIds(result, callsByFile(session.state.toolCallsDuring(turn.index)));
      });
    } catch (error) {
      if (!dryRun) throw error;
      return { canRewind: false, dryRun, ...refusalOf(error) };
    }
  }

  /**
   * Appends a conversation message to the session log, durably, linked to its
   * parent (by default the active leaf). Recording the same message twice is
   * a no-op. Returns the stored message.
   */
  async recordMessage(input: RecordMessageInput): Promise<TranscriptMessage> {
    const session = await this.writableSession('recordMessage()');
    if (session === undefined) return unstoredMessage(input);
    return this.queue.run(() => recordMessage(session, input));
  }

  /**
   * Records a user message and takes its checkpoint, in one durable append:
   * the checkpoint's id is the message's UUID. Call it when the message
   * arrives, before any tool runs for it.
   */
  async recordUserMessage(message: unknown, options: { uuid?: string; parentUuid?: string | null } = {}): Promise<TranscriptMessage> {
    const session = await this.writableSession('recordUserMessage()');
    if (session === undefined) return unstoredMessage({ type: 'user', message, ...options });
    return this.queue.run(() => recordUserMessage(session, message, options));
  }

  /**
   * The conversation from its first message to the active leaf (or to
   * `leafUuid`), each user message with the files its turn touched.
   */
  async getTranscript(options: { leafUuid?: string } = {}): Promise<TranscriptEntry[]> {
    const session = await this.session();
    if (session === undefined) return [];
    return this.queue.run(async () => transcriptEntries(session.state, options.leafUuid));
  }

  /** Every branch of the conversation (old branches stay after a conversation rewind), oldest first. */
  async listBranches(): Promise<BranchSummary[]> {
    const session = await this.session();
    if (session === undefined) return [];
    return this.queue.run(async () => branchSummaries(session.state));
  }

  /**
   * Rewinds the files, the conversation, or both, to just before a user
   * message. `files` is `rewindFiles`; `conversation` moves the active leaf to
   * the message's parent (nothing is deleted: the old branch stays
   * readable) and returns the messages to show. As with `rewindFiles`, a dry
   * run that cannot happen answers `status: 'rejected'` with `error` and
   * `errorCode`, and a real run that cannot happen rejects with a `RewindableError`.
   */
  rewind(userMessageId: string, options?: RewindOptions & { dryRun?: false }): Promise<RewindSuccess | RewindPartial>;
  rewind(userMessageId: string, options: RewindOptions): Promise<RewindResult>;
  async rewind(userMessageId: string, options: RewindOptions = {}): Promise<RewindResult> {
    const scope: RewindScope = options.scope ?? 'both';
    const dryRun = options.dryRun ?? false;
    try {
      if (!rewindScopes.includes(scope)) {
        throw new RewindableError(RewindableErrorCode.INVALID_OPTIONS, `Unknown rewind scope ${JSON.stringify(scope)}: use 'files', 'conversation' or 'both'.`, {
          details: { option: 'scope' },
        });
      }
      const session = await this.sessionToRewind(userMessageId, dryRun);
      return await this.queue.run(async (): Promise<RewindResult> => {
        const message = scope === 'files' ? undefined : userMessageOf(session.state, userMessageId);
        const files = scope === 'conversation' ? undefined : await this.rewindFilesNow(session, userMessageId, dryRun, options);
        const conversation = message === undefined ? undefined : await rewindConversation(session, message, dryRun);
        const parts = { scope, ...(files ? { files } : {}), ...(conversation ? { conversation } : {}) };
        const failures = files?.skipped ?? [];
        if (dryRun) return { status: 'ready', dryRun, ...parts, ...(failures.length > 0 ? { failures } : {}) };
        return failures.length > 0 ? { status: 'partial', dryRun, ...parts, failures } : { status: 'success', dryRun, ...parts };
      });
    } catch (error) {
      if (!dryRun) throw error;
      return { status: 'rejected', scope, dryRun, ...refusalOf(error) };
    }
  }

  /**
   * Per-file differences between the files now and the checkpoint of
   * `userMessageId`: what a rewind would do to each, as a unified patch.
   */
  async diffFiles(userMessageId: string, options: DiffOptions = {}): Promise<FileDiff[]> {
    const session = await this.sessionToRewind(userMessageId, true);
    return this.queue.run(async () => diffAgainstCheckpoint(session, await findCheckpoint(session, userMessageId), options));
  }

  /**
   * Rewinds of this project that a crash had interrupted, found when this
   * manager opened its session (a writable one), in this session or any
   * other of the project, and what became of each: rolled back, left to the
   * live process that holds its session, or failed (tried again at the next open).
   */
  async interruptedRewinds(): Promise<InterruptedRewind[]> {
    await this.session();
    return [...this.interrupted];
  }

  /** True when the session has a checkpoint with this id (cheap: no files are read). */
  async hasCheckpoint(id: string): Promise<boolean> {
    const session = await this.session();
    return session?.state.checkpointsById.has(id) ?? false;
  }

  /** Checkpoints of the session, oldest first. */
  async listCheckpoints(): Promise<CheckpointSummary[]> {
    const session = await this.session();
    if (session === undefined) return [];
    return this.queue.run(async () =>
      session.state.checkpoints.map((checkpoint) => {
        const prompt = checkpoint.reason === 'message' ? messageText(session.state.transcript.get(checkpoint.id)?.message) : undefined;
        return {
          id: checkpoint.id,
          createdAt: checkpoint.createdAt,
          reason: checkpoint.reason,
          files: session.state.pathsRecordedAt(checkpoint.index).map((tracked) => tracked.path),
          ...(prompt !== undefined ? { prompt } : {}),
        };
      }),
    );
  }

  /** Waits for pending work, releases the session's lock and the store's handles. Further calls throw `CLOSED`. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const session = await this.opening.catch(() => undefined);
    await this.queue.idle();
    this.stopJournal();
    await session?.close();
    if (this.options.storage === undefined) await this.storage?.close?.();
  }

  /** Closes the journal's watchers (the next manager of the session starts its own). */
  private stopJournal(): void {
    this.journal?.stop();
  }

  private async openSession(): Promise<Session | undefined> {
    if (this.storage === undefined) return undefined;
    const open = (sessionId: string, mode: SessionOpenOptions['mode'], followMoves = true) =>
      Session.open({
        storage: this.storage!,
        root: this.options.root,
        sessionId,
        mode,
        followMoves,
        durable: this.options.durability === 'full',
        maxFileBytes: this.options.maxFileBytes,
        confinement: { extraRoots: this.scope.extraRoots, storeDirectory: this.scope.storeDirectory },
      });
    const session = await open(this.sessionId, this.options.session.mode);
    if (this.options.session.mode === 'read') return session;
    try {
      const own = await recoverSession(session);
      // Another session's rewind a crash interrupted is rolled back too: its user may never reopen that session.
      const others = await recoverOtherSessions(session, (sessionId) => open(sessionId, 'resume', false));
      this.interrupted = own === undefined ? others : [own, ...others];
    } catch (error) {
      await session.close();
      throw error;
    }
    return session;
  }

  private session(): Promise<Session | undefined> {
    if (this.closed) {
      return Promise.reject(
        new RewindableError(RewindableErrorCode.CLOSED, `The CheckpointManager of session ${this.sessionId} is closed; create a new one with resume to continue.`),
      );
    }
    return this.opening;
  }

  /** The session a rewind (or its preview, or a diff) of `userMessageId` runs in, after what makes one impossible before any file is read. */
  private async sessionToRewind(userMessageId: string, dryRun: boolean): Promise<Session> {
    if (!this.options.enabled) throw new RewindableError(RewindableErrorCode.NOT_ENABLED, 'File rewinding is not enabled.');
    assertUuid(userMessageId, 'user message id');
    return (dryRun ? await this.session() : await this.writableSession('a real rewind'))!;
  }

  /** The file rewind, run inside the queue. */
  private async rewindFilesNow(session: Session, userMessageId: string, dryRun: boolean, options: Omit<RewindFilesOptions, 'dryRun'>): Promise<RewindFilesReady> {
    const target = await findCheckpoint(session, userMessageId);
    const choice = rewindChoice(session, target, options, dryRun, `rewindFiles(${JSON.stringify(userMessageId)})`);
    const toolCalls = session.state.toolCallsTakenBack(target.index); // before the rewind: its end record changes them
    return withToolCallIds(await (dryRun ? dryRunRewind(session, target, choice) : runRewind(session, target, choice)), toolCalls);
  }

  /** What the built-in tools need beyond the public methods (see tools/manager-port.ts). */
  private trackedWritePort(): TrackedWritePort {
    return {
      trackRead: async (absolute, reading, intended) => {
        const session = await this.writableSession('trackEdit()');
        if (session === undefined) return false;
        return this.queue.run(() => trackFirstBackup(session, absolute, absolute, reading, intended));
      },
      recordResolvedWrite: async (absolute, details) => {
        const session = await this.writableSession('recordWrite()');
        if (session === undefined) return;
        await this.queue.run(() => recordToolWrite(session, absolute, details));
      },
      // A tool writes its temporary file before its backup is stored only where reopening sweeps for it.
      sweepsOnReopen: async (directory) => {
        const session = await this.session();
        return session === undefined || session.state.directoriesOfPaths.has(directory);
      },
    };
  }

  /** The session, once open, unless it is read-only. Not an async function: a tracked Edit asks for it on every call. */
  private writableSession(action: string): Promise<Session | undefined> {
    if (this.options.session.mode !== 'read') return this.session();
    return this.session().then(() => {
      throw new RewindableError(
        RewindableErrorCode.READ_ONLY,
        `Session ${this.sessionId} was opened read-only, so ${action} cannot write to it. Open it without readOnly (it must not be open elsewhere).`,
      );
    });
  }
}

const rewindScopes: readonly string[] = ['files', 'conversation', 'both'] satisfies RewindScope[];

/** What a dry run answers for a rewind that cannot happen: the typed error's message and code. */
/** The tool calls of a turn, by the files they wrote. */
function callsByFile(calls: ReadonlyArray<{ toolCallId: string; files: readonly string[] }>): Map<string, string[]> {
  const byFile = new Map<string, string[]>();
  for (const call of calls) for (const file of call.files) byFile.set(file, [...(byFile.get(file) ?? []), call.toolCallId]);
  return byFile;
}

function refusalOf(error: unknown): { error: string; errorCode: RewindableErrorCode; errorDetails?: RewindableErrorDetailsOf<RewindableErrorCode> } {
  if (RewindableError.isInstance(error)) return { error: error.message, errorCode: error.code, ...(error.details !== undefined ? { errorDetails: error.details } : {}) };
  return { error: String(error), errorCode: RewindableErrorCode.REWIND_FAILED };
}

/** The store's own directory, when it has one, in canonical form (it is never tracked). */
function storeDirectoryOf(storage: StorageAdapter | undefined): string | undefined {
  const directory = (storage as { directory?: unknown } | undefined)?.directory;
  return typeof directory === 'string' ? canonicalLocation(directory) : undefined;
}

