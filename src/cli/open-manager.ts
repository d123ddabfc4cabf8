import path from 'node:path';
import { CheckpointManager } from '../checkpoint-manager.js';
import { stringValue, type Invocation } from './command.js';
import { findCheckpoint, findSession, idPattern, pickCheckpoint, type FoundCheckpoint, type FoundSession } from './find-session.js';

export interface OpenOptions {
  /** Takes no lock, so listing, diffing and previews work while an agent has the session open. */
  readOnly: boolean;
  /** The command, for the pointer to its help when the session must be named by --cwd. */
  command: string;
}

/** The `--cwd` project, resolved against the current directory. */
function givenProject(invocation: Invocation): string | undefined {
  const given = stringValue(invocation, 'cwd');
  return given !== undefined ? path.resolve(invocation.terminal.cwd, given) : undefined;
}

/**
 * The session named on the command line (its id, or the start of it): in
 * the project of `--cwd` when given, else in the one project of the store
 * that has a session of that id.
 */
export async function resolveSession(invocation: Invocation, typed: string, command: string): Promise<FoundSession> {
  const project = givenProject(invocation);
  const pattern = idPattern(typed, 'session id');
  // A whole id with --cwd needs no search: the session opens there, or says why not.
  if (project !== undefined && pattern.whole) return { sessionId: pattern.text, cwd: project };
  return findSession(invocation.storeDir, typed, command, project);
}

/** The checkpoint `typed` names (its id, or the start of it) in the open session. */
export async function resolveCheckpoint(manager: CheckpointManager, typed: string, command: string): Promise<string> {
  const pattern = idPattern(typed, 'checkpoint id');
  // A whole id goes to the library as it is, which tells an unknown id from one of another session.
  if (pattern.whole) return pattern.text;
  return pickCheckpoint(await manager.listCheckpoints(), typed, manager.sessionId, command);
}

/** What `[SESSION] CHECKPOINT` names: with a session, its checkpoint is resolved once it is open; without, the store is searched. */
export async function resolveTarget(invocation: Invocation, typed: { session?: string; checkpoint: string }, command: string): Promise<FoundSession & { checkpoint: string }> {
  if (typed.session !== undefined) return { ...(await resolveSession(invocation, typed.session, command)), checkpoint: typed.checkpoint };
  const project = givenProject(invocation);
  const found: FoundCheckpoint = await findCheckpoint(invocation.storeDir, typed.checkpoint, command, { ...(project !== undefined ? { project } : {}), from: invocation.terminal.cwd });
  return { sessionId: found.sessionId, cwd: found.cwd, checkpoint: found.checkpointId };
}

/** Opens a resolved session. A real rewind takes the lock and fails with SESSION_LOCKED if another process holds it. */
export async function openManager(invocation: Invocation, found: FoundSession, options: OpenOptions): Promise<CheckpointManager> {
  return CheckpointManager.open({ cwd: found.cwd, session: { resume: found.sessionId, readOnly: options.readOnly }, storeDir: invocation.storeDir });
}

/** Runs `work` with the session open, and closes it (releasing any lock) whatever happens. */
export async function withManager<T>(invocation: Invocation, found: FoundSession, options: OpenOptions, work: (manager: CheckpointManager) => Promise<T>): Promise<T> {
  const manager = await openManager(invocation, found, options);
  try {
    return await work(manager);
  } finally {
    await manager.close();
  }
}

/** How `[SESSION] CHECKPOINT` is read, for the help of the commands that take them. */
export const idsParagraph =
  'SESSION and CHECKPOINT are ids, or their first 4 characters or more (as git takes a commit). Without SESSION, the ' +
  "checkpoint's session is found in the store: among the sessions of the project of the current directory (or of --cwd), " +
  'then, without --cwd, of every project.';

/** The `--cwd` option of commands that take a SESSION. */
export const projectOption = {
  type: 'string',
  value: 'DIR',
  description: 'The project of the session: needed when sessions of that id are in several projects.',
} as const;
