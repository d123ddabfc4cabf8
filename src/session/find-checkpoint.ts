import { RewindableError, RewindableErrorCode } from '../errors.js';
import { isUuid, uuidKey } from '../paths.js';
import { SessionLog } from '../store/session-log.js';
import type { CheckpointInfo } from './session-state.js';
import type { Session } from './session.js';

export const checkpointNotFoundMessage = 'No file checkpoint found for this message.';

/**
 * The session's checkpoint with this id, or a typed error that tells an
 * unknown id apart from a checkpoint of another session of the same project.
 */
export async function findCheckpoint(session: Session, id: string): Promise<CheckpointInfo> {
  const checkpoint = session.state.checkpointsById.get(id);
  if (checkpoint !== undefined) return checkpoint;
  const { storage, key } = session.log;
  try {
    for (const other of await storage.listSessions(key.projectKey)) {
      if (other.sessionId === key.sessionId || !isUuid(other.sessionId)) continue;
      const loaded = await new SessionLog(storage, { projectKey: key.projectKey, sessionId: other.sessionId }).load().catch(() => null);
      if (loaded?.records.some((record) => record.type === 'checkpoint' && uuidKey(record.id) === uuidKey(id))) {
        throw new RewindableError(
          RewindableErrorCode.CHECKPOINT_IN_OTHER_SESSION,
          `${checkpointNotFoundMessage} Message ${id} is a checkpoint of session ${other.sessionId} of this project, not of session ${key.sessionId}; open that session with resume to rewind to it.`,
          { details: { id, sessionId: other.sessionId } },
        );
      }
    }
  } catch (error) {
    if (RewindableError.isInstance(error) && error.code === RewindableErrorCode.CHECKPOINT_IN_OTHER_SESSION) throw error;
    // Looking through other sessions is a courtesy; the plain answer stands.
  }
  throw new RewindableError(RewindableErrorCode.CHECKPOINT_NOT_FOUND, checkpointNotFoundMessage, { details: { id } });
}
