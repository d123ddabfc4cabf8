import fs from 'node:fs';
import path from 'node:path';
import { RewindableError, RewindableErrorCode } from '../errors.js';
import { encodeProjectKey, isUuid } from '../paths.js';
import { isProjectKey } from '../rewind/pending-rewind-note.js';
import type { LogRecord } from '../schemas.js';
import { asStoreError } from '../session/list-sessions.js';
import { filesystemStorage, type FilesystemStorage } from '../store/filesystem/filesystem-storage.js';
import { SessionLog } from '../store/session-log.js';
import { UsageError } from './exit-codes.js';

/** The fewest characters of an id the CLI accepts in its place, as git takes for a commit. */
export const minimumIdPrefix = 4;

export interface FoundSession {
  sessionId: string;
  /** The project directory the session belongs to, from its log header. */
  cwd: string;
}

export interface FoundCheckpoint extends FoundSession {
  checkpointId: string;
}

/** A checkpoint of a stored session, as its log records it. */
export interface StoredCheckpoint {
  id: string;
  reason: 'message' | 'pre-rewind';
}

/** A session of the store, read from its log. */
interface StoredSession {
  sessionId: string;
  /** Where its project is: where it began, or where it last moved to. */
  cwd: string;
  checkpoints: StoredCheckpoint[];
}

/** An id as typed: a whole UUID, or the start of one (at least `minimumIdPrefix` characters). */
export interface IdPattern {
  text: string;
  whole: boolean;
  matches(id: string): boolean;
}

/** Hyphens where a UUID has them (after characters 8, 12, 16 and 20 of its hex digits), hex digits elsewhere. */
const uuidShape = 'hhhhhhhh-hhhh-hhhh-hhhh-hhhhhhhhhhhh';

function startsLikeUuid(text: string): boolean {
  return text.length <= uuidShape.length && [...text].every((character, index) => (uuidShape[index] === '-' ? character === '-' : /[0-9a-f]/.test(character)));
}

/** What the user typed for an id, checked: any case, hyphens where the UUID has them. */
export function idPattern(typed: string, what: string): IdPattern {
  const text = typed.toLowerCase();
  if (isUuid(text as unknown)) return { text, whole: true, matches: (id) => id.toLowerCase() === text };
  if (!startsLikeUuid(text)) {
    throw new RewindableError(
      RewindableErrorCode.INVALID_ID,
      `${JSON.stringify(typed)} is not a valid ${what}: expected a UUID such as "3f0c2a8e-6a1b-4c4e-9f3e-2b7d5c1a9e40", or its first ${minimumIdPrefix} characters or more.`,
      { details: { id: typed } },
    );
  }
  if (text.length < minimumIdPrefix) {
    throw new RewindableError(
      RewindableErrorCode.INVALID_ID,
      `${JSON.stringify(typed)} is too short for a ${what}: give at least ${minimumIdPrefix} of its characters, or the whole UUID.`,
      { details: { id: typed } },
    );
  }
  return { text, whole: false, matches: (id) => id.toLowerCase().startsWith(text) };
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

function checkpointsOf(records: readonly LogRecord[]): StoredCheckpoint[] {
  const seen = new Map<string, StoredCheckpoint>();
  for (const record of records) if (record.type === 'checkpoint' && !seen.has(record.id)) seen.set(record.id, { id: record.id, reason: record.reason });
  return [...seen.values()];
}

/** The store's key of a project directory: its real path when it still exists. */
export function projectKeyOf(directory: string): string {
  let real = directory;
  try {
    real = fs.realpathSync(directory);
  } catch {
    // Gone (a moved project, a copied store): its path is all there is.
  }
  return encodeProjectKey(real);
}

/** Reads the store's sessions: the projects of `projectKeys` (default: all), sessions whose id `wanted` accepts. */
async function storedSessions(
  storage: FilesystemStorage,
  options: { projectKeys?: readonly string[]; wanted: (sessionId: string) => boolean; skipDamaged: boolean },
): Promise<StoredSession[]> {
  const directory = storage.directory;
  const projectKeys = options.projectKeys ?? (await storage.listProjects().catch(asStoreError(`list the projects in the store ${directory}`))).filter(isProjectKey);
  const found: StoredSession[] = [];
  for (const projectKey of projectKeys) {
    const sessions = await storage.listSessions(projectKey).catch(asStoreError(`list the sessions in the store ${directory}`));
    for (const { sessionId } of sessions) {
      if (!isUuid(sessionId) || !options.wanted(sessionId)) continue;
      let records: readonly LogRecord[];
      try {
        records = (await new SessionLog(storage, { projectKey, sessionId }).load())?.records ?? [];
      } catch (error) {
        // A damaged log among the many a checkpoint is looked for in is not the one asked for: its checkpoints are unknown.
        if (options.skipDamaged && RewindableError.isInstance(error)) continue;
        throw error;
      }
      const cwd = projectPathOf(records);
      if (cwd !== undefined) found.push({ sessionId, cwd, checkpoints: checkpointsOf(records) });
    }
  }
  return found;
}

/**
 * The project of the current directory, as git finds its repository: the
 * nearest directory, from `start` up, that is a project with sessions in the
 * store (its sessions' logs say it is, since the store's names are lossy).
 */
export async function enclosingProject(storeDir: string, start: string): Promise<string | undefined> {
  const storage = filesystemStorage({ directory: storeDir });
  try {
    return (await findEnclosingProject(storage, start))?.directory;
  } finally {
    await storage.close();
  }
}

/** `enclosingProject`, with the sessions stored under its key, read on the way (a checkpoint is looked for there first). */
async function findEnclosingProject(storage: FilesystemStorage, start: string): Promise<{ directory: string; projectKey: string; sessions: StoredSession[] } | undefined> {
  let directory: string;
  try {
    directory = fs.realpathSync.native(path.resolve(start));
    if (!fs.statSync(directory).isDirectory()) return undefined;
  } catch {
    return undefined;
  }
  for (;;) {
    const projectKey = encodeProjectKey(directory);
    const sessions = await storedSessions(storage, { projectKeys: [projectKey], wanted: () => true, skipDamaged: true });
    if (sessions.some((session) => session.cwd === directory)) return { directory, projectKey, sessions };
    const parent = path.dirname(directory);
    if (parent === directory) return undefined;
    directory = parent;
  }
}

/**
 * The one session `typed` names (its id or the start of it), and its
 * project. The project is read from the log's `session-start` record, or its
 * last `project-moved` record (the store's directory names are lossy
 * encodings). A session id is unique only within its project: when projects
 * here have sessions of that id, none is picked, and `command` is told to
 * name one with --cwd. `project` limits the search to that project.
 */
export async function findSession(storeDir: string, typed: string, command: string, project?: string): Promise<FoundSession> {
  const pattern = idPattern(typed, 'session id');
  const storage = filesystemStorage({ directory: storeDir });
  let sessions: StoredSession[];
  try {
    sessions = await storedSessions(storage, { ...(project !== undefined ? { projectKeys: [projectKeyOf(project)] } : {}), wanted: pattern.matches, skipDamaged: false });
  } finally {
    await storage.close();
  }
  const ids = [...new Set(sessions.map((session) => session.sessionId))].sort();
  if (ids.length > 1) {
    throw new UsageError(
      `Session id ${typed} is ambiguous: it is the start of ${ids.length} sessions:\n${ids.map((id) => `  ${id}  ${sessions.find((session) => session.sessionId === id)!.cwd}`).join('\n')}\n` +
        'Give more of its characters.',
      command,
    );
  }
  const sessionId = ids[0] ?? (pattern.whole ? pattern.text : typed);
  const cwd = presentProject(sessionId, sessions, command);
  if (cwd !== undefined) return { sessionId, cwd };
  throw new RewindableError(
    RewindableErrorCode.SESSION_NOT_FOUND,
    `${pattern.whole ? `Session ${typed} is not` : `No session id starting with ${typed} is`} in the store ${storeDir}${project !== undefined ? ` for ${project}` : ''}. ` +
      'List a project\'s sessions with "rewindable sessions --cwd <project>", or pass --store if the session lives in another store.',
  );
}

/** The one project directory, still here, of the copies of a session; undefined when there is no copy. */
function presentProject(sessionId: string, sessions: readonly StoredSession[], command: string): string | undefined {
  const copies = sessions.filter((session) => session.sessionId === sessionId);
  // A session copied to a moved project (another machine's original stays) is stored twice: take the one that is here.
  const present = [...new Set(copies.map((session) => session.cwd).filter((cwd) => fs.existsSync(cwd)))].sort();
  if (present.length > 1) {
    throw new UsageError(
      `Session ${sessionId} is in ${present.length} projects: ${present.join(', ')}. A session id is unique only within its project: ` +
        'pass --cwd with the project directory of the one you mean.',
      command,
    );
  }
  if (present[0] !== undefined) return present[0];
  if (copies[0] !== undefined) {
    throw new RewindableError(
      RewindableErrorCode.CWD_NOT_FOUND,
      `Session ${sessionId} belongs to the project ${copies[0].cwd}, which no longer exists. Restore that directory, ` +
        'or if the project moved, resume the session once from its new directory (which moves it there).',
    );
  }
  return undefined;
}

/** The checkpoint of a session `typed` names (its id or the start of it): an ambiguous start names the candidates. */
export function pickCheckpoint(checkpoints: readonly StoredCheckpoint[], typed: string, sessionId: string, command: string): string {
  const pattern = idPattern(typed, 'checkpoint id');
  if (pattern.whole) return pattern.text;
  const matching = checkpoints.filter((checkpoint) => pattern.matches(checkpoint.id));
  if (matching.length > 1) {
    throw new UsageError(
      `Checkpoint id ${typed} is ambiguous: it is the start of ${matching.length} checkpoints of session ${sessionId}:\n` +
        `${matching.map((checkpoint) => `  ${checkpoint.id}  ${kindOf(checkpoint.reason)}`).join('\n')}\nGive more of its characters.`,
      command,
    );
  }
  if (matching[0] !== undefined) return matching[0].id;
  throw new RewindableError(RewindableErrorCode.CHECKPOINT_NOT_FOUND, `No checkpoint id starting with ${typed} is in session ${sessionId}. List them with "rewindable checkpoints ${sessionId}".`, {
    details: { id: typed },
  });
}

export function kindOf(reason: StoredCheckpoint['reason']): string {
  return reason === 'message' ? 'message' : 'undo point';
}

/**
 * The session and checkpoint a checkpoint id (or the start of one) names,
 * when no session is given. With `project` (--cwd), only that project's
 * sessions are searched. Without it, the project of the current directory
 * (see `enclosingProject`) is searched first, then, if it has no such
 * checkpoint, every project of the store. A checkpoint found in several
 * sessions (a forked session shares its parent's) is an error naming them.
 */
export async function findCheckpoint(storeDir: string, typed: string, command: string, where: { project?: string; from: string }): Promise<FoundCheckpoint> {
  const pattern = idPattern(typed, 'checkpoint id');
  const holding = (sessions: readonly StoredSession[]) => sessions.filter((session) => session.checkpoints.some((checkpoint) => pattern.matches(checkpoint.id)));
  const storage = filesystemStorage({ directory: storeDir });
  try {
    let sessions: StoredSession[];
    if (where.project !== undefined) sessions = holding(await storedSessions(storage, { projectKeys: [projectKeyOf(where.project)], wanted: () => true, skipDamaged: true }));
    else {
      // The current directory's project first, from the sessions read to find it; then every other project.
      const enclosing = await findEnclosingProject(storage, where.from);
      sessions = holding(enclosing?.sessions ?? []);
      if (sessions.length === 0) {
        const projectKeys = (await storage.listProjects().catch(asStoreError(`list the projects in the store ${storeDir}`))).filter((key) => isProjectKey(key) && key !== enclosing?.projectKey);
        sessions = holding(await storedSessions(storage, { projectKeys, wanted: () => true, skipDamaged: true }));
      }
    }
    if (sessions.length > 0) return checkpointIn(sessions, typed, pattern, command);
  } finally {
    await storage.close();
  }
  throw new RewindableError(
    RewindableErrorCode.CHECKPOINT_NOT_FOUND,
    `${pattern.whole ? `Checkpoint ${typed} is not` : `No checkpoint id starting with ${typed} is`} in any session of ` +
      `${where.project !== undefined ? `${where.project} in ` : ''}the store ${storeDir}. List a session's checkpoints with "rewindable checkpoints SESSION".`,
    { details: { id: typed } },
  );
}

function checkpointIn(sessions: readonly StoredSession[], typed: string, pattern: IdPattern, command: string): FoundCheckpoint {
  const sessionIds = [...new Set(sessions.map((session) => session.sessionId))].sort();
  if (sessionIds.length > 1) {
    const lines = sessionIds.map((sessionId) => {
      const session = sessions.find((candidate) => candidate.sessionId === sessionId)!;
      const ids = session.checkpoints.filter((checkpoint) => pattern.matches(checkpoint.id)).map((checkpoint) => checkpoint.id);
      return `  session ${sessionId} (${session.cwd}): ${ids.join(', ')}`;
    });
    throw new UsageError(
      `Checkpoint id ${typed} is in ${sessionIds.length} sessions:\n${lines.join('\n')}\n` + `Name the session: rewindable ${command} SESSION ${typed}`,
      command,
    );
  }
  const sessionId = sessionIds[0]!;
  const cwd = presentProject(sessionId, sessions, command)!;
  const checkpoints = sessions.find((session) => session.sessionId === sessionId && session.cwd === cwd)!.checkpoints;
  const checkpointId = pickCheckpoint(checkpoints, typed, sessionId, command);
  return { sessionId, cwd, checkpointId };
}

/** Whether `typed` is an id (or the start of one) of a session of the store, or of `project`. Only names are listed: no log is read. */
export async function namesSession(storeDir: string, typed: string, project?: string): Promise<boolean> {
  let pattern: IdPattern;
  try {
    pattern = idPattern(typed, 'session id');
  } catch {
    return false;
  }
  const storage = filesystemStorage({ directory: storeDir });
  try {
    const projectKeys = project !== undefined ? [projectKeyOf(project)] : (await storage.listProjects().catch(asStoreError(`list the projects in the store ${storeDir}`))).filter(isProjectKey);
    for (const projectKey of projectKeys) {
      const sessions = await storage.listSessions(projectKey).catch(asStoreError(`list the sessions in the store ${storeDir}`));
      if (sessions.some((session) => isUuid(session.sessionId) && pattern.matches(session.sessionId))) return true;
    }
    return false;
  } finally {
    await storage.close();
  }
}

