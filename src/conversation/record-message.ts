import { isDeepStrictEqual } from 'node:util';
import { v4 as uuidv4 } from 'uuid';
import { z } from 'zod';
import { RewindableError, RewindableErrorCode } from '../errors.js';
import { canonicalUuid } from '../paths.js';
import type { MessageRecord } from '../schemas.js';
import { now } from '../session/clock.js';
import type { Transcript } from './transcript.js';

/** A message the harness hands over. */
export interface RecordMessageInput {
  /** The message's own type: `user`, `assistant`, `system`, `tool`, or the harness's own. */
  type: string;
  /** The harness's payload: any JSON value (it is stored and returned as is). */
  message: unknown;
  /** Its UUID. @default a new UUID */
  uuid?: string;
  /** The message it follows; `null` starts a new root. @default the active leaf */
  parentUuid?: string | null;
}

const inputSchema = z.object({
  type: z.string().min(1, 'type must be a non-empty string such as "user" or "assistant"'),
  message: z.unknown(),
  uuid: z.string().optional(),
  parentUuid: z.string().nullable().optional(),
});

/**
 * The record for a new message, or `undefined` when a message with that UUID
 * is already stored with the same content (recording twice is idempotent).
 */
export function messageRecordFor(input: RecordMessageInput, transcript: Transcript): MessageRecord | undefined {
  const parsed = inputSchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new RewindableError(RewindableErrorCode.INVALID_MESSAGE, `Invalid message: ${issue.path.join('.') || 'input'}: ${issue.message}.`);
  }
  assertJson(input.message);
  const uuid = canonicalUuid(input.uuid ?? uuidv4(), 'message uuid');
  const parentUuid = input.parentUuid === undefined ? transcript.leaf : input.parentUuid === null ? null : canonicalUuid(input.parentUuid, 'parent message uuid');
  if (parentUuid !== null) {
    if (!transcript.has(parentUuid)) {
      throw new RewindableError(
        RewindableErrorCode.MESSAGE_NOT_FOUND,
        `The parent message ${parentUuid} is not in this session's transcript. Record the parent first, or pass parentUuid: null to start a new root.`,
        { details: { parentUuid } },
      );
    }
  }
  const existing = transcript.get(uuid);
  if (existing !== undefined) {
    if (existing.type === input.type && isDeepStrictEqual(existing.message, jsonCopy(input.message)) && (input.parentUuid === undefined || existing.parentUuid === parentUuid)) {
      return undefined;
    }
    throw new RewindableError(
      RewindableErrorCode.MESSAGE_CONFLICT,
      `Message ${uuid} is already recorded with a different type, content or parent. Recording the same message again is fine; a different one needs a new uuid.`,
      { details: { uuid } },
    );
  }
  return { type: 'message', uuid, parentUuid, role: input.type, timestamp: now(), message: jsonCopy(input.message) };
}

function jsonCopy(value: unknown): unknown {
  return value === undefined ? null : JSON.parse(JSON.stringify(value));
}

function assertJson(value: unknown): void {
  try {
    JSON.stringify(value);
  } catch (error) {
    throw new RewindableError(RewindableErrorCode.INVALID_MESSAGE, `The message payload cannot be stored as JSON: ${(error as Error).message}.`, { cause: error });
  }
}
