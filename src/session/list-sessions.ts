import fs from 'node:fs';
import path from 'node:path';
import { messageText } from '../conversation/transcript.js';
import { RewindableError, RewindableErrorCode } from '../errors.js';
import { encodeProjectKey } from '../paths.js';
import { filesystemStorage } from '../store/filesystem/filesystem-storage.js';
import { SessionLog } from '../store/session-log.js';
import type { StorageAdapter } from '../store/storage-adapter.js';
import { SessionState } from './session-state.js';

export interface StoreLocation {
  /**
   * Directory of the default filesystem store.
   * @default process.env.REWINDABLE_HOME, else `~/.rewindable`
   */
  storeDir?: string;
  /** Any storage adapter instead of the filesystem store. */
  storage?: StorageAdapter;
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
}

/** Sessions of a project, newest activity first. Opens nothing for writing and takes no locks. */
export async function listSessions(options: ListSessionsOptions): Promise<SessionSummary[]> {
  let root: string;
  try {
    root = fs.realpathSync.native(path.resolve(options.cwd));
  } catch {
    throw new RewindableError(RewindableErrorCode.CWD_NOT_FOUND, `The directory ${options.cwd} does not exist.`);
  }
  const { storage, owned } = openStorage(options);
  try {
    const projectKey = encodeProjectKey(root);
    const summaries: SessionSummary[] = [];
    for (const stored of await storage.listSessions(projectKey)) {
      const loaded = await new SessionLog(storage, { projectKey, sessionId: stored.sessionId }).load().catch(() => null);
      if (loaded === null) continue;
      const state = new SessionState(root);
      for (const record of loaded.records) state.apply(record);
      // Two project paths can encode to the same key; the header tells them apart.
      if (state.start === undefined || state.projectPath !== root) continue;
      const firstPrompt = messageText(state.transcript.first('user')?.message);
      summaries.push({
        sessionId: stored.sessionId,
        cwd: root,
        createdAt: state.start.createdAt,
        lastActivity: new Date(stored.mtime).toISOString(),
        checkpoints: state.checkpoints.filter((checkpoint) => checkpoint.reason === 'message').length,
        trackedFiles: state.paths.size,
        messages: state.transcript.size,
        ...(firstPrompt !== undefined ? { firstPrompt: firstPrompt.slice(0, 200) } : {}),
        ...(state.start.forkedFrom !== undefined ? { forkedFrom: state.start.forkedFrom } : {}),
        ...(stored.bytes !== undefined ? { bytes: stored.bytes } : {}),
      });
    }
    return summaries.sort((a, b) => (a.lastActivity < b.lastActivity ? 1 : a.lastActivity > b.lastActivity ? -1 : 0));
  } finally {
    if (owned) await storage.close?.();
  }
}

export function openStorage(location: StoreLocation): { storage: StorageAdapter; owned: boolean } {
  return location.storage !== undefined
    ? { storage: location.storage, owned: false }
    : { storage: filesystemStorage({ directory: location.storeDir }), owned: true };
}
