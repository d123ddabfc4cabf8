import fs from 'node:fs';
import { RewindableError, RewindableErrorCode } from '../errors.js';
import { assertUuid } from '../paths.js';
import { filesystemStorage } from '../store/filesystem/filesystem-storage.js';
import { SessionLog } from '../store/session-log.js';

export interface FoundSession {
  sessionId: string;
  /** The project directory the session belongs to, from its log header. */
  cwd: string;
}

/**
 * Finds which project a session belongs to by looking through the store, so
 * commands need only the session id. The project is read from the log's
 * `session-start` record (the store's directory names are lossy encodings).
 */
export async function findSession(storeDir: string, sessionId: string): Promise<FoundSession> {
  assertUuid(sessionId, 'session id');
  const storage = filesystemStorage({ directory: storeDir });
  try {
    for (const projectKey of await storage.listProjects()) {
      const sessions = await storage.listSessions(projectKey);
      if (!sessions.some((session) => session.sessionId === sessionId)) continue;
      const loaded = await new SessionLog(storage, { projectKey, sessionId }).load();
      const start = loaded?.records.find((record) => record.type === 'session-start');
      if (start === undefined) continue;
      if (!fs.existsSync(start.cwd)) {
        throw new RewindableError(
          RewindableErrorCode.CWD_NOT_FOUND,
          `Session ${sessionId} belongs to the project ${start.cwd}, which no longer exists. Restore or recreate that directory to use the session.`,
        );
      }
      return { sessionId, cwd: start.cwd };
    }
  } finally {
    await storage.close();
  }
  throw new RewindableError(
    RewindableErrorCode.SESSION_NOT_FOUND,
    `Session ${sessionId} is not in the store ${storeDir}. List a project's sessions with "rewindable sessions --cwd <project>", or pass --store if the session lives in another store.`,
  );
}
