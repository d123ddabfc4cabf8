import { v4 as uuidv4 } from 'uuid';
import { RewindableError, RewindableErrorCode } from '../errors.js';
import type { SessionState, ToolCallWrites } from '../session/session-state.js';
import type { Session } from '../session/session.js';
import { now } from '../session/clock.js';
import { messageRecordFor, type RecordMessageInput } from './record-message.js';
import type { TranscriptMessage } from './transcript.js';

/** A transcript message, with the files its turn touched (user messages with a checkpoint). */
export interface TranscriptEntry extends TranscriptMessage {
  files?: string[];
  /** The tool calls of its turn that were recorded with an id, in the order they first wrote, each with the files it wrote (user messages with a checkpoint). */
  toolCalls?: ToolCallWrites[];
}

export interface BranchSummary {
  /** The last message of the branch. */
  leafUuid: string;
  /** True when this leaf is the active leaf. (Right after a conversation rewind the active leaf is an earlier message, and no branch is active.) */
  active: boolean;
  /** Messages from the root to the leaf. */
  length: number;
  lastTimestamp: string;
}

/** Appends a message (a no-op when the same message is already recorded); returns it as stored. */
export async function recordMessage(session: Session, input: RecordMessageInput): Promise<TranscriptMessage> {
  const record = messageRecordFor(input, session.state.transcript);
  if (record !== undefined) await session.append([record]);
  return session.state.transcript.get(record?.uuid ?? input.uuid!)!;
}

/** Appends a user message and its checkpoint (id = the message's UUID) in one durable append. */
export async function recordUserMessage(session: Session, message: unknown, options: { uuid?: string; parentUuid?: string | null }): Promise<TranscriptMessage> {
  const record = messageRecordFor({ type: 'user', message, ...options }, session.state.transcript);
  const uuid = record?.uuid ?? options.uuid!;
  const checkpoint = await session.prepareCheckpoint(uuid);
  await session.append([...(record !== undefined ? [record] : []), ...checkpoint.records], checkpoint.blobs);
  return session.state.transcript.get(uuid)!;
}

/** With `enabled: false` nothing is stored; the caller still gets the message back. */
export function unstoredMessage(input: RecordMessageInput): TranscriptMessage {
  return { uuid: input.uuid ?? uuidv4(), parentUuid: input.parentUuid ?? null, type: input.type, timestamp: now(), message: input.message };
}

/** The chain from the root to `leafUuid` (default: the active leaf), with the files each user turn touched. */
export function transcriptEntries(state: SessionState, leafUuid: string | undefined): TranscriptEntry[] {
  if (leafUuid !== undefined && !state.transcript.has(leafUuid)) {
    throw new RewindableError(RewindableErrorCode.MESSAGE_NOT_FOUND, `Message ${leafUuid} is not in this session's transcript.`);
  }
  return state.transcript.chain(leafUuid ?? state.transcript.leaf).map((message) => {
    const checkpoint = state.checkpointsById.get(message.uuid);
    return checkpoint === undefined ? { ...message } : { ...message, files: state.touchedDuring(checkpoint.index), toolCalls: state.toolCallsDuring(checkpoint.index) };
  });
}

export function branchSummaries(state: SessionState): BranchSummary[] {
  const { transcript } = state;
  return transcript.leaves().map((leafUuid) => ({
    leafUuid,
    active: leafUuid === transcript.leaf,
    length: transcript.chain(leafUuid).length,
    lastTimestamp: transcript.get(leafUuid)!.timestamp,
  }));
}

/** The user message a conversation rewind goes back before. */
export function userMessageOf(state: SessionState, uuid: string): TranscriptMessage {
  const message = state.transcript.get(uuid);
  if (message === undefined) {
    throw new RewindableError(RewindableErrorCode.MESSAGE_NOT_FOUND, `Message ${uuid} is not in this session's transcript; record messages with recordMessage() or recordUserMessage().`);
  }
  if (message.type !== 'user') {
    throw new RewindableError(RewindableErrorCode.INVALID_MESSAGE, `Message ${uuid} is a ${message.type} message; a conversation rewinds to just before a user message.`);
  }
  return message;
}

/** Moves the active leaf to just before `message` (recorded, unless a dry run); returns what to show. */
export async function rewindConversation(session: Session, message: TranscriptMessage, dryRun: boolean) {
  const leafUuid = message.parentUuid;
  if (!dryRun) await session.append([{ type: 'conversation-rewind', messageUuid: message.uuid, leafUuid, at: now() }]);
  return { leafUuid, messages: session.state.transcript.chain(leafUuid), rewoundMessage: message };
}
