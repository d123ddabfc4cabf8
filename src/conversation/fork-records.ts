import { RewindableError, RewindableErrorCode } from '../errors.js';
import { uuidKey } from '../paths.js';
import type { LogRecord } from '../schemas.js';
import { Transcript } from './transcript.js';

/**
 * The records a fork at `messageUuid` starts with: the source log up to that
 * message (and its checkpoint, for a user message), keeping only the
 * transcript chain that leads to it. File checkpoints are a timeline, not a
 * tree, so every checkpoint, backup and completed rewind up to that point is
 * kept: the fork can rewind to any of them.
 *
 * Files first tracked after the fork point keep their first backup (their
 * state before the agent touched them, hence at the fork point too), attached
 * to the fork's last checkpoint: rewinding the fork to it puts every file the
 * source session touched back as it was there.
 */
export function forkRecords(source: readonly LogRecord[], messageUuid: string): LogRecord[] {
  const messageIndex = source.findIndex((record) => record.type === 'message' && uuidKey(record.uuid) === uuidKey(messageUuid));
  if (messageIndex === -1) {
    throw new RewindableError(RewindableErrorCode.MESSAGE_NOT_FOUND, `Message ${messageUuid} is not in the source session's transcript, so there is nothing to fork from.`, {
      details: { messageUuid },
    });
  }
  const checkpointIndex = source.findIndex((record) => record.type === 'checkpoint' && uuidKey(record.id) === uuidKey(messageUuid));
  const end = Math.max(messageIndex, checkpointIndex);
  const prefix = source.slice(0, end + 1);

  const transcript = new Transcript();
  for (const record of prefix) if (record.type === 'message') transcript.add(record);
  const chain = new Set(transcript.chain(messageUuid).map((message) => message.uuid));
  const finishedRewinds = new Set(prefix.flatMap((record) => (record.type === 'rewind-end' ? [record.rewindId] : [])));

  const lastCheckpoint = prefix.findLast((record) => record.type === 'checkpoint');
  const trackedInPrefix = new Set(prefix.flatMap((record) => (record.type === 'track' ? [record.path] : [])));
  const laterFirstBackups =
    lastCheckpoint?.type !== 'checkpoint'
      ? []
      : source
          .slice(end + 1)
          .filter((record) => record.type === 'track' && !trackedInPrefix.has(record.path))
          .map((record) => ({ ...record, checkpointId: lastCheckpoint.id }) as LogRecord);

  const kept = prefix.filter((record) => {
    switch (record.type) {
      case 'session-start':
      case 'conversation-rewind': // the fork's leaf is the message it starts from
      case 'project-moved':
        return false;
      case 'message':
        return chain.has(uuidKey(record.uuid));
      case 'rewind-begin':
        return finishedRewinds.has(record.rewindId); // an unfinished one belongs to the source's recovery
      default:
        return true;
    }
  });
  return [...kept, ...laterFirstBackups];
}
