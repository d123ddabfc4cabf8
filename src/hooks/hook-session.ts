import fs from 'node:fs';
import type { ScopeJournal } from '../capture/journal/scope-journal.js';
import { RewindableError, RewindableErrorCode } from '../errors.js';
import { noteFilesystemOf } from '../fs/stat-signature.js';
import { canonicalLocation, type PathScope } from '../paths.js';
import { sessionsWithPendingRewinds } from '../rewind/pending-rewind-note.js';
import { Session } from '../session/session.js';
import { filesystemStorage, type FilesystemStorage } from '../store/filesystem/filesystem-storage.js';

/** Largest file a hook backs up, as the library's default `maxFileBytes`. */
const maxFileBytes = 64 * 1024 * 1024;

export interface HookSessionOptions {
  /** The project directory (it must exist). */
  project: string;
  storeDir: string;
  /** The rewindable session (see `rewindableSessionIdOf`). */
  sessionId: string;
  /** Directories outside the project whose files may be backed up too (Claude Code's additional directories). */
  extraRoots: string[];
  /** How long to wait for another process (another hook, a rewind) to let go of the session. */
  lockWaitMs: number;
}

export interface HookSession {
  session: Session;
  scope: PathScope;
  /** The store's files the session writes (log, pack, lock): a resident server compares them between events. */
  storage: FilesystemStorage;
  /** Rolls back a rewind a crash interrupted in this session or another of the project (done by the open too). */
  recover(): Promise<void>;
  /** Releases the lock and the store's open files. */
  close(): Promise<void>;
  /** A resident server's file-watcher journal of the capture scope, while it keeps the session open. */
  journal?: ScopeJournal;
}

/**
 * Opens the session for writing for one hook call, as `CheckpointManager`
 * opens it (durability 'full', an interrupted rewind rolled back first), and
 * creates it on first use. The agent may run hooks in parallel, and the
 * user may run a rewind: while another live process holds the session, the
 * open is retried until `lockWaitMs` has passed, and only then fails with
 * `SESSION_LOCKED`. Every caller holds the lock for one short call.
 */
export async function openHookSession(options: HookSessionOptions): Promise<HookSession> {
  const root = realDirectory(options.project);
  noteFilesystemOf(root);
  const storage = filesystemStorage({ directory: options.storeDir, durability: 'full' });
  const storeDirectory = canonicalLocation(storage.directory);
  const extraRoots = options.extraRoots.map(realDirectory);
  const scope: PathScope = { root, givenRoot: options.project, extraRoots, storeDirectory };
  const open = (sessionId: string, mode: 'create' | 'resume', followMoves = true) =>
    Session.open({ storage, root, sessionId, mode, followMoves, durable: true, maxFileBytes, confinement: { extraRoots, storeDirectory } });
  return await retryWhileLocked(options.lockWaitMs, async () => {
    const session = await openOrCreate(open, options.sessionId);
    const recover = () => recoverRewinds(session, (sessionId) => open(sessionId, 'resume', false));
    try {
      await recover();
    } catch (error) {
      await session.close();
      throw error;
    }
    const close = async () => {
      await session.close();
      await storage.close();
    };
    return { session, scope, storage, recover, close };
  });
}

/**
 * Runs `attempt` until it does not fail with `SESSION_LOCKED`, or until
 * `lockWaitMs` has passed (then its last failure is thrown).
 */
export async function retryWhileLocked<T>(lockWaitMs: number, attempt: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + lockWaitMs;
  let pause = 5;
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      if (!(RewindableError.isInstance(error) && error.code === RewindableErrorCode.SESSION_LOCKED) || Date.now() >= deadline) throw error;
    }
    // Jittered, growing pauses: hooks started together do not retry in step.
    await new Promise((resolve) => setTimeout(resolve, pause + Math.random() * pause));
    pause = Math.min(pause * 2, 100);
  }
}

/**
 * Rolls back a rewind a crash interrupted, in this session or another of the
 * project, as a writable open of the manager does. The rewind machinery is
 * loaded only when there is one: a hook is a new process every time.
 */
async function recoverRewinds(session: Session, open: (sessionId: string) => Promise<Session>): Promise<void> {
  const others = await sessionsWithPendingRewinds(session.log.storage, session.log.key.projectKey).catch(() => []);
  if (session.state.interruptedRewind === undefined && others.length === 0) return;
  const { recoverOtherSessions, recoverSession } = await import('../rewind/recover-rewinds.js');
  await recoverSession(session);
  await recoverOtherSessions(session, open);
}

/** Resumes the session, or creates it; two hooks creating it at once end up in the same one. */
async function openOrCreate(open: (sessionId: string, mode: 'create' | 'resume') => Promise<Session>, sessionId: string): Promise<Session> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await open(sessionId, 'resume');
    } catch (error) {
      if (!(RewindableError.isInstance(error) && error.code === RewindableErrorCode.SESSION_NOT_FOUND)) throw error;
    }
    try {
      return await open(sessionId, 'create');
    } catch (error) {
      if (!(RewindableError.isInstance(error) && error.code === RewindableErrorCode.SESSION_EXISTS) || attempt === 5) throw error;
    }
  }
}

function realDirectory(directory: string): string {
  try {
    const real = fs.realpathSync.native(directory);
    if (fs.statSync(real).isDirectory()) return real;
  } catch {
    // Reported below.
  }
  throw new RewindableError(RewindableErrorCode.CWD_NOT_FOUND, `The directory ${directory} does not exist or is not a directory.`, { details: { path: directory } });
}
