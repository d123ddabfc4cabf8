import fs from 'node:fs';
import path from 'node:path';
import { messageText } from '../conversation/transcript.js';
import { RewindableError, RewindableErrorCode, storeIoError } from '../errors.js';
import { encodeProjectKey, isUuid } from '../paths.js';
import { filesystemStorage } from '../store/filesystem/filesystem-storage.js';
import { SessionLog, type LoadedSession } from '../store/session-log.js';
import type { StorageAdapter, StoredSessionInfo } from '../store/storage-adapter.js';
import { currentStorage, type StorageAdapterV1 } from '../store/storage-adapter-v1.js';
import { SessionState } from './session-state.js';

export interface StoreLocation {
  /**
   * Directory of the default filesystem store.
   * @default process.env.REWINDABLE_HOME, else `~/.rewindable`
   */
  storeDir?: string;
  /** Any storage adapter instead of the filesystem store. */
  storage?: StorageAdapter | StorageAdapterV1;
}

export interface ListSessionsOptions extends StoreLocation {
  /** The project directory whose sessions to list. */
  cwd: string;
}

export interface SessionSummary {
  sessionId: string;
  /** Real path of the project. */
  cwd: string;
  createdAt: string;
  /** Last write to the session, ISO time. */
  lastActivity: string;
  /** Checkpoints taken for user messages (pre-rewind checkpoints not counted). */
  checkpoints: number;
  /** Files tracked in the session. */
  trackedFiles: number;
  /** Messages in the transcript (all branches). */
  messages: number;
  /** The text of the first user message, when the harness recorded one (up to 200 characters). */
  firstPrompt?: string;
  /** Set for a session forked from another. */
  forkedFrom?: { sessionId: string; messageId: string };
  /** Bytes the session occupies on its own, when the store knows. */
  bytes?: number;
  /**
   * Set when the session's log cannot be read: damaged (`LOG_CORRUPT`) or
   * unreadable (`STORE_IO`). Such a session is listed rather than hidden, so
   * its damage is seen; its counts are then 0 and `createdAt` is its last
   * activity, since nothing in the log can be trusted. Opening it throws the
   * same error.
   */
  damaged?: { code: RewindableErrorCode; message: string };
  /**
   * A rewind of this session that a crash interrupted, half done: opening
   * this session, or any other session of the project, for writing rolls it
   * back (see `CheckpointManager#interruptedRewinds`).
   */
  interruptedRewind?: { rewindId: string; target: string; at: string };
}

/** What the CLI needs beyond the summaries: the project's real path, and store entries that are not sessions. */
export interface SessionSurvey {
  /** Real path of the project. */
  root: string;
  sessions: SessionSummary[];
  /** Names the store lists for the project that are not session ids (such as a copy `<id>.backup.jsonl`); ignored. */
  ignored: string[];
}

/** Sessions of a project, newest activity first. Opens nothing for writing and takes no locks. */
export async function listSessions(options: ListSessionsOptions): Promise<SessionSummary[]> {
  return (await surveySessions(options)).sessions;
}

/** `listSessions`, plus what was left out of it. */
export async function surveySessions(options: ListSessionsOptions): Promise<SessionSurvey> {
  const root = projectRoot(options.cwd);
  const { storage, owned } = openStorage(options);
  try {
    const projectKey = encodeProjectKey(root);
    const sessions: SessionSummary[] = [];
    const ignored: string[] = [];
    for (const stored of await storage.listSessions(projectKey).catch(asStoreError(`list the sessions of ${root} in the store`))) {
      // Only `<uuid>` names are sessions; anything else in the project's folder (a user's copy of a log) is not ours.
      if (!isUuid(stored.sessionId)) {
        ignored.push(stored.sessionId);
        continue;
      }
      const summary = await summarize(storage, projectKey, root, stored);
      if (summary !== undefined) sessions.push(summary);
    }
    sessions.sort((a, b) => (a.lastActivity < b.lastActivity ? 1 : a.lastActivity > b.lastActivity ? -1 : 0));
    return { root, sessions, ignored };
  } finally {
    if (owned) await storage.close?.();
  }
}

/** The real path of an existing project directory, or CWD_NOT_FOUND. */
function projectRoot(cwd: string): string {
  let root: string;
  try {
    root = fs.realpathSync.native(path.resolve(cwd));
  } catch {
    throw new RewindableError(RewindableErrorCode.CWD_NOT_FOUND, `The directory ${cwd} does not exist.`);
  }
  if (!fs.statSync(root).isDirectory()) {
    throw new RewindableError(RewindableErrorCode.CWD_NOT_FOUND, `${cwd} is not a directory. Pass the project directory, not a file in it.`);
  }
  return root;
}

/** One session's summary; undefined for a session of another project that shares the key. */
async function summarize(storage: StorageAdapter, projectKey: string, root: string, stored: StoredSessionInfo): Promise<SessionSummary | undefined> {
  const lastActivity = new Date(stored.mtime).toISOString();
  const bytes = stored.bytes !== undefined ? { bytes: stored.bytes } : {};
  let loaded: LoadedSession | null;
  try {
    loaded = await new SessionLog(storage, { projectKey, sessionId: stored.sessionId }).load();
  } catch (error) {
    if (!RewindableError.isInstance(error)) throw error;
    // Hiding it would be a silent failure: the user would believe the session gone. (Its header cannot be read,
    // so a damaged session of another project whose path encodes to the same key is listed here too.)
    const damaged = { code: error.code, message: error.message };
    return { sessionId: stored.sessionId, cwd: root, createdAt: lastActivity, lastActivity, checkpoints: 0, trackedFiles: 0, messages: 0, ...bytes, damaged };
  }
  if (loaded === null) return undefined;
  const state = new SessionState(root);
  for (const record of loaded.records) state.apply(record);
  // Two project paths can encode to the same key; the header tells them apart.
  if (state.start === undefined || state.projectPath !== root) return undefined;
  const firstPrompt = messageText(state.transcript.first('user')?.message);
  return {
    sessionId: stored.sessionId,
    cwd: root,
    createdAt: state.start.createdAt,
    lastActivity,
    checkpoints: state.checkpoints.filter((checkpoint) => checkpoint.reason === 'message').length,
    trackedFiles: state.paths.size,
    messages: state.transcript.size,
    ...(firstPrompt !== undefined ? { firstPrompt: firstPrompt.slice(0, 200) } : {}),
    ...(state.start.forkedFrom !== undefined ? { forkedFrom: state.start.forkedFrom } : {}),
    ...bytes,
    ...(state.interruptedRewind !== undefined
      ? { interruptedRewind: { rewindId: state.interruptedRewind.rewindId, target: state.interruptedRewind.target, at: state.interruptedRewind.at } }
      : {}),
  };
}

/** Any adapter may fail with a raw error (ENOTDIR, EROFS, a driver's); the caller gets a typed one. */
export function asStoreError(action: string): (error: unknown) => never {
  return (error) => {
    throw RewindableError.isInstance(error) ? error : storeIoError(action, error);
  };
}

export function openStorage(location: StoreLocation): { storage: StorageAdapter; owned: boolean } {
  return location.storage !== undefined
    ? { storage: currentStorage(location.storage), owned: false }
    : { storage: filesystemStorage({ directory: location.storeDir }), owned: true };
}
