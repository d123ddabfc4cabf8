import path from 'node:path';
import { CheckpointManager } from '../checkpoint-manager.js';
import { assertUuid } from '../paths.js';
import { stringValue, type Invocation } from './command.js';
import { findSession } from './find-session.js';

export interface OpenOptions {
  /** Takes no lock, so listing, diffing and previews work while an agent has the session open. */
  readOnly: boolean;
  /** The command, for the pointer to its help when the session must be named by --cwd. */
  command: string;
}

/**
 * Opens the session named on the command line: in the project of `--cwd`
 * when given, else in the one project of the store that has a session of
 * that id. A real rewind takes the lock and fails with SESSION_LOCKED if
 * another process holds it.
 */
export async function openManager(invocation: Invocation, sessionId: string, options: OpenOptions): Promise<CheckpointManager> {
  assertUuid(sessionId, 'session id');
  const given = stringValue(invocation, 'cwd');
  const cwd = given !== undefined ? path.resolve(invocation.terminal.cwd, given) : (await findSession(invocation.storeDir, sessionId, options.command)).cwd;
  return CheckpointManager.open({ cwd, resume: sessionId, readOnly: options.readOnly, storeDir: invocation.storeDir });
}

/** Runs `work` with the session open, and closes it (releasing any lock) whatever happens. */
export async function withManager<T>(invocation: Invocation, sessionId: string, options: OpenOptions, work: (manager: CheckpointManager) => Promise<T>): Promise<T> {
  const manager = await openManager(invocation, sessionId, options);
  try {
    return await work(manager);
  } finally {
    await manager.close();
  }
}

/** The `--cwd` option of commands that take a SESSION. */
export const projectOption = {
  type: 'string',
  value: 'DIR',
  description: 'The project of the session: needed when sessions of that id are in several projects.',
} as const;
