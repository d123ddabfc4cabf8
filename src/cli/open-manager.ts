import { CheckpointManager } from '../checkpoint-manager.js';
import { findSession } from './find-session.js';

/**
 * Opens a session given only its id. `readOnly` takes no lock, so listing,
 * diffing and previews work while an agent has the session open; a real
 * rewind takes the lock and fails with SESSION_LOCKED if another process
 * holds it.
 */
export async function openManager(storeDir: string, sessionId: string, options: { readOnly: boolean }): Promise<CheckpointManager> {
  const found = await findSession(storeDir, sessionId);
  return CheckpointManager.open({ cwd: found.cwd, resume: found.sessionId, readOnly: options.readOnly, storeDir });
}

/** Runs `work` with the session open, and closes it (releasing any lock) whatever happens. */
export async function withManager<T>(storeDir: string, sessionId: string, options: { readOnly: boolean }, work: (manager: CheckpointManager) => Promise<T>): Promise<T> {
  const manager = await openManager(storeDir, sessionId, options);
  try {
    return await work(manager);
  } finally {
    await manager.close();
  }
}
