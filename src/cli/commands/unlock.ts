import fs from 'node:fs';
import path from 'node:path';
import { RewindableError, RewindableErrorCode } from '../../errors.js';
import { encodeProjectKey } from '../../paths.js';
import { isProjectKey } from '../../rewind/pending-rewind-note.js';
import { asStoreError } from '../../session/list-sessions.js';
import { filesystemStorage, type FilesystemStorage } from '../../store/filesystem/filesystem-storage.js';
import type { SessionLockHolder } from '../../store/filesystem/session-lock.js';
import { flagValue, stringValue, type Command, type Invocation } from '../command.js';
import { findSession, idPattern } from '../find-session.js';
import { ExitCode, UsageError } from '../exit-codes.js';
import { formatTime } from '../format.js';
import { unlockOutputSchema, type UnlockOutput } from '../output-schemas.js';
import type { Output } from '../output.js';

const risk = 'two writers on one session lose backups';

export const unlockCommand: Command = {
  name: 'unlock',
  description:
    'Shows which process holds the lock of SESSION: its pid and host, since when, and until when its lease runs. ' +
    'A lock whose holder is gone (a process of this host that died, or a lock of another host whose lease ran out) ' +
    "is removed, as the next process to open the session would. A live holder's lock is removed only with --force. " +
    `Use --force only when that holder is gone for good (a renamed container, a host that no longer exists, a copied store): ${risk}. ` +
    "A holder still running gets SESSION_LOCKED on its next write, but a write already under way can still land beside a new writer's.",
  positionals: { required: ['SESSION'] },
  options: {
    force: { type: 'boolean', description: `Remove the lock even though its holder looks alive (${risk}).` },
    cwd: { type: 'string', value: 'DIR', description: 'The project of the session, when sessions of that id are locked in several projects.' },
  },
  examples: ['rewindable unlock 5d3b8e0c-1a2b-4c3d-8e4f-5a6b7c8d9e0f', 'rewindable unlock 5d3b8e0c-1a2b-4c3d-8e4f-5a6b7c8d9e0f --force'],
  async run(invocation) {
    const sessionId = await wholeSessionId(invocation);
    const force = flagValue(invocation, 'force');
    const storage = filesystemStorage({ directory: invocation.storeDir });
    try {
      const cwd = stringValue(invocation, 'cwd');
      const projectKey = cwd !== undefined ? projectKeyOf(path.resolve(invocation.terminal.cwd, cwd)) : await lockedProject(storage, sessionId);
      const key = { projectKey, sessionId };
      const found = await storage.inspectLock(key);
      const remove = found !== undefined && (force || !found.live);
      // The lock removed is the one reported: it may have gone, or changed hands, since it was inspected.
      const removed = remove ? await storage.breakLock(key) : undefined;
      const lock = (remove ? removed : found) ?? null;
      const output: UnlockOutput = { store: invocation.storeDir, sessionId, projectKey, lock, removed: removed !== undefined };
      return report(invocation.out, invocation.json, output);
    } finally {
      await storage.close();
    }
  },
};

/** The session id typed, or the one session whose id it starts (a lock may outlive a log: only a whole id reaches it then). */
async function wholeSessionId(invocation: Invocation): Promise<string> {
  const typed = invocation.positionals[0]!;
  const pattern = idPattern(typed, 'session id');
  if (pattern.whole) return pattern.text;
  const cwd = stringValue(invocation, 'cwd');
  return (await findSession(invocation.storeDir, typed, 'unlock', cwd !== undefined ? path.resolve(invocation.terminal.cwd, cwd) : undefined)).sessionId;
}

function report(out: Output, json: boolean, output: UnlockOutput): ExitCode {
  const refused = output.lock !== null && !output.removed;
  if (json) out.json(unlockOutputSchema, output);
  else if (output.lock === null) out.line(`Session ${output.sessionId} is not locked.`);
  else out.line(`${output.removed ? 'Removed the lock of' : 'Locked:'} session ${output.sessionId}, ${describeHolder(output.lock)}.`);
  if (refused) out.note(`Nothing was changed: the holder looks alive. Pass --force to remove the lock anyway, only if it is gone for good: ${risk}.`);
  return refused ? ExitCode.failure : ExitCode.success;
}

function describeHolder(lock: SessionLockHolder): string {
  const renewal = `last renewed ${formatTime(lock.renewedAt)}, lease until ${formatTime(lock.leaseExpiresAt)}`;
  if (lock.pid === null) return `a lock file that names no process (${renewal})`;
  const state = lock.live ? 'looks alive' : 'is gone';
  return `held by process ${lock.pid} on ${lock.hostname} since ${formatTime(lock.acquiredAt!)} (${renewal}); the holder ${state}`;
}

/** The store's key of a project directory: its real path when it still exists. */
function projectKeyOf(directory: string): string {
  let real = directory;
  try {
    real = fs.realpathSync(directory);
  } catch {
    // Gone (a moved project, a copied store): its path is all there is.
  }
  return encodeProjectKey(real);
}

/** The one project in which the session is locked, or where it lives when it is not locked. */
async function lockedProject(storage: FilesystemStorage, sessionId: string): Promise<string> {
  const projects = await storage.listProjects().catch(asStoreError(`list the projects in the store ${storage.directory}`));
  const locked: string[] = [];
  const logged: string[] = [];
  // A folder whose name is no project key is the store's own (the notes of rewinds in progress).
  for (const projectKey of projects.filter(isProjectKey)) {
    if ((await storage.inspectLock({ projectKey, sessionId })) !== undefined) locked.push(projectKey);
    else if (fs.existsSync(storage.logPath({ projectKey, sessionId }))) logged.push(projectKey);
  }
  if (locked.length > 1) {
    throw new UsageError(`Session ${sessionId} is locked in ${locked.length} projects (${locked.join(', ')}). Pass --cwd with the project directory of the one to unlock.`, 'unlock');
  }
  const found = locked[0] ?? logged[0];
  if (found !== undefined) return found;
  throw new RewindableError(RewindableErrorCode.SESSION_NOT_FOUND, `Session ${sessionId} is not in the store ${storage.directory}. Pass --store if the session lives in another store.`);
}
