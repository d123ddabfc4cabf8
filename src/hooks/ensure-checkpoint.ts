import { randomUUID } from 'node:crypto';
import type { Session } from '../session/session.js';

/** Hooks installed in the middle of a conversation see a tool call before any prompt: its checkpoint is taken then, without a prompt. */
export async function ensureCheckpoint(session: Session): Promise<void> {
  if (session.state.latestCheckpoint !== undefined) return;
  const checkpoint = await session.prepareCheckpoint(randomUUID());
  await session.append(checkpoint.records, checkpoint.blobs);
}
