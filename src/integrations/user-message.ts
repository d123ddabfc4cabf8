import { randomUUID } from 'node:crypto';
import { v5 as uuidv5 } from 'uuid';
import type { CheckpointManager } from '../checkpoint-manager.js';
import { isUuid } from '../paths.js';

/** Namespace of the UUIDs derived from message ids. Fixed forever: the same message id must always give the same checkpoint id. */
const messageIdNamespace = '5b0f3c52-7e0d-4f43-9a51-0c1d2e3f4a5b';

/**
 * The checkpoint id of a message: the message id itself when it is a UUID (in lowercase),
 * otherwise a UUID derived from it (UUID v5), since checkpoint ids are UUIDs
 * and most frameworks' message ids are not (`msg_…`, nanoids). The same
 * message id always gives the same checkpoint id, so a harness can find the
 * checkpoint of any message it shows.
 *
 * @example
 * await manager.rewindFiles(checkpointIdFor(uiMessage.id));
 */
export function checkpointIdFor(messageId: string): string {
  return isUuid(messageId) ? messageId.toLowerCase() : uuidv5(messageId, messageIdNamespace);
}

export interface CheckpointUserMessageOptions {
  /**
   * The message's id in your framework or UI: any string (`checkpointIdFor`
   * turns one that is not a UUID into one).
   * @default the message's own `id` (or `uuid`) field, else a new UUID
   */
  id?: string;
}

/**
 * Call it when a user message arrives, before the agent runs for it: records
 * the message in the session's transcript and takes its checkpoint, keyed by
 * the message's id. A message that has its checkpoint already (the same turn
 * run again, a resumed run) is left alone: taking it again would fold the
 * turn's own edits into the state a rewind goes back to. Resolves to the
 * checkpoint id.
 *
 * @example
 * const checkpointId = await checkpointUserMessage(manager, uiMessage); // an AI SDK UIMessage: keyed by uiMessage.id
 * await checkpointUserMessage(manager, { role: 'user', content: text }, { id: 'msg_01' });
 */
export async function checkpointUserMessage(manager: CheckpointManager, message: unknown, options: CheckpointUserMessageOptions = {}): Promise<string> {
  const messageId = options.id ?? ownIdOf(message);
  const checkpointId = messageId === undefined ? randomUUID() : checkpointIdFor(messageId);
  if (await manager.hasCheckpoint(checkpointId)) return checkpointId;
  await manager.recordUserMessage(message, { uuid: checkpointId });
  return checkpointId;
}

function ownIdOf(message: unknown): string | undefined {
  if (typeof message !== 'object' || message === null) return undefined;
  const { id, uuid } = message as { id?: unknown; uuid?: unknown };
  if (typeof id === 'string' && id !== '') return id;
  if (typeof uuid === 'string' && uuid !== '') return uuid;
  return undefined;
}
