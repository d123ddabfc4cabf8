import fs from 'node:fs';
import { RewindableError, RewindableErrorCode } from '../errors.js';
import { encodeProjectKey } from '../paths.js';
import { blobsNamedBy, SessionLog } from '../store/session-log.js';
import type { StorageAdapter } from '../store/storage-adapter.js';
import { now } from './clock.js';
import { SessionState } from './session-state.js';

/**
 * Follows a project that moved. When a session is resumed from a directory
 * it is not stored under, the store is searched for it; if the directory it
 * was recorded in no longer exists, the project was moved, and the session
 * (log and backups) is moved under the new directory's key, with a
 * `project-moved` record. Paths in the log are relative to the project root,
 * so nothing else changes. A session whose directory still exists belongs to
 * that other project and is refused.
 *
 * Returns true when the session was moved here.
 */
export async function relocateSession(storage: StorageAdapter, sessionId: string, newRoot: string): Promise<boolean> {
  const newKey = { projectKey: encodeProjectKey(newRoot), sessionId };
  for (const projectKey of (await storage.listProjects?.()) ?? []) {
    if (projectKey === newKey.projectKey) continue;
    const sessions = await storage.listSessions(projectKey);
    if (!sessions.some((session) => session.sessionId === sessionId)) continue;
    const oldKey = { projectKey, sessionId };
    const loaded = await new SessionLog(storage, oldKey).load();
    if (loaded === null) continue;
    const state = new SessionState(newRoot);
    for (const record of loaded.records) state.apply(record);
    const oldRoot = state.projectPath;
    if (oldRoot === undefined) continue;
    if (fs.existsSync(oldRoot)) {
      throw new RewindableError(
        RewindableErrorCode.PROJECT_MISMATCH,
        `Session ${sessionId} belongs to the project ${oldRoot}, not ${newRoot}. Open it with cwd: ${JSON.stringify(oldRoot)}.`,
        { details: { sessionId, cwd: oldRoot } },
      );
    }
    const lock = await storage.lock?.(oldKey);
    try {
      const named = [...new Set(loaded.records.flatMap(blobsNamedBy))];
      const present = await storage.hasBlobs(newKey, named);
      for (const hash of named) {
        if (present.has(hash)) continue;
        const bytes = await storage.getBlob(oldKey, hash);
        if (bytes !== null) await storage.putBlobs(newKey, [{ hash, bytes }]);
      }
      const entries = (await storage.load(oldKey)) ?? [];
      await storage.append(newKey, [...entries, { type: 'project-moved', from: oldRoot, to: newRoot, at: now() }]);
      await storage.delete(oldKey);
    } finally {
      await lock?.release();
    }
    return true;
  }
  return false;
}
