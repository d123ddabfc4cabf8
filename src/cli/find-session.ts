import fs from 'node:fs';
import { RewindableError, RewindableErrorCode } from '../errors.js';
import { assertUuid } from '../paths.js';
import { isProjectKey } from '../rewind/pending-rewind-note.js';
import type { LogRecord } from '../schemas.js';
import { asStoreError } from '../session/list-sessions.js';
import { filesystemStorage } from '../store/filesystem/filesystem-storage.js';
import { SessionLog } from '../store/session-log.js';
import { UsageError } from './exit-codes.js';

export interface FoundSession {
  sessionId: string;
  /** The project directory the session belongs to, from its log header. */
  cwd: string;
}

/** Where the session's project is: where it began, or where it last moved to. */
function projectPathOf(records: readonly LogRecord[]): string | undefined {
  let cwd: string | undefined;
  for (const record of records) {
    if (record.type === 'session-start') cwd = record.cwd;
    else if (record.type === 'project-moved') cwd = record.to;
  }
  return cwd;
}

/**
 * Finds which project a session belongs to by looking through the store, so
 * commands need only the session id. The project is read from the log's
 * `session-start` record, or its last `project-moved` record (the store's
 * directory names are lossy encodings). A session id is unique only within
 * its project: when projects here have sessions of that id, none is picked,
 * and `command` is told to name one with --cwd.
 */
export async function findSession(storeDir: string, sessionId: string, command: string): Promise<FoundSession> {
  assertUuid(sessionId, 'session id');
  const storage = filesystemStorage({ directory: storeDir });
  const present = new Set<string>();
  let missingCwd: string | undefined;
  try {
    for (const projectKey of (await storage.listProjects().catch(asStoreError(`list the projects in the store ${storeDir}`))).filter(isProjectKey)) {
      const sessions = await storage.listSessions(projectKey).catch(asStoreError(`list the sessions in the store ${storeDir}`));
      if (!sessions.some((session) => session.sessionId === sessionId)) continue;
      const loaded = await new SessionLog(storage, { projectKey, sessionId }).load();
      const cwd = projectPathOf(loaded?.records ?? []);
      if (cwd === undefined) continue;
      // A session copied to a moved project (another machine's original stays) is stored twice: take the one that is here.
      if (fs.existsSync(cwd)) present.add(cwd);
      else missingCwd ??= cwd;
    }
  } finally {
    await storage.close();
  }
  if (present.size > 1) {
    const projects = [...present].sort();
    throw new UsageError(
      `Session ${sessionId} is in ${projects.length} projects: ${projects.join(', ')}. A session id is unique only within its project: ` +
        'pass --cwd with the project directory of the one you mean.',
      command,
    );
  }
  const [cwd] = present;
  if (cwd !== undefined) return { sessionId, cwd };
  if (missingCwd !== undefined) {
    throw new RewindableError(
      RewindableErrorCode.CWD_NOT_FOUND,
      `Session ${sessionId} belongs to the project ${missingCwd}, which no longer exists. Restore that directory, ` +
        'or if the project moved, resume the session once from its new directory (which moves it there).',
    );
  }
  throw new RewindableError(
    RewindableErrorCode.SESSION_NOT_FOUND,
    `Session ${sessionId} is not in the store ${storeDir}. List a project's sessions with "rewindable sessions --cwd <project>", or pass --store if the session lives in another store.`,
  );
}
